internal import CVips
internal import CVipsShim
import DeriveLanguage

/// The libvips operations the engine uses, as typed methods. Each returns a new image.
extension VImage {
    /// Resamples to exactly `target` (lanczos3), correcting libvips' rounding by a pixel if needed.
    func resized(to target: Size) throws(DeriveError) -> VImage {
        if size == target { return self }
        let scaled = try VipsCall("resize").image("in", self)
            .double("scale", Double(target.width) / Double(width))
            .double("vscale", Double(target.height) / Double(height))
            .enumeration("kernel", "lanczos3")
            .run().image("out")
        return try scaled.fitted(to: target)
    }

    /// Resamples to exactly `target` with a given libvips kernel (`linear`, `cubic`...), for
    /// working copies where lanczos3's sharpness buys nothing.
    func resampled(to target: Size, kernel: String) throws(DeriveError) -> VImage {
        if size == target { return self }
        return try VipsCall("resize").image("in", self)
            .double("scale", Double(target.width) / Double(width))
            .double("vscale", Double(target.height) / Double(height))
            .enumeration("kernel", kernel)
            .run().image("out").fitted(to: target)
    }

    /// Crops or pads by at most a pixel or two so the size is exactly `target`.
    func fitted(to target: Size) throws(DeriveError) -> VImage {
        if size == target { return self }
        var image = self
        if image.width > target.width || image.height > target.height {
            image = try image.extracted(Rect(x: 0, y: 0, width: min(image.width, target.width), height: min(image.height, target.height)))
        }
        if image.size != target {
            image = try VipsCall("embed").image("in", image).int("x", 0).int("y", 0)
                .int("width", target.width).int("height", target.height).enumeration("extend", "copy")
                .run().image("out")
        }
        return image
    }

    func extracted(_ rect: Rect) throws(DeriveError) -> VImage {
        if rect.x == 0 && rect.y == 0 && rect.size == size { return self }
        return try VipsCall("extract_area").image("input", self)
            .int("left", rect.x).int("top", rect.y).int("width", rect.width).int("height", rect.height)
            .run().image("out")
    }

    /// The most interesting window of `target` size, and where it was cut.
    func smartCropped(to target: Size, strategy: SmartCrop) throws(DeriveError) -> (VImage, Rect) {
        let cropped = try VipsCall("smartcrop").image("input", self)
            .int("width", min(target.width, width)).int("height", min(target.height, height))
            .enumeration("interesting", strategy == .auto ? "attention" : "entropy")
            .run().image("out")
        // smartcrop cuts with extract_area, which records the cut as negative offsets.
        let left = -Int(cropped.pointer.pointee.Xoffset)
        let top = -Int(cropped.pointer.pointee.Yoffset)
        return (cropped, Rect(x: left, y: top, width: cropped.width, height: cropped.height))
    }

    /// The image with `patch` written over it at `origin` (same bands and format).
    func inserted(_ patch: VImage, at origin: (x: Int, y: Int)) throws(DeriveError) -> VImage {
        try VipsCall("insert").image("main", self).image("sub", patch).int("x", origin.x).int("y", origin.y)
            .run().image("out")
    }

    /// Places the image at `origin` on a canvas filled with `background`, adding an alpha band
    /// when the background is not opaque.
    func embedded(at origin: (x: Int, y: Int), canvas: Size, background: Color) throws(DeriveError) -> VImage {
        let image = background.isOpaque ? self : try withAlpha()
        return try VipsCall("embed").image("in", image).int("x", origin.x).int("y", origin.y)
            .int("width", canvas.width).int("height", canvas.height)
            .enumeration("extend", "background").doubles("background", image.backgroundValues(background))
            .run().image("out")
    }

    func flipped(horizontal: Bool) throws(DeriveError) -> VImage {
        try VipsCall("flip").image("in", self).enumeration("direction", horizontal ? "horizontal" : "vertical").run().image("out")
    }

