import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveTerminal
import DeriveVips
import DeriveWorker
import Foundation

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a job locally, without a queue: fetch or read each source, decode it once, write its outputs, print a report.",
        discussion: """
        Sources are files, or URLs (http, https, s3, data) fetched with the same safeguards as the \
        worker. Outputs go to <out>/<source name>/<output name>[-<width>w].<ext>, or with --store \
        to the configured store under keys from the key template. Settings come from DERIVE_* \
        environment variables (see Docs/configuration.md); the flags below override them.

        On a terminal it shows its progress on standard error (--quiet: none) and ends with a \
        table: each output's size, format, quality (q_auto's choice too), bytes and where it went, \
        then the totals and the time, and each failure with its classified error. With --json, \
        or when standard output is not a terminal (a pipe, a file), it prints the full report \
        instead: a JSON array with one object per source (its metadata, the decode, every \
        output's metadata and location, the time each stage took), or its error.

          derive run photo.jpg --chain 'c_fill,w_400,h_400,g_auto/f_webp'
          derive run photos/*.jpg --chain 'w_800/q_auto/f_avif' --out web
          derive run https://example.com/cat.jpg --chain job.json --store s3://assets
          derive run photo.jpg --chain job.json | jq '.[0].outputs'
        """
    )

    @Argument(help: "Image files or URLs to derive from.")
    var sources: [String]

    @Option(name: .long, help: "A JSON file, inline JSON, or a Cloudinary transformation string.")
    var chain: String

    @Option(name: .long, help: "Folder for the outputs, with readable names (when --store is not given).")
    var out: String = "derived"

    @Option(name: .long, help: "Write to a store instead (a folder, file:///path or s3://bucket/prefix), under key-template keys. Env: DERIVE_STORE.")
    var store: String?

    @Option(name: .long, help: "A JSON file of presets.")
    var presets: String?

    @Option(name: .long, help: "Where overlay names (l_logo) are found: a folder or a URL prefix. Env: DERIVE_OVERLAY_BASE.")
    var overlays: String?

    @Flag(name: .long, help: "Print the JSON report, as when standard output is not a terminal (instead of the summary table).")
    var json = false

    @OptionGroup var progressOption: ProgressOption

    @OptionGroup var settings: SettingsOptions

    @OptionGroup var asset: AssetOptions

    func run() throws {
        try reportingFailures("run") {
            let configuration = try settings.configuration(store: store)
            var job = try TransformationInput.parse(try chainText(chain))
            job.asset = try asset.applied(to: job.asset)
            let catalog = InMemoryPresetCatalog(try presets.map { try PresetFile.parse(try readFile($0)) } ?? [])
            // Readable names in --out, or key-template keys in the configured store.
            let (target, naming): (any AssetStore, JobPipeline.OutputNaming) = try store == nil
                ? (FileAssetStore(root: URL(fileURLWithPath: out)), .readable)
                : (makeStore(configuration), .template(configuration.store.keyTemplate))
            let pipeline = try makePipeline(configuration, store: target, naming: naming, catalog: catalog, overlays: overlays ?? configuration.overlayBase ?? ".",
                                            localFiles: true)
            let resolved = try pipeline.resolve(job)
            let progress = progressOption.reporter(ProgressState(label: "deriving", unit: "sources", total: sources.count,
                                                                 counts: [.init("failed", colour: .red, hiddenAtZero: true)]))
            var reports: [JSONValue] = []
            var summary = RunSummary(sources: [], failures: [], seconds: 0)
            let folder = FileManager.default.currentDirectoryPath
            for path in sources {
                progress.update { $0.current = Redacted.url(path) }
                do throws(DeriveError) {
                    var report = try pipeline.run(resolved, source: path).report
                    // Outputs in --out are reported as the paths people open.
                    if store == nil {
                        report.locations = report.locations.map { URL(string: $0).flatMap { $0.isFileURL ? $0.path : nil } ?? $0 }
                    }
                    reports.append(report.json)
                    summary.sources.append(RunSummary.Source(name: Redacted.url(path), outputs: Self.summarised(report, relativeTo: folder)))
                    progress.update { $0.done += 1 }
                } catch {
                    progress.note("derive run: \(Redacted.url(path)): \(error)")
                    reports.append(.object(["source": .string(Redacted.url(path)), "error": .object(["code": .string(error.code.rawValue), "detail": .string(error.detail)])]))
                    summary.failures.append(RunSummary.Failure(source: Redacted.url(path), code: error.code.rawValue, detail: error.detail))
                    progress.update {
                        $0.done += 1
                        $0[count: "failed"] += 1
                    }
                }
            }
            progress.update { $0.current = nil }
            summary.seconds = progress.elapsed
            progress.finish(verb: "derived")
            let terminal = Terminal.standardOutput
            if json || !terminal.isTerminal {
                print(JSONWriter.pretty(.array(reports)))
            } else {
                for line in summary.lines(width: terminal.width, height: terminal.height, style: Style(terminal)) { print(line) }
            }
            let failures = summary.failures.count
            if failures > 0 { throw ExitCode.failure }
        }
    }

    /// A report's outputs as the summary shows them: `q_auto`'s level with the quality it chose,
    /// and files by the path from where the person is.
    static func summarised(_ report: JobReport, relativeTo folder: String) -> [RunSummary.Output] {
        zip(report.result.outputs, report.locations).map { output, location in
            let m = output.metadata
            let planned = report.plan.outputs.first { $0.name == output.name }
            var quality = m.quality.map(String.init) ?? "lossless"
            if case .auto(let level)? = planned?.encoding.quality { quality = "auto:\(level.rawValue) → " + quality }
            return RunSummary.Output(name: output.name + (output.breakpointWidth.map { " \($0)w" } ?? ""), width: m.width, height: m.height,
                                     format: m.format.rawValue, quality: quality, bytes: m.bytes,
                                     location: RunSummary.relative(location, to: folder), reused: output.reused)
        }
    }
}
