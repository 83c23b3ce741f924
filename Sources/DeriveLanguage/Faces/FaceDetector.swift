/// Finds faces in pixels. The engine calls it at most once per job, on a grey copy of the
/// decoded source, and only when some output needs faces (a face or `auto` gravity, a face
/// effect, an overlay placed on faces).
public protocol FaceDetector: Sendable {
    /// A short name for reports, such as `dlib-hog`.
    var name: String { get }

    /// True when the detector reads colour: `detect` is then given an 8-bit RGB copy whose
    /// longer side is `FaceDetectionSettings.longSide`; otherwise a grey copy (one band) whose
    /// shorter side is `shortSide`.
    var wantsColor: Bool { get }

    /// Faces in an 8-bit image (one band, or three for a detector that wants colour), boxes in
    /// its pixels, best first. `upsample` doubles a grey image that many times (0 or 1) before
    /// looking, to find smaller faces; a colour detector is given its image at size.
    func detect(_ image: PixelBuffer, upsample: Int) throws(DeriveError) -> [DetectedFace]
}

extension FaceDetector {
    public var wantsColor: Bool { false }
}

/// Which detector runs (DERIVE_FACE_DETECTOR).
public enum FaceDetectorChoice: String, Sendable, Hashable, CaseIterable {
    /// CenterFace when its model and library are installed, else dlib's HOG detector.
    case auto
    /// CenterFace, and an error when its model or library is missing.
    case centerface
    /// dlib's HOG frontal-face detector.
    case hog
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
    /// The longer side, in pixels, of the colour copy a colour detector (CenterFace) reads.
    /// Sources smaller than this are enlarged at most twice.
    public var longSide: Int
    public var detector: FaceDetectorChoice

    public static let defaultShortSide = 1300
    /// CenterFace's working size: faces from about 10 pixels of this copy are found
    /// (Benchmarks/faces/candidates.py); its cost grows with the pixels.
    public static let defaultLongSide = 1024

    public init(enabled: Bool = true, shortSide: Int = FaceDetectionSettings.defaultShortSide, minimumScore: Double = 0,
                longSide: Int = FaceDetectionSettings.defaultLongSide, detector: FaceDetectorChoice = .auto) {
        self.enabled = enabled
        self.shortSide = shortSide
        self.minimumScore = minimumScore
        self.longSide = longSide
        self.detector = detector
    }
}