    /// Quarter turns clockwise.
    func turned(quarters: Int) throws(DeriveError) -> VImage {
        let angle: String
        switch ((quarters % 4) + 4) % 4 {
        case 1: angle = "d90"
        case 2: angle = "d180"
        case 3: angle = "d270"
        default: return self
        }
        return try VipsCall("rot").image("in", self).enumeration("angle", angle).run().image("out")
    }

    /// Clockwise by any angle onto exactly `canvas`, corners filled with `background`.
    func rotated(degrees: Double, canvas: Size, background: Color) throws(DeriveError) -> VImage {
        if ResizeGeometry.isRightAngle(degrees) { return try turned(quarters: Int(degrees / 90)) }
        let image = background.isOpaque ? self : try withAlpha()
        // libvips' angles are anticlockwise; the language's are clockwise.
        let turned = try VipsCall("rotate").image("in", image).double("angle", -degrees)
            .doubles("background", image.backgroundValues(background))
            .run().image("out")
        // Centre the result on the planned canvas (they differ by rounding at most).
        let x = (canvas.width - turned.width) / 2, y = (canvas.height - turned.height) / 2
        if x >= 0 && y >= 0 {
            if turned.size == canvas { return turned }
            return try turned.embedded(at: (x, y), canvas: canvas, background: background)
        }
        return try turned.extracted(Rect(x: max(0, -x), y: max(0, -y), width: min(canvas.width, turned.width),
                                         height: min(canvas.height, turned.height))).fitted(to: canvas)
    }

    func gaussianBlurred(sigma: Double) throws(DeriveError) -> VImage {
        try VipsCall("gaussblur").image("in", self).double("sigma", sigma).run().image("out")
    }

    func sharpened(sigma: Double, slope: Double) throws(DeriveError) -> VImage {
        try VipsCall("sharpen").image("in", self).double("sigma", sigma).double("m2", slope).run().image("out")
    }

    func colourspace(_ space: String) throws(DeriveError) -> VImage {
        try VipsCall("colourspace").image("in", self).enumeration("space", space).run().image("out")
    }

    /// `a * pixel + b` per band; `uchar` clips and rounds back to 8 bits.
    func linear(_ a: [Double], _ b: [Double], uchar: Bool = true) throws(DeriveError) -> VImage {
        try VipsCall("linear").image("in", self).doubles("a", a).doubles("b", b).bool("uchar", uchar).run().image("out")
    }

    func recombined(_ matrix: [[Double]], uchar: Bool = true) throws(DeriveError) -> VImage {
        let flat = matrix.flatMap { $0 }
        guard let m = vips_image_new_matrix_from_array(Int32(matrix[0].count), Int32(matrix.count), flat, Int32(flat.count)) else {
            throw DeriveError(.internalError, "could not make a matrix: \(VipsRuntime.takeError())")
        }
        let out = try VipsCall("recomb").image("in", self).image("m", VImage(owning: m)).run().image("out")
        return uchar ? try out.cast("uchar") : out
    }

    /// Every value raised to `exponent` (libvips' `math2_const` pow; the result is float).
    func raised(to exponent: Double) throws(DeriveError) -> VImage {
        try VipsCall("math2_const").image("in", self).enumeration("math2", "pow").doubles("c", [exponent]).run().image("out")
    }

    /// 255 where a value is above `threshold`, 0 elsewhere (libvips' `relational_const` more).
    func above(_ threshold: Double) throws(DeriveError) -> VImage {
        try VipsCall("relational_const").image("in", self).enumeration("relational", "more").doubles("c", [threshold]).run().image("out")
    }

    /// The value below which `percent` % of the pixels lie (libvips' `percent`).
    func percentile(_ percent: Double) throws(DeriveError) -> Int {
        try VipsCall("percent").image("in", self).double("percent", percent).run().int("threshold")
    }

    /// The mean of every value (libvips' `avg`).
    func average() throws(DeriveError) -> Double {
        try VipsCall("avg").image("in", self).run().doubleOutput("out")
    }

    func absolute() throws(DeriveError) -> VImage {
        try VipsCall("abs").image("in", self).run().image("out")
    }

    /// max(v, 0) for every value, as (v + |v|) / 2 (libvips 8.14 has no maximum with a
    /// constant); the result is float.
    func clampedAtZero() throws(DeriveError) -> VImage {
        try added(try absolute()).linear([0.5], [0], uchar: false)
    }

