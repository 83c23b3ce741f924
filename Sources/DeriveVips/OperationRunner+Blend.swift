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
