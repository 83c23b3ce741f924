import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveVips
import DeriveWorker
import Foundation

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a job locally, without a queue: fetch or read each source, decode it once, write its outputs, print a report.",
        discussion: """
        Sources are files, or URLs (http, https, s3, data) fetched with the same safeguards as the
        worker. Outputs go to <out>/<source name>/<output name>[-<width>w].<ext>, or with --store
        to the configured store under keys from the key template. Prints a JSON array with one
        report per source: its metadata, the decode, every output's metadata and location, and
        the time each stage took. Settings come from DERIVE_* environment variables (see
        Docs/configuration.md); the flags below override them.

          derive run photo.jpg --chain 'c_fill,w_400,h_400,g_auto/f_webp'
          derive run https://example.com/cat.jpg --chain job.json --store s3://bucket/derived
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
            var reports: [JSONValue] = []
            var failures = 0
            for path in sources {
                do throws(DeriveError) {
                    var report = try pipeline.run(resolved, source: path).report
                    // Outputs in --out are reported as the paths people open.
                    if store == nil {
                        report.locations = report.locations.map { URL(string: $0).flatMap { $0.isFileURL ? $0.path : nil } ?? $0 }
                    }
                    reports.append(report.json)
                } catch {
                    failures += 1
                    printError("derive run: \(Redacted.url(path)): \(error)")
                    reports.append(.object(["source": .string(Redacted.url(path)), "error": .object(["code": .string(error.code.rawValue), "detail": .string(error.detail)])]))
                }
            }
            print(JSONWriter.pretty(.array(reports)))
            if failures > 0 { throw ExitCode.failure }
        }
    }
}
