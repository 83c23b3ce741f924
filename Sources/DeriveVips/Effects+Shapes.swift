import DeriveLanguage

/// The effects that change the image's shape or canvas: e_distort (libvips' mapim samples the
/// image at the point DistortGeometry gives for each output pixel, the map itself drawn lazily by
/// libvips' xyz and arithmetic, so no map is held in memory), e_outline, e_gradient_fade,
/// e_shear, e_shadow and e_dropshadow.
extension Effects {
    static func distorted(_ image: VImage, _ distortion: Distortion) throws(DeriveError) -> VImage {
        switch distortion {
        case .corners(let corners):
            guard let p = DistortGeometry.Perspective(corners: corners, on: image.size) else { return image }
            // Output pixel centres (x + 0.5, y + 0.5, 1) through the inverse homography give
            // (u·w, v·w, w); where w <= 0 the point is beyond the horizon, so off the image.
            let m = p.inverse
            let centres = try VipsCall("bandjoin_const").image("in", try coordinates(p.canvas).linear([1, 1], [0.5, 0.5], uchar: false))
                .doubles("c", [1]).run().image("out")
            let projected = try centres.recombined([[m[0], m[1], m[2]], [m[3], m[4], m[5]], [m[6], m[7], m[8]]], uchar: false)
            let w = try projected.band(2)
            let uv = try VipsCall("divide").image("left", try VImage.bandjoin([try projected.band(0), try projected.band(1)])).image("right", w)
                .run().image("out").linear([1, 1], [-0.5, -0.5], uchar: false)
            let beyond = try uv.linear([0, 0], [-1000, -1000], uchar: false)
            let index = try VipsCall("ifthenelse").image("cond", try w.above(0)).image("in1", uv).image("in2", beyond).run().image("out")
            return try remapped(image, index: index)
        case .arc(let degrees):
            guard let arc = DistortGeometry.Arc(degrees: degrees, on: image.size) else { return image }
            // From the centre: dx across, `up` towards the arc's middle (mirrored for a smile);
            // the angle from the vertical gives u, the distance from the centre v.
            let xy = try coordinates(arc.canvas)
            let h = Double(arc.canvas.height)
            let dx = try xy.band(0).linear([1], [0.5 - arc.centre.x], uchar: false)
            let up = try arc.smile ? xy.band(1).linear([1], [0.5 - (h - arc.centre.y)], uchar: false)
                : xy.band(1).linear([-1], [arc.centre.y - 0.5], uchar: false)
            // libvips' atan2 is in degrees, 0...360: turned to -180...180 about the vertical.
            let angle = try VipsCall("math2").image("left", dx).image("right", up).enumeration("math2", "atan2").run().image("out")
            let signed = try VipsCall("ifthenelse").image("cond", try angle.above(180)).image("in1", try angle.linear([1], [-360], uchar: false))
                .image("in2", angle).run().image("out")
            let w = Double(image.width), ih = Double(image.height)
            let degreesSpan = arc.angle * 180 / .pi
            let u = try signed.linear([w / degreesSpan], [w / 2 - 0.5], uchar: false)
            let radius = try dx.multiplied(by: dx).added(try up.multiplied(by: up)).raised(to: 0.5)
            let k = ih / (arc.outer - arc.inner)
            let v = arc.smile ? try radius.linear([k], [ih - k * arc.outer - 0.5], uchar: false)
                : try radius.linear([-k], [k * arc.outer - 0.5], uchar: false)
            return try remapped(image, index: try VImage.bandjoin([u, v]))
        }
    }

    /// A two-band image of each pixel's x and y (libvips' xyz), as floats.
    static func coordinates(_ size: Size) throws(DeriveError) -> VImage {
        try VipsCall("xyz").int("width", size.width).int("height", size.height).run().image("out").cast("float")
    }

    /// The image sampled at `index` (bilinear; off the image transparent), premultiplied so
    /// the transparent surround does not darken the edges.
    static func remapped(_ image: VImage, index: VImage) throws(DeriveError) -> VImage {
        let rgba = try image.withAlpha()
        let premultiplied = try VipsCall("premultiply").image("in", rgba).run().image("out")
        let sampled = try VipsCall("mapim").image("in", premultiplied).image("index", index)
            .enumeration("extend", "background").doubles("background", Array(repeating: 0, count: rgba.bands))
            .bool("premultiplied", true).run().image("out")
        return try VipsCall("unpremultiply").image("in", sampled).run().image("out").cast("uchar").interpreted(as: rgba.interpretation).inMemory()
    }
}

