import DeriveCore

/// Runs a face detector on a decoded image: a grey copy whose shorter side is the detection
/// size (enlarged at most twice, since enlarging adds no detail), faces scaled back to the
/// decoded image's pixels. The first page stands for the others of a document or animation.
struct FaceFinder {
    let detector: any FaceDetector
    let settings: FaceDetectionSettings

    func faces(in decoded: VImage) throws(DeriveError) -> [DetectedFace] {
        var image = decoded
        if image.pages > 1 { image = try image.extracted(Rect(x: 0, y: 0, width: image.width, height: image.pageHeight)) }
        let shorter = min(image.width, image.height)
        let scale = min(2, Double(settings.shortSide) / Double(shorter))
        let size = Size(ResizeGeometry.px(Double(image.width) * scale), ResizeGeometry.px(Double(image.height) * scale))
        // Transparency reads as white, as it would on a page.
        let grey = try image.standardised().flattened(on: .white).resized(to: size).colourspace("b-w").cast("uchar").inMemory()
        let found = try detector.detect(try grey.pixelBuffer()).filter { $0.score >= settings.minimumScore }
        let sx = Double(image.width) / Double(size.width), sy = Double(image.height) / Double(size.height)
        return found.map { $0.scaled(x: sx, y: sy) }
    }
}
