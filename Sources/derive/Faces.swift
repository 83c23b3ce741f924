import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveVips
import DeriveVision
import Foundation

struct Faces: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find the faces in image files, as the worker does for face gravities and face effects.",
        discussion: """
        Prints one JSON object per file and line: the upright size, every face found (box in \
        upright pixels and the detector's score, best first) and the milliseconds taken, \
        decoding included. A file that fails prints its classified error instead, and the \
        command exits 1 at the end. Env: DERIVE_FACE_DETECTION_SIZE.

          derive faces group.jpg portrait.png
        """
    )

    @Flag(help: "Print the instruction set the detector was built for (x86-64-v3 or x86-64) and exit.")
    var instructionSet = false

    @Option(help: "CenterFace: print faces down to this score (default: the privacy effects' threshold, \(FaceDetectionSettings.centerFacePrivacyThreshold); crops use \(FaceDetectionSettings.centerFaceCropThreshold)).")
    var threshold: Double?

    @Argument(help: "Image files.")
    var files: [String] = []

    func validate() throws {
        if !instructionSet && files.isEmpty { throw ValidationError("Give one or more image files.") }
        if let threshold, !(0.01...1).contains(threshold) { throw ValidationError("--threshold must be 0.01–1, got \(threshold)") }
    }

    func run() throws {
        if instructionSet {
            print(DlibFaceDetector.instructionSet)
            return
        }
        let configuration = try Configuration.load()
        var settings = configuration.engine
        settings.faces.enabled = true
        var detector = FaceDetectors.make(configuration.engine.faces.detector, canvas: configuration.engine.faces.canvas)
        if let threshold, let net = detector as? NetFaceDetector {
            detector = NetFaceDetector(threshold: threshold, cropThreshold: net.cropThreshold ?? NetFaceDetector.defaultCropThreshold)
        }
        let engine = try VipsEngine(settings: settings, faceDetector: detector)
        var failed = false
        for file in files {
            var members: [JSONMember] = [JSONMember(key: "file", value: .string(file))]
            do {
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
                let source = SourceImage(bytes: bytes, location: file)
                let started = DispatchTime.now().uptimeNanoseconds
                let facts = try engine.inspect(source).facts
                let findings = try engine.faces(in: source)
                let milliseconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
                members += [
                    JSONMember(key: "width", value: .int(facts.orientedSize.width)),
                    JSONMember(key: "height", value: .int(facts.orientedSize.height)),
                    JSONMember(key: "detector", value: .string(findings.detector)),
                    JSONMember(key: "faces", value: .array(findings.faces.map(\.json))),
                    JSONMember(key: "cropThreshold", value: findings.cropThreshold.map(JSONValue.decimal) ?? .null),
                    JSONMember(key: "milliseconds", value: .decimal((milliseconds * 10).rounded() / 10)),
                ]
            } catch let error as DeriveError {
                failed = true
                members.append(JSONMember(key: "error", value: .object(["code": .string(error.code.rawValue), "message": .string(error.detail)])))
            } catch {
                failed = true
                members.append(JSONMember(key: "error", value: .object(["code": .string("source_unavailable"), "message": .string("\(error)")])))
            }
            print(JSONWriter.compact(.object(members)))
        }
        if failed { throw ExitCode(1) }
    }
}