    /// Band `index` alone.
    func band(_ index: Int) throws(DeriveError) -> VImage {
        try VipsCall("extract_band").image("in", self).int("band", index).run().image("out")
    }

    static func bandjoin(_ images: [VImage]) throws(DeriveError) -> VImage {
        try VipsCall("bandjoin").images("in", images).run().image("out")
    }

    func inverted() throws(DeriveError) -> VImage {
        try VipsCall("invert").image("in", self).run().image("out")
    }

    func cast(_ format: String) throws(DeriveError) -> VImage {
        try VipsCall("cast").image("in", self).enumeration("format", format).run().image("out")
    }

    func flattened(on color: Color) throws(DeriveError) -> VImage {
        guard hasAlpha else { return self }
        return try VipsCall("flatten").image("in", self)
            .doubles("background", Array(colorValues(color).prefix(bands - 1)))
            .run().image("out")
    }

    /// Draws `overlay` over this image at `origin`, keeping this image's alpha-ness.
    /// `overlay` drawn at `origin` with a libvips blend mode (`over`, `multiply`, `dest-in`...).
    func composited(_ overlay: VImage, at origin: (x: Int, y: Int), mode: String = "over") throws(DeriveError) -> VImage {
        let base = try matchingBands(for: overlay)
        let top = try overlay.matchingBands(for: base)
        let result = try VipsCall("composite2").image("base", base).image("overlay", top)
            .enumeration("mode", mode).int("x", origin.x).int("y", origin.y)
            .run().image("out").cast("uchar")
        return hasAlpha ? result : try result.withoutAlpha()
    }

    /// The colour bands only (alpha dropped).
    func withoutAlpha() throws(DeriveError) -> VImage {
        guard hasAlpha else { return self }
        return try VipsCall("extract_band").image("in", self).int("band", 0).int("n", bands - 1).run().image("out")
    }

    func alphaBand() throws(DeriveError) -> VImage? {
        guard hasAlpha else { return nil }
        return try VipsCall("extract_band").image("in", self).int("band", bands - 1).run().image("out")
    }

    func withAlpha() throws(DeriveError) -> VImage {
        if hasAlpha { return self }
        return try VipsCall("bandjoin_const").image("in", self).doubles("c", [255]).run().image("out")
    }

    func joined(with other: VImage) throws(DeriveError) -> VImage {
        try VipsCall("bandjoin").images("in", [self, other]).run().image("out")
    }

    /// Applies a colour-only change, leaving an alpha band as it was.
    func changingColour(_ change: (VImage) throws(DeriveError) -> VImage) throws(DeriveError) -> VImage {
        guard let alpha = try alphaBand() else { return try change(self) }
        return try change(try withoutAlpha()).joined(with: alpha)
    }

    /// A plain image of this size in `color` with `bands` bands.
    func constant(_ color: Color, bands count: Int) throws(DeriveError) -> VImage {
        try constant(values: Array(colorValues(color).prefix(count)))
    }

    /// A plain image of this size with one band per value.
    func constant(values: [Double]) throws(DeriveError) -> VImage {
        guard let made = vips_image_new_from_image(pointer, values, Int32(values.count)) else {
            throw DeriveError(.internalError, "could not make a plain image: \(VipsRuntime.takeError())")
        }
        return try VImage(owning: made).cast("uchar")
    }

    /// The same pixels labelled as another colour space.
    func interpreted(as space: String) throws(DeriveError) -> VImage {
        try VipsCall("copy").image("in", self).enumeration("interpretation", space).run().image("out")
    }

    func added(_ other: VImage) throws(DeriveError) -> VImage {
        try VipsCall("add").image("left", self).image("right", other).run().image("out")
    }

    /// `mask ? self : other`, blended by the mask's value (a one-band 0–255 image).
    func blended(with other: VImage, mask: VImage) throws(DeriveError) -> VImage {
        try VipsCall("ifthenelse").image("cond", mask).image("in1", self).image("in2", other).bool("blend", true).run().image("out")
    }

