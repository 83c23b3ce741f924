import DeriveLanguage

/// Runs a face detector on a decoded image: a grey copy whose shorter side is the detection
/// size (enlarged at most twice, since enlarging adds no detail), faces scaled back to the
/// decoded image's pixels. The first page stands for the others of a document or animation.
struct FaceFinder {
    let detector: any FaceDetector
    let settings: FaceDetectionSettings

    func faces(in decoded: VImage) throws(DeriveError) -> [DetectedFace] {
        try look(at: decoded).faces
    }

    /// The faces, and the copy of the image the detector read (RGB, or grey for dlib's).
    func look(at decoded: VImage) throws(DeriveError) -> (faces: [DetectedFace], copy: VImage) {
        var image = decoded
        if image.pages > 1 { image = try image.extracted(Rect(x: 0, y: 0, width: image.width, height: image.pageHeight)) }
        if detector.wantsColor { return try colourFaces(in: image) }
        let shorter = min(image.width, image.height)
        let scale = min(2, Double(settings.shortSide) / Double(shorter))
        // Enlarging is dlib's own 2x pyramid step (libvips' affine upsampling is slower); libvips
        // only ever reduces here.
        let upsample = scale > 1 ? 1 : 0
        let copyScale = scale / Double(1 << upsample)
        let size = Size(ResizeGeometry.px(Double(image.width) * copyScale), ResizeGeometry.px(Double(image.height) * copyScale))
        // Grey first, so the resample touches one band; transparency reads as white, as it
        // would on a page; a linear kernel is enough for a detector that reads gradients.
        let flat = try image.standardised().flattened(on: .white)
        let luma = flat.bands >= 3 ? try flat.recombined([[0.299, 0.587, 0.114]]) : flat
        let grey = try luma.resampled(to: size, kernel: "linear").inMemory()
        let found = try detector.detect(try grey.pixelBuffer(), upsample: upsample).filter { $0.score >= settings.minimumScore }
        let sx = Double(image.width) / Double(size.width), sy = Double(image.height) / Double(size.height)
        return (found.map { $0.scaled(x: sx, y: sy) }, grey)
    }

    /// A colour detector's copy: RGB, scaled by libvips to fit the canvas with its aspect kept
    /// (enlarged at most twice, since enlarging adds no detail). A job that needs faces decodes
    /// at least at that size (`Planner.faceDecodeCanvas`), so usually there is nothing to scale.
    private func colourFaces(in image: VImage) throws(DeriveError) -> (faces: [DetectedFace], copy: VImage) {
        let canvas = settings.canvas
        let scale = min(2, Double(canvas.width) / Double(image.width), Double(canvas.height) / Double(image.height))
        let size = Size(min(canvas.width, ResizeGeometry.px(Double(image.width) * scale)),
                        min(canvas.height, ResizeGeometry.px(Double(image.height) * scale)))
        var laps = FaceProfile.Laps(enabled: settings.profile)
        var flat = try image.standardised().flattened(on: .white)
        if flat.bands == 1 { flat = try VImage.bandjoin([flat, flat, flat]) }
        // Reduced with the decoder's own kernel (lanczos3), so the copy is the same whether a job
        // decoded at the canvas's size (no resample here) or larger for an output, and the
        // thresholds chosen on `derive faces` (which decodes at the canvas's size) hold for both.
        let rgb = try flat.resampled(to: size, kernel: scale > 1 ? "cubic" : "lanczos3").inMemory()
        laps.lap("resample")
        let pixels = try rgb.pixelBuffer()
        laps.lap("pixels")
        let found = try detector.detect(pixels, canvas: canvas).filter { $0.score >= settings.minimumScore }
        laps.lap("detector")
        if settings.profile { FaceProfile.write(source: image.size, copy: size, laps.stages + detector.lastStageTimings) }
        let sx = Double(image.width) / Double(size.width), sy = Double(image.height) / Double(size.height)
        return (found.map { $0.scaled(x: sx, y: sy) }, rgb)
    }
}
