internal import CFaceShim
import DeriveLanguage
import Synchronization

/// dlib's HOG frontal-face detector: five HOG filters (front, looking left and right, and front
/// tilted either way), trained by dlib's author on labelled faces; the model is compiled into
/// dlib's header, so nothing is read from disk or the network. It finds frontal and
/// three-quarter faces from about 70 pixels across, and misses profiles.
public final class DlibFaceDetector: FaceDetector {
    public let name = "dlib-hog"
    public let minimumScore: Double

    /// dlib's detector keeps scratch buffers, so each thread takes one of its own from here.
    private let idle = Mutex<[Handle]>([])

    public init(minimumScore: Double = 0) {
        self.minimumScore = minimumScore
    }

    public func detect(_ grey: PixelBuffer, upsample: Int) throws(DeriveError) -> [DetectedFace] {
        guard grey.bands == 1, grey.width > 0, grey.height > 0, grey.pixels.count >= grey.width * grey.height else {
            throw DeriveError(.internalError, "face detection needs a one-band grey image, got \(grey.width)x\(grey.height)x\(grey.bands)")
        }
        let handle = try take()
        defer { idle.withLock { $0.append(handle) } }
        let capacity = 256
        var boxes = [dface_box](repeating: dface_box(), count: capacity)
        var message = [CChar](repeating: 0, count: 256)
        let count = grey.pixels.withUnsafeBufferPointer { pixels in
            dface_detect(handle.pointer, pixels.baseAddress, Int32(grey.width), Int32(grey.height), grey.width, Int32(max(0, min(upsample, 2))),
                         minimumScore, &boxes, Int32(capacity), &message, message.count)
        }
        guard count >= 0 else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw DeriveError(.internalError, "face detection failed: \(text)")
        }
        return boxes.prefix(Int(min(count, Int32(capacity)))).map {
            DetectedFace(box: Rect(x: Int($0.x), y: Int($0.y), width: Int($0.width), height: Int($0.height)), score: $0.score)
        }
    }

    /// The instruction set the detector was compiled for (see Package.swift).
    public static var instructionSet: String { String(cString: dface_instruction_set()) }

    private func take() throws(DeriveError) -> Handle {
        if let handle = idle.withLock({ $0.popLast() }) { return handle }
        guard dface_cpu_supported() != 0 else {
            throw DeriveError(.internalError, "this build's face detector needs AVX2 and FMA (x86-64-v3, the machine that built it has them) and this CPU lacks them: rebuild with DERIVE_PORTABLE=1")
        }
        guard let pointer = dface_detector_new() else { throw DeriveError(.internalError, "out of memory creating the face detector") }
        return Handle(pointer)
    }

    /// One dlib detector; used by one thread at a time (the Mutex hands it out).
    private final class Handle: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { dface_detector_free(pointer) }
    }
}