    func multiplied(by other: VImage) throws(DeriveError) -> VImage {
        try VipsCall("multiply").image("left", self).image("right", other).run().image("out")
    }

    func shrunk(by factor: Int) throws(DeriveError) -> VImage {
        try VipsCall("shrink").image("in", self).double("hshrink", Double(factor)).double("vshrink", Double(factor)).run().image("out")
    }

    func zoomed(by factor: Int) throws(DeriveError) -> VImage {
        try VipsCall("zoom").image("input", self).int("xfac", factor).int("yfac", factor).run().image("out")
    }

    /// Where the content is, ignoring a border of `background` within `threshold`.
    func trimBox(threshold: Double, background: Color?) throws(DeriveError) -> Rect {
        var values: [Double]
        if let background {
            values = Array(colorValues(background).prefix(max(1, bands - (hasAlpha ? 1 : 0))))
        } else {
            values = try pixel(x: 0, y: 0).prefix(max(1, bands - (hasAlpha ? 1 : 0))).map { $0 }
        }
        let result = try VipsCall("find_trim").image("in", try withoutAlpha()).double("threshold", threshold)
            .doubles("background", values).run()
        return Rect(x: result.int("left"), y: result.int("top"), width: result.int("width"), height: result.int("height"))
    }

    func pixel(x: Int, y: Int) throws(DeriveError) -> [Double] {
        try extracted(Rect(x: x, y: y, width: 1, height: 1)).cast("uchar").pixelBuffer().pixels.map(Double.init)
    }

    /// Frames of a multi-page image, top to bottom.
    func frames() throws(DeriveError) -> [VImage] {
        guard pages > 1 else { return [self] }
        return try (0..<pages).map { (i) throws(DeriveError) -> VImage in
            try extracted(Rect(x: 0, y: i * pageHeight, width: width, height: pageHeight))
        }
    }

    static func stacked(_ frames: [VImage]) throws(DeriveError) -> VImage {
        guard frames.count > 1 else { return frames[0] }
        return try VipsCall("arrayjoin").images("in", frames).int("across", 1).run().image("out")
    }

    /// Writes the pixels once, so several outputs can read them without decoding again.
    func inMemory() throws(DeriveError) -> VImage {
        guard let copy = vips_image_copy_memory(pointer) else {
            throw DeriveError(.decodeFailed, "could not decode the image: \(VipsRuntime.takeError())")
        }
        return VImage(owning: copy)
    }

    /// 8-bit sRGB (or 8-bit grey), as encoders and the metadata algorithms expect.
    func standardised() throws(DeriveError) -> VImage {
        var image = self
        let space = image.interpretation
        if space != "srgb" && space != "b-w" {
            image = try image.colourspace("srgb")
        }
        if !image.isEightBit {
            image = try image.cast("uchar")
        }
        return image
    }

    /// Colour values for a background on this image: grey images take the colour's luminance.
    func backgroundValues(_ color: Color) -> [Double] {
        let colorBands = hasAlpha ? bands - 1 : bands
        var values = colorBands >= 3 ? Array(colorValues(color).prefix(3)) : [luminance(color)]
        if hasAlpha { values.append(Double(color.alpha)) }
        return values
    }

    func colorValues(_ color: Color) -> [Double] {
        let colorBands = hasAlpha ? bands - 1 : bands
        if colorBands < 3 { return [luminance(color), Double(color.alpha)] }
        return [Double(color.red), Double(color.green), Double(color.blue), Double(color.alpha)]
    }

    private func luminance(_ c: Color) -> Double {
        (0.2126 * Double(c.red) + 0.7152 * Double(c.green) + 0.0722 * Double(c.blue)).rounded()
    }

    /// Brings two images to the same colour bands so they can be composited.
    func matchingBands(for other: VImage) throws(DeriveError) -> VImage {
        let mine = hasAlpha ? bands - 1 : bands
        let theirs = other.hasAlpha ? other.bands - 1 : other.bands
        if mine < 3 && theirs >= 3 { return try colourspace("srgb") }
        return self
    }
}
