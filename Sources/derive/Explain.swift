import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveVision
import Foundation

struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the plan for a chain and a source, without decoding any pixels.",
        discussion: """
        The chain is a JSON file, inline JSON (a job, an output or a chain array), or a \
        Cloudinary string. The source facts come from an image file's header, or from \
        --source-size (with --orientation, --format, --pages and --alpha).

          derive explain --chain 'c_fill,w_250,h_250,g_auto/r_max/e_sepia' photo.jpg
          derive explain --chain job.json --source-size 4000x3000 --orientation 6
        """
    )

    @Option(name: .long, help: "A JSON file, inline JSON, or a Cloudinary transformation string.")
    var chain: String

    @Argument(help: "An image whose header gives the source facts (read, not decoded).")
    var source: String?

    @Option(name: .long, help: "Source size as WIDTHxHEIGHT, as stored (before EXIF orientation).")
    var sourceSize: String?

    @Option(name: .long, help: "EXIF orientation 1–8, with --source-size.")
    var orientation: Int = 1

    @Option(name: .long, help: "Source format, with --source-size (jpeg, png, webp, gif, avif, heif, jxl, tiff, svg, pdf, bmp).")
    var format: String = "jpeg"

    @Option(name: .long, help: "Pages or frames, with --source-size.")
    var pages: Int = 1

    @Flag(name: .long, help: "The source has an alpha channel, with --source-size.")
    var alpha = false

    @Option(name: .long, help: "A JSON file of presets (name → chain, output or {\"outputs\": [...]}).")
    var presets: String?

    @OptionGroup var asset: AssetOptions

    func run() throws {
        try reportingFailures("explain") {
            var job = try TransformationInput.parse(try chainText(chain))
            job.asset = try asset.applied(to: job.asset)
            let catalog = InMemoryPresetCatalog(try presets.map { try PresetFile.parse(try readFile($0)) } ?? [])
            let resolved = try JobResolver(catalog: catalog).resolve(job)
            // Read as a job would: within the configured limits (DERIVE_MAX_INPUT_*).
            let engine = try Configuration.load().engine
            let facts = try sourceFacts(selecting: try resolved.psdSelection(), limits: engine.sourceLimits)
            // The decode a job would make: for faces, what the configured detector reads (only
            // which detector; nothing is loaded).
            let faces = engine.faces
            let planner = Planner(faces: faces, detectorReadsCanvas: FaceDetectors.make(faces.detector, canvas: faces.canvas).wantsColor)
            let plan = try planner.plan(resolved, source: facts)
            print(JSONWriter.pretty(plan.json(engine: engine)))
        }
    }

    /// With `pg_name:`/`pg_embedded:` and a source file, the facts are the selection's: the
    /// layers' canvas or the embedded file's header, read as a job would (within `limits`).
    func sourceFacts(selecting selection: PSDSelection? = nil, limits: SourceLimits = .default) throws -> SourceFacts {
        switch (source, sourceSize) {
        case (let path?, nil) where selection != nil:
            guard let bytes = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read the source \(path)") }
            let selected = try selection!.source(from: SourceImage(bytes: [UInt8](bytes), location: path), limits: limits)
            guard let facts = ImageSniffer.facts(of: selected.bytes) else {
                let kind = ImageSniffer.format(of: selected.bytes).map { "a \($0.rawValue) file whose size Derive cannot read without decoding" } ?? "not an image format Derive recognises"
                throw CLIError("what pg_\(selection!.cloudinaryText) selects in \(path) is \(kind)")
            }
            return facts
        case (let path?, nil):
            guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read the source \(path)") }
            defer { try? handle.close() }
            // Headers sit at the start; EXIF and WebP chunk lists rarely go past 1 MiB.
            let head = [UInt8](handle.readData(ofLength: 1 << 20))
            guard let facts = ImageSniffer.facts(of: head) else {
                let kind = ImageSniffer.format(of: head).map { "a \($0.rawValue) file whose size Derive cannot read without decoding" } ?? "not an image format Derive recognises"
                throw CLIError("\(path) is \(kind); give --source-size instead")
            }
            return facts
        case (nil, let size?):
            let parts = size.lowercased().split(separator: "x")
            guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else {
                throw CLIError("--source-size must be WIDTHxHEIGHT, such as 4000x3000, got \(size)")
            }
            guard (1...8).contains(orientation) else { throw CLIError("--orientation must be 1–8, got \(orientation)") }
            guard let imageFormat = ImageFormat(rawValue: format.lowercased() == "jpg" ? "jpeg" : format.lowercased()) else {
                throw CLIError("--format must be one of \(ImageFormat.allCases.map(\.rawValue).joined(separator: ", ")), got \(format)")
            }
            guard pages >= 1 else { throw CLIError("--pages must be 1 or more, got \(pages)") }
            return SourceFacts(format: imageFormat, width: width, height: height, orientation: orientation, pages: pages, hasAlpha: alpha)
        case (_?, _?):
            throw CLIError("give a source image or --source-size, not both")
        case (nil, nil):
            throw CLIError("give a source image or --source-size WIDTHxHEIGHT")
        }
    }
}

struct CLIError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Runs a command's body, printing its failure the one way every command does: the command's
/// name, then the problem (every issue of an invalid input on its own line), and exit status 1.
func reportingFailures(_ command: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as DeriveLanguage.ValidationError {
        printError("derive \(command): invalid input\n\(error)")
        throw ExitCode.failure
    } catch let error as DeriveError {
        printError("derive \(command): \(error)")
        throw ExitCode.failure
    } catch let error as CLIError {
        printError("derive \(command): \(error.message)")
        throw ExitCode.failure
    }
}

/// `--chain` is inline JSON, a file, or a Cloudinary string, in that order of checking.
func chainText(_ argument: String) throws -> String {
    let trimmed = argument.drop(while: { $0.isWhitespace })
    if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") { return argument }
    if FileManager.default.fileExists(atPath: argument) { return try readFile(argument) }
    return argument
}

func readFile(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
    guard let text = String(data: data, encoding: .utf8) else { throw CLIError("\(path) is not UTF-8 text") }
    return text
}

func printError(_ text: String) {
    try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8))
}
