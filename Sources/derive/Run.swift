import ArgumentParser
import DeriveCore
import DeriveCurl
import DeriveVips
import Foundation

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a job locally, without a queue: fetch or read each source, decode it once, write its outputs, print a report.",
        discussion: """
        Sources are files, or URLs (http, https, s3, data) fetched with the same safeguards as the
        worker. Outputs go to <out>/<source name>/<output name>[-<width>w].<ext>, or with --store
        to the configured store under keys from the key template. Prints a JSON array with one
        report per source: its metadata, the decode, every output's metadata and location, and
        the time each stage took. Settings come from DERIVE_* environment variables (see the
        README); the flags below override them.

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

    func run() throws {
        try reportingFailures("run") {
            let configuration = try settings.configuration(store: store)
            let vips = try VipsEngine(settings: configuration.engine)
            let job = try TransformationInput.parse(try chainText(chain))
            let catalog = InMemoryPresetCatalog(try presets.map { try PresetFile.parse(try readFile($0)) } ?? [])
            let resolved = try JobResolver(catalog: catalog).resolve(job)
            let cache = try configuration.cache.map { try DiskSourceCache(directory: $0.directory, capacity: $0.maxBytes) }
            let fetcher = try CurlFetcher(settings: configuration.fetch, cache: cache)
            let overlayBase = overlays ?? configuration.overlayBase ?? "."
            let overlayLoader: any OverlayLoader = overlayBase.contains("://")
                ? FetchingOverlayLoader(fetcher: fetcher, base: overlayBase)
                : FileOverlayLoader(root: URL(fileURLWithPath: overlayBase), maxBytes: configuration.engine.sourceLimits.maxInputBytes)
            let output: OutputTarget = try store.map { _ in .store(try Stores.make(configuration.store, s3: configuration.fetch.s3), configuration.store.keyTemplate) }
                ?? .folder(URL(fileURLWithPath: out))
            var reports: [JSONValue] = []
            var failures = 0
            for path in sources {
                let result = Result { () throws(DeriveError) -> JobReport in
                    try derive(path, resolved: resolved, engine: vips, fetcher: fetcher, overlays: overlayLoader, output: output,
                               maxBytes: configuration.engine.sourceLimits.maxInputBytes)
                }
                switch result {
                case .success(let report):
                    reports.append(report.json)
                case .failure(let error):
                    failures += 1
                    printError("derive run: \(Redacted.url(path)): \(error)")
                    reports.append(.object(["source": .string(Redacted.url(path)), "error": .object(["code": .string(error.code.rawValue), "detail": .string(error.detail)])]))
                }
            }
            print(JSONWriter.pretty(.array(reports)))
            if failures > 0 { throw ExitCode.failure }
        }
    }

    enum OutputTarget {
        case folder(URL)
        case store(any AssetStore, KeyTemplate)
    }

    func derive(_ path: String, resolved: ResolvedJob, engine: VipsEngine, fetcher: CurlFetcher, overlays: any OverlayLoader,
                output: OutputTarget, maxBytes: Int) throws(DeriveError) -> JobReport {
        var timings = StageTimings()
        let started = DispatchTime.now().uptimeNanoseconds
        func milliseconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000 }
        // A path named on the command line is the user's own: it is read directly. URLs go
        // through the fetcher and its safeguards.
        let isURL = path.contains("://") || path.lowercased().hasPrefix("data:")
        var fetched: FetchedSource?
        let source: SourceImage
        if isURL {
            let fetch = try fetcher.fetch(path)
            fetched = fetch
            source = fetch.image
        } else {
            source = try LocalFile.read(URL(fileURLWithPath: path), maxBytes: maxBytes)
        }
        timings.fetch = milliseconds(since: started)
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
        mark = DispatchTime.now().uptimeNanoseconds
        var locations: [String] = []
        switch output {
        case .folder(let out):
            let stem = URL(fileURLWithPath: isURL ? (URLComponents(string: path)?.path ?? "source") : path)
                .deletingPathExtension().lastPathComponent
            let folder = FileAssetStore(root: out.appendingPathComponent(stem.isEmpty ? "source" : stem))
            for rendered in result.outputs {
                let suffix = rendered.breakpointWidth.map { "-\($0)w" } ?? ""
                let key = try StorageKey("\(rendered.name)\(suffix).\(rendered.metadata.format.fileExtension)")
                let stored = try folder.put(rendered.data, key: key, contentType: rendered.metadata.format.mediaType)
                locations.append(folder.path(stored.key).path)
            }
        case .store(let store, let template):
            for rendered in result.outputs {
                let key = try template.key(KeyTemplate.Values(
                    sourceHash: result.source.sha256, name: rendered.name, identity: rendered.identity,
                    breakpointWidth: rendered.breakpointWidth, width: rendered.metadata.width, height: rendered.metadata.height,
                    format: rendered.metadata.format))
                locations.append(try store.put(rendered.data, key: key, contentType: rendered.metadata.format.mediaType).url)
            }
        }
        timings.store = milliseconds(since: mark)
        return JobReport(plan: plan, result: result, locations: locations, timings: timings,
                         totalMilliseconds: milliseconds(since: started), fetched: fetched)
    }
}

/// Settings shared by the commands that fetch, decode and store: the DERIVE_* environment,
/// overridden by these flags.
struct SettingsOptions: ParsableArguments {
    @Option(name: .long, help: "Allow an untrusted libvips loader: svg, pdf, jxl, magick (repeatable). Env: DERIVE_ALLOW_LOADERS.")
    var allowLoader: [String] = []

    @Option(name: .long, help: "Allow fetching from a host or address range that is not globally routable (repeatable). Env: DERIVE_FETCH_ALLOW.")
    var fetchAllow: [String] = []

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

    func configuration(store: String? = nil) throws -> Configuration {
        var environment = ProcessInfo.processInfo.environment
        if !allowLoader.isEmpty { environment["DERIVE_ALLOW_LOADERS"] = allowLoader.joined(separator: ",") }
        if !fetchAllow.isEmpty {
            environment["DERIVE_FETCH_ALLOW"] = ([environment["DERIVE_FETCH_ALLOW"] ?? ""] + fetchAllow).joined(separator: ",")
        }
        if let store { environment["DERIVE_STORE"] = store }
        for (flag, name) in [(maxInputBytes, "DERIVE_MAX_INPUT_BYTES"), (maxInputPixels, "DERIVE_MAX_INPUT_PIXELS"),
                             (maxFrames, "DERIVE_MAX_FRAMES"), (maxAnimationPixels, "DERIVE_MAX_ANIMATION_PIXELS"),
                             (vipsConcurrency, "DERIVE_VIPS_CONCURRENCY")] {
            if let flag { environment[name] = String(flag) }
        }
        return try Configuration.load(environment)
    }
}
