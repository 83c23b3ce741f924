import ArgumentParser
import DeriveCore
import DeriveVips
import Foundation

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a job locally, without a queue: decode each source once, write its outputs, print a report.",
        discussion: """
        Writes <out>/<source name>/<output name>[-<width>w].<ext> and prints a JSON array with one
        report per source: the source's metadata, the decode, every output's metadata, and the
        time each stage took.

          derive run photo.jpg --chain 'c_fill,w_400,h_400,g_auto/f_webp'
          derive run a.jpg b.png --chain job.json --out public/derived
        """
    )

    @Argument(help: "Image files to derive from.")
    var sources: [String]

    @Option(name: .long, help: "A JSON file, inline JSON, or a Cloudinary transformation string.")
    var chain: String

    @Option(name: .long, help: "Folder for the outputs.")
    var out: String = "derived"

    @Option(name: .long, help: "A JSON file of presets.")
    var presets: String?

    @Option(name: .long, help: "Folder that overlay names (l_logo) are read from.")
    var overlays: String = "."

    @OptionGroup var engine: EngineOptions

    func run() throws {
        try reportingFailures("run") {
            let settings = try engine.settings()
            let vips = try VipsEngine(settings: settings, limits: engine.chainLimits())
            let job = try TransformationInput.parse(try chainText(chain), limits: engine.chainLimits())
            let catalog = InMemoryPresetCatalog(try presets.map { try PresetFile.parse(try readFile($0)) } ?? [])
            let resolved = try JobResolver(limits: engine.chainLimits(), catalog: catalog).resolve(job)
            let loader = FileOverlayLoader(root: URL(fileURLWithPath: overlays), maxBytes: settings.sourceLimits.maxInputBytes)
            var reports: [JSONValue] = []
            var failures = 0
            for path in sources {
                let result = Result { () throws(DeriveError) -> JobReport in
                    try derive(path, resolved: resolved, engine: vips, overlays: loader)
                }
                switch result {
                case .success(let report):
                    reports.append(report.json)
                case .failure(let error):
                    failures += 1
                    printError("derive run: \(path): \(error)")
                    reports.append(.object(["source": .string(path), "error": .object(["code": .string(error.code.rawValue), "detail": .string(error.detail)])]))
                }
            }
            print(JSONWriter.pretty(.array(reports)))
            if failures > 0 { throw ExitCode.failure }
        }
    }

    func derive(_ path: String, resolved: ResolvedJob, engine: VipsEngine, overlays: any OverlayLoader) throws(DeriveError) -> JobReport {
        var timings = StageTimings()
        let started = DispatchTime.now().uptimeNanoseconds
        func milliseconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000 }
        let source = try FileOverlayLoader.read(URL(fileURLWithPath: path), maxBytes: engine.settings.sourceLimits.maxInputBytes)
        var mark = DispatchTime.now().uptimeNanoseconds
        let inspection = try engine.inspect(source)
        timings.header = milliseconds(since: mark)
        mark = DispatchTime.now().uptimeNanoseconds
        let plan: Plan
        do {
            plan = try engine.planner.plan(resolved, source: inspection.facts)
        } catch {
            throw DeriveError(error)
        }
        timings.plan = milliseconds(since: mark)
        let result = try engine.render(plan, source: source, inspection: inspection, overlays: overlays)
        let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let folder = URL(fileURLWithPath: out).appendingPathComponent(stem)
        var locations: [String] = []
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for output in result.outputs {
                let suffix = output.breakpointWidth.map { "-\($0)w" } ?? ""
                let file = folder.appendingPathComponent("\(output.name)\(suffix).\(output.metadata.format.fileExtension)")
                try Data(output.data).write(to: file, options: .atomic)
                locations.append(file.path)
            }
        } catch {
            throw DeriveError(.storageFailed, "cannot write to \(folder.path): \(error.localizedDescription)")
        }
        return JobReport(plan: plan, result: result, locations: locations, timings: timings, totalMilliseconds: milliseconds(since: started))
    }
}

/// Engine settings shared by the commands that decode images.
struct EngineOptions: ParsableArguments {
    @Option(name: .long, help: "Allow an untrusted libvips loader: svg, pdf, jxl, magick (repeatable). Env: DERIVE_ALLOW_LOADERS.")
    var allowLoader: [String] = []

    @Option(name: .long, help: "Largest source in bytes. Env: DERIVE_MAX_INPUT_BYTES.")
    var maxInputBytes: Int?

    @Option(name: .long, help: "Largest source in pixels per frame. Env: DERIVE_MAX_INPUT_PIXELS.")
    var maxInputPixels: Int?

    @Option(name: .long, help: "Most frames or pages in a source. Env: DERIVE_MAX_FRAMES.")
    var maxFrames: Int?

    @Option(name: .long, help: "Most pixels in all frames of an animation. Env: DERIVE_MAX_ANIMATION_PIXELS.")
    var maxAnimationPixels: Int?

    @Option(name: .long, help: "libvips threads per image (0: one per core). Env: DERIVE_VIPS_CONCURRENCY.")
    var vipsConcurrency: Int?

    func settings() throws -> EngineSettings {
        let environment = ProcessInfo.processInfo.environment
        func number(_ flag: Int?, _ variable: String) throws -> Int? {
            if let flag { return flag }
            guard let text = environment[variable], !text.isEmpty else { return nil }
            guard let value = Int(text), value >= 0 else { throw CLIError("\(variable) must be a whole number, got \(text)") }
            return value
        }
        var names = allowLoader
        if names.isEmpty, let text = environment["DERIVE_ALLOW_LOADERS"] {
            names = text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        }
        let loaders = try Set(names.map { name -> UntrustedLoader in
            guard let loader = UntrustedLoader(rawValue: name.lowercased()) else {
                throw CLIError("unknown loader \(name); allowable: \(UntrustedLoader.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return loader
        })
        var limits = SourceLimits()
        if let value = try number(maxInputBytes, "DERIVE_MAX_INPUT_BYTES") { limits.maxInputBytes = value }
        if let value = try number(maxInputPixels, "DERIVE_MAX_INPUT_PIXELS") { limits.maxInputPixels = value }
        if let value = try number(maxFrames, "DERIVE_MAX_FRAMES") { limits.maxFrames = value }
        if let value = try number(maxAnimationPixels, "DERIVE_MAX_ANIMATION_PIXELS") { limits.maxAnimationPixels = value }
        return EngineSettings(concurrency: try number(vipsConcurrency, "DERIVE_VIPS_CONCURRENCY") ?? 0,
                              allowedLoaders: loaders, sourceLimits: limits)
    }

    func chainLimits() -> ChainLimits { .default }
}
