import DeriveLanguage

/// The blend modes that change the layer or the image's size rather than only how their pixels
/// combine: `e_anti_removal` and `fl_cutter`.
extension OperationRunner {
    /// `e_anti_removal[:<level>]`, Derive's approximation of Cloudinary's: the layer displaced
    /// by a smooth random field from a fixed seed (the same distortion every time), by up to
    /// about level/100 × min(width, height)/25 pixels (at least level/100 of a pixel), in waves
    /// about an eighth of the layer apart, so a copy of the watermark does not match it
    /// pixel for pixel. Its edges are drawn in from transparency.
    static func antiRemoval(_ layer: VImage, level: Int) throws(DeriveError) -> VImage {
        let (w, h) = (layer.width, layer.height)
        let amplitude = Double(level) / 100 * max(1, Double(min(w, h)) / 25)
        let cell = max(4, min(w, h) / 8)
        let (gw, gh) = (w / cell + 2, h / cell + 2)
        func noise(seed: Int) throws(DeriveError) -> VImage {
            try VipsCall("gaussnoise").int("width", gw).int("height", gh).double("sigma", 1).double("mean", 0)
                .int("seed", seed).run().image("out")
        }
        let coarse = try VImage.bandjoin([try noise(seed: 16001), try noise(seed: 16002)])
        let smooth = try VipsCall("resize").image("in", coarse).double("scale", Double(w) / Double(gw - 1))
            .double("vscale", Double(h) / Double(gh - 1)).enumeration("kernel", "cubic").run().image("out")
        let field = try smooth.extracted(Rect(x: 0, y: 0, width: min(w, smooth.width), height: min(h, smooth.height)))
            .fitted(to: Size(w, h))
        let grid = try VipsCall("xyz").int("width", w).int("height", h).run().image("out").cast("float")
        let index = try grid.added(try field.linear([amplitude, amplitude], [0, 0], uchar: false))
        let premultiplied = try VipsCall("premultiply").image("in", try layer.withAlpha()).run().image("out")
        let moved = try VipsCall("mapim").image("in", premultiplied).image("index", index).run().image("out")
        return try VipsCall("unpremultiply").image("in", moved).run().image("out").cast("uchar")
    }

    /// `e_displace,fl_layer_apply,x_<px>,y_<px>`, as Cloudinary documents it
    /// (https://cloudinary.com/documentation/reshaping_and_distorting_images, "Displacement
    /// maps"): the layer's red channel moves the image's pixels horizontally and its green
    /// vertically, the blue is ignored. With a positive x_, red 0–127 moves pixels right and
    /// 128–255 left; a negative x_ the other way (green and y_ likewise, down and up). The shift
    /// is proportional: red 0 moves by the whole x_, 255 by the whole x_ the other way, 127.5 not
    /// at all. Where the layer is transparent, and outside it, nothing moves. Each output pixel
    /// is taken (bilinear) from where its shift says, the image's edge pixels repeated beyond it.
    static func displaced(_ base: VImage, by layer: VImage, at origin: (x: Int, y: Int),
                          amount: (x: Int, y: Int)) throws(DeriveError) -> VImage {
        guard amount.x != 0 || amount.y != 0 else { return base }
        let (w, h) = (base.width, base.height)
        // The map's red and green (a grey map's grey for both), each 0 at 127.5, and its alpha.
        let opaque = layer.hasAlpha ? try layer.withoutAlpha() : layer
        let red = try opaque.band(0).cast("float")
        let green = try (opaque.bands >= 3 ? opaque.band(1) : opaque.band(0)).cast("float")
        var field = try VImage.bandjoin([try red.linear([Double(amount.x) / 127.5], [-Double(amount.x)], uchar: false),
                                         try green.linear([Double(amount.y) / 127.5], [-Double(amount.y)], uchar: false)])
        if layer.hasAlpha {
            let alpha = try layer.band(layer.bands - 1).cast("float").linear([1.0 / 255], [0], uchar: false)
            field = try field.multiplied(by: try VImage.bandjoin([alpha, alpha]))
        }
        // The shifts on the image's whole area: zero where the map does not lie.
        let shifts = try VipsCall("embed").image("in", field).int("x", origin.x).int("y", origin.y)
            .int("width", w).int("height", h).enumeration("extend", "black").run().image("out")
        // Where each output pixel is read from, on the image with a margin of its edge pixels.
        let margin = max(abs(amount.x), abs(amount.y)) + 2
        let grid = try VipsCall("xyz").int("width", w).int("height", h).run().image("out").cast("float")
            .linear([1, 1], [Double(margin), Double(margin)], uchar: false)
        let index = try grid.added(shifts)
        let format = base.isEightBit ? "uchar" : "ushort"
        var source = try VipsCall("embed").image("in", base).int("x", margin).int("y", margin)
            .int("width", w + 2 * margin).int("height", h + 2 * margin).enumeration("extend", "copy").run().image("out")
        if base.hasAlpha { source = try VipsCall("premultiply").image("in", source).run().image("out") }
        var moved = try VipsCall("mapim").image("in", source).image("index", index).run().image("out")
        if base.hasAlpha { moved = try VipsCall("unpremultiply").image("in", moved).run().image("out") }
        return try moved.cast(format)
    }

    /// A displacement amount in pixels: as written, or a fraction of the image's side.
    static func pixels(_ length: Length?, of side: Int) throws(DeriveError) -> Int {
        switch length {
        case .pixels(let p)?: return p
        case .fraction(let f)?: return Int((f * Double(side)).rounded())
        case .expression?: throw DeriveError(.internalError, "e_displace: an amount reached the engine unevaluated")
        case nil: return 0
        }
    }

    /// `fl_cutter`: the image under the layer's rectangle (where it lies on the image), kept
    /// where the layer is opaque and transparent where it is not. Cloudinary's documentation
    /// has the layer define "the desired font and size of the resulting delivered image", so
    /// the result is the layer's size, not the image's (e_mask keeps the image's).
    static func cut(_ base: VImage, by layer: VImage, at origin: (x: Int, y: Int)) throws(DeriveError) -> VImage {
        let left = max(0, origin.x), top = max(0, origin.y)
        let right = min(base.width, origin.x + layer.width), bottom = min(base.height, origin.y + layer.height)
        guard right > left, bottom > top else {
            throw DeriveError(.invalidJob, "fl_cutter: the layer lies wholly outside the image, so nothing of it would be kept; place it on the image (g_, x_, y_)")
        }
        let kept = try base.withAlpha().composited(layer, at: origin, mode: "dest-in")
        return try kept.extracted(Rect(x: left, y: top, width: right - left, height: bottom - top))
    }
}
