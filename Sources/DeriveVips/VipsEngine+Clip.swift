import DeriveLanguage

/// `fl_clip`: the source clipped to a Photoshop path stored in it. DeriveLanguage reads the path
/// from the source's bytes and fills it into a mask (libvips' SVG loader, an untrusted loader,
/// is blocked in most deployments).
extension VipsEngine {
    /// The decoded image with everything outside the chosen path transparent. The path is
    /// drawn on the stored pixels in fractions of their size, so its mask is made at the stored
    /// size of the decode and turned as the decoder turned the image (EXIF orientation).
    static func clipped(_ image: VImage, to clip: ClipSetting, paths: PhotoshopPaths.Found, orientation: Int) throws(DeriveError) -> VImage {
        guard let path = paths.path(number: clip.number, name: clip.name) else {
            let which = clip.number.map { "path \($0)" } ?? clip.name.map { "the path \(Quoted($0))" } ?? "a path"
            let has = paths.paths.isEmpty ? "no Photoshop paths (8BIM resources 2000–2997 in a JPEG's APP13 or a TIFF's Photoshop tag)"
                : "the paths \(paths.paths.enumerated().map { "\($0.offset + 1) \(Quoted($0.element.name))" }.joined(separator: ", "))"
            throw DeriveError(.invalidJob, "fl_clip: the source has \(has), not \(which) to clip to")
        }
        let frame = image.frameSize
        let stored = orientation >= 5 ? frame.swapped : frame
        let coverage = try VImage.fromPixels(try PathRaster.mask(path, width: stored.width, height: stored.height, evenOdd: clip.evenOdd),
                                             width: stored.width, height: stored.height, bands: 1)
        // Made at the stored size and turned upright, the mask is the frame's size.
        var mask = try VipsDecoder.upright(coverage, orientation: orientation)
        if image.pages > 1 {
            mask = try VipsCall("replicate").image("in", mask).int("across", 1).int("down", image.pages).run().image("out")
        }
        let withAlpha = try image.withAlpha()
        guard let alpha = try withAlpha.alphaBand() else { return withAlpha }
        let kept = try alpha.multiplied(by: mask).linear([1.0 / 255], [0])
        return try withAlpha.withoutAlpha().joined(with: kept)
    }
}
