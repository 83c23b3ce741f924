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

    /// A colour detector's faces in `image` placed on a canvas of `canvas` size (at least the
    /// image's; one size per process, `FaceDetectionSettings.canvas`).
    func detect(_ image: PixelBuffer, canvas: Size) throws(DeriveError) -> [DetectedFace]

    /// The score a face must reach for crops, overlays and `fc` (the surer faces); the detector
    /// returns faces down to its lower threshold, which privacy effects cover. nil: every face
    /// it returns counts for both.
    var cropThreshold: Double? { get }

    /// The stages of this detector's last detection, milliseconds (processor time, then wall
    /// time), for the benchmark's split (DERIVE_FACE_PROFILE); empty when it does not say.
    var lastStageTimings: [(name: String, milliseconds: Double)] { get }
}

extension FaceDetector {
    public var wantsColor: Bool { false }
    public var cropThreshold: Double? { nil }
    public var lastStageTimings: [(name: String, milliseconds: Double)] { [] }
    public func detect(_ image: PixelBuffer, canvas: Size) throws(DeriveError) -> [DetectedFace] {
        try detect(image, upsample: 0)
    }
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
    /// The canvas a colour detector (CenterFace) reads, sides multiples of 32: the source is
    /// scaled to fit inside it, aspect kept (enlarged at most twice), and placed at its top
    /// left. A job that needs faces decodes at least that fitted size (`Planner.faceDecodeCanvas`),
    /// so the detector reads the decode itself unless an output needed more pixels.
    /// One size per process: the network is built for it. Its pixels are the cost.
    public var canvas: Size
    public var detector: FaceDetectorChoice
    /// Each colour detection writes where its time went to standard error
    /// (DERIVE_FACE_PROFILE, for Benchmarks/faces-cost.sh); off by default.
    public var profile = false
    /// Faces are found on a first decode sized for the detector when the job's own would be
    /// larger, and the crops around them decided before the job's decode, which then holds only
    /// what the outputs need (`Planner.refined`). Off: one decode, the detector reading a copy
    /// of it, as before issue 43 (tests compare the two).
    public var decodeTwice = true

    public static let defaultShortSide = 1300
    /// CenterFace's canvas, about 4:3: the largest measured whose detection stays under issue
    /// 28's 60 ms of one core on a 12 MP photo (55-58 ms, nearly all the network's forward
    /// pass) while its tune-chosen thresholds meet the accuracy targets on the report half
    /// (Benchmarks/faces/netsizes.py, faces-cost.sh sections 1c and 1d). 640x480 (69 ms) covers
    /// two more of the report half's 194 faces, both 13-23 px in one street photo: an operator
    /// who prefers that sets DERIVE_FACE_DETECTION_CANVAS=640x480 (Docs/faces.md, "Limits").
    public static let defaultCanvas = Size(576, 416)

    public init(enabled: Bool = true, shortSide: Int = FaceDetectionSettings.defaultShortSide, minimumScore: Double = 0,
                canvas: Size = FaceDetectionSettings.defaultCanvas, detector: FaceDetectorChoice = .auto) {
        self.enabled = enabled
        self.shortSide = shortSide
        self.minimumScore = minimumScore
        self.canvas = canvas
        self.detector = detector
    }

    /// CenterFace's thresholds (its heat, 0-1) at the default canvas, chosen on the tune half
    /// of Benchmarks/faces (netsizes.py): crops, overlays on faces and `fc` go by faces of
    /// `centerFaceCropThreshold` or more (every face of 5% found, fewest false detections);
    /// `e_blur_faces` and `e_pixelate_faces` cover faces down to the lower
    /// `centerFacePrivacyThreshold` (the lowest whose precision stays at 0.95 or more), since a
    /// missed face is worse than an extra blurred patch. Chosen again (0.4 before) when the
    /// detector's copy became the job's decode at the canvas's size (libvips' lanczos3 from the
    /// JPEG's shrink-on-load rather than a linear resample of a 650-pixel decode): at 0.4 the
    /// tune half then missed one face of 5%. At 576x416 the privacy threshold is 0.3: at 0.25
    /// the tune half's precision falls under 0.95.
    public static let centerFaceCropThreshold = 0.35
    public static let centerFacePrivacyThreshold = 0.3

    /// CenterFace's thresholds at the canvases measured by Benchmarks/faces/netsizes.py, each
    /// pair chosen on the tune half by the rules above (a canvas's pixels change the heat a
    /// face gets). Each meets issue 28's accuracy targets on the report half; the larger ones
    /// cover one or two more of its 194 faces and cost more than 60 ms a 12 MP job
    /// (Benchmarks/RESULTS.md). Another canvas keeps the default canvas's pair.
    public static let centerFaceThresholdsByCanvas: [Size: (crop: Double, privacy: Double)] = [
        Size(640, 480): (0.35, 0.25),
        Size(608, 448): (0.35, 0.3),
        Size(576, 448): (0.35, 0.25),
        Size(576, 416): (centerFaceCropThreshold, centerFacePrivacyThreshold),
    ]

    /// The crop and privacy thresholds CenterFace uses on `canvas`.
    public static func centerFaceThresholds(for canvas: Size) -> (crop: Double, privacy: Double) {
        centerFaceThresholdsByCanvas[canvas] ?? (centerFaceCropThreshold, centerFacePrivacyThreshold)
    }

    /// A canvas `side` pixels square, rounded up to the network's stride of 32.
    public static func squareCanvas(_ side: Int) -> Size {
        let rounded = (side + 31) / 32 * 32
        return Size(rounded, rounded)
    }
}
