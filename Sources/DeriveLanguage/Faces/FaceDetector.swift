/// Finds faces in pixels. The engine calls it at most once per job, on a grey copy of the
/// decoded source, and only when some output needs faces (a face or `auto` gravity, a face
/// effect, an overlay placed on faces).
public protocol FaceDetector: Sendable {
    /// A short name for reports, such as `dlib-hog`.
    var name: String { get }

    /// Faces in an 8-bit grey image (one band), boxes in its pixels, best first. `upsample`
    /// doubles the image that many times (0 or 1) before looking, to find smaller faces.
    func detect(_ grey: PixelBuffer, upsample: Int) throws(DeriveError) -> [DetectedFace]
}

/// How the engine looks for faces.
public struct FaceDetectionSettings: Sendable, Hashable {
    /// Off: face and `auto` gravities fall back as if no face were found (and say so in the
    /// report), and face effects fail, so that a privacy blur never silently does nothing.
    public var enabled: Bool
    /// The shorter side, in pixels, of the grey copy the detector reads. dlib's detector finds
    /// faces from about 65 pixels, so 1300 finds the faces of 5% of the shorter side (measured:
    /// 20 of 20 at 5%, 13 of 20 at 4.5%, Benchmarks/faces); smaller is faster and misses small
    /// faces. Sources smaller than this are enlarged at most twice.
    public var shortSide: Int
    /// Detections scoring below this are dropped (dlib's margin: 0 is its own threshold).
    public var minimumScore: Double

    public static let defaultShortSide = 1300

    public init(enabled: Bool = true, shortSide: Int = FaceDetectionSettings.defaultShortSide, minimumScore: Double = 0) {
        self.enabled = enabled
        self.shortSide = shortSide
        self.minimumScore = minimumScore
    }
}