extension Effects {
    /// e_outline. The shape is the alpha (an opaque image is its rectangle). Grown by `width`
    /// px: a Gaussian of sigma width/2 spreads an edge about two sigmas above 2 % of 255;
    /// shrunk alike from the inside (below 98 %). The outline is the grown shape less the shape
    /// (outer) or the shape less the shrunk one (inner); the fill modes add the holes the shape
    /// encloses (Masks.enclosedHoles), and `fill` the whole grown shape beneath the image. It is
    /// softened by blur/20, in the colour: beneath the image (outer, fill) or over it (inner,
    /// inner_fill).
    static func outlined(_ image: VImage, mode: OutlineMode, width: Int, blur: Int, color: Color) throws(DeriveError) -> VImage {
        let rgba = try image.withAlpha()
        guard let alpha = try rgba.alphaBand() else { return image }
        let sigma = max(0.5, Double(width) / 2)
        let spread = try alpha.gaussianBlurred(sigma: sigma)
        let shape = try alpha.above(127)
        func both(_ a: VImage, _ b: VImage, _ op: String) throws(DeriveError) -> VImage {
            try VipsCall("boolean").image("left", a).image("right", b).enumeration("boolean", op).run().image("out")
        }
        var ring: VImage = switch mode {
        case .outer: try both(spread.above(5), shape.inverted(), "and")
        case .inner, .innerFill: try both(shape, spread.above(250).inverted(), "and")
        case .fill: try spread.above(5)
        }
        if mode.fills {
            let a = try alpha.cast("uchar").pixelBuffer()
            let holes = try VImage.fromPixels(Masks.enclosedHoles(alpha: a.pixels, width: a.width, height: a.height), width: a.width, height: a.height, bands: 1)
            ring = try both(ring, holes, "or")
        }
        if blur > 0 { ring = try ring.gaussianBlurred(sigma: Double(blur) / 20) }
        let opacity = try ring.linear([Double(color.alpha) / 255], [0])
        let plane = try opacity.constant(values: [Double(color.red), Double(color.green), Double(color.blue)]).interpreted(as: "srgb").joined(with: opacity)
        return mode.isInner ? try rgba.composited(plane, at: (0, 0)).inMemory() : try plane.composited(rgba, at: (0, 0)).inMemory()
    }
}

extension Effects {
    /// e_gradient_fade. The faded band: y (default 0.5, the top half) or x, as a fraction of
    /// the side or pixels, negative from the far edge; alpha scaled by Masks.gradientFade. Only
    /// the alpha changes (colours kept, so a faded edge does not darken).
    static func faded(_ image: VImage, strength: Int, symmetric: Bool, x: Length?, y: Length?) throws(DeriveError) -> VImage {
        let vertical = x == nil
        let side = vertical ? image.pageHeight : image.width
        let length = y ?? x ?? .fraction(0.5)
        let band = abs(EffectGeometry.pixels(length, of: side))
        let negative: Bool = switch length {
        case .pixels(let p): p < 0
        case .fraction(let f): f < 0
        case .expression: false
        }
        let mask = try VImage.fromPixels(Masks.gradientFade(width: image.width, height: image.pageHeight, band: band, vertical: vertical,
                                                            fromEnd: negative, symmetric: symmetric, strength: strength),
                                         width: image.width, height: image.pageHeight, bands: 1)
        let rgba = try image.withAlpha()
        guard let alpha = try rgba.alphaBand() else { return image }
        return try rgba.withoutAlpha().joined(with: alpha.multiplied(by: mask).linear([1.0 / 255], [0]))
    }

    /// e_shear: libvips affine with [1, tan x; tan y, 1] onto the bounding box, the corners
    /// transparent; then centred on the planned canvas (they differ by rounding at most).
    static func sheared(_ image: VImage, x: Int, y: Int) throws(DeriveError) -> VImage {
        let g = EffectGeometry.shear(x: x, y: y, on: image.size)
        let rgba = try image.withAlpha()
        let sheared = try VipsCall("affine").image("in", rgba).doubles("matrix", [1, g.tx, g.ty, 1])
            .enumeration("extend", "background").doubles("background", rgba.backgroundValues(.transparent))
            .run().image("out")
        return try sheared.centred(on: g.canvas).inMemory()
    }

    /// e_shadow and e_dropshadow: the image's alpha (its shape; a rectangle when opaque) on the
    /// grown canvas at the shadow's offset, blurred by its sigma (e_shadow's 4 px; none at 0),
    /// scaled to `opacity` (0...1), under a plane of the colour; the image over it.
    static func shadowed(_ image: VImage, _ cast: CastShadow, color: Color, opacity: Double) throws(DeriveError) -> VImage {
        let g = cast.placement(on: image.size)
        let rgba = try image.withAlpha()
        guard let alpha = try rgba.alphaBand() else { return image }
        var shape = try alpha.embedded(at: g.shadow, canvas: g.canvas, background: .black)
        if cast.sigma > 0 { shape = try shape.gaussianBlurred(sigma: cast.sigma) }
        shape = try shape.linear([opacity], [0])
        let plane = try shape.constant(values: [Double(color.red), Double(color.green), Double(color.blue)]).interpreted(as: "srgb")
        return try plane.joined(with: shape).composited(rgba, at: g.image).inMemory()
    }
}
