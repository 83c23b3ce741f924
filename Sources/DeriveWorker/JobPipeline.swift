import DeriveCore
import Foundation

/// One job from document to stored outputs: resolve, fetch, read the header, plan, decode once
/// at size, apply and encode every output, store each. The worker runs it in a slot; `derive
/// run` runs it without a queue. It throws a classified `DeriveError` and never anything else.
public struct JobPipeline: Sendable {
    public var engine: any ImageEngine
    public var planner: Planner
    public var fetcher: any SourceFetcher
    public var overlays: any OverlayLoader
    public var store: any AssetStore
    public var naming: OutputNaming
    public var catalog: any PresetCatalog
    public var limits: ChainLimits

    /// Where each output goes in the store.
    public enum OutputNaming: Sendable {
        /// Content-addressed keys (`{source_hash}/{name}{variant}-{identity_short}.{ext}`).
        case template(KeyTemplate)
        /// `<source name>/<output name>[-<width>w].<ext>`, for people (`derive run --out`).
        case readable
    }

    /// The stages a job goes through, as the worker reports them.
    public enum Stage: String, Sendable {
        case resolve, fetch, decode, store
    }

    public init(engine: any ImageEngine, planner: Planner, fetcher: any SourceFetcher, overlays: any OverlayLoader, store: any AssetStore,
                naming: OutputNaming, catalog: any PresetCatalog, limits: ChainLimits = .default) {
        self.engine = engine
        self.planner = planner
        self.fetcher = fetcher
        self.overlays = overlays
        self.store = store
        self.naming = naming
        self.catalog = catalog
        self.limits = limits
    }

    /// Validates a job document and expands its presets. A malformed document is a permanent
    /// `invalid_job` error whose detail names every field at fault.
    public func resolve(_ document: JSONValue) throws(DeriveError) -> ResolvedJob {
        let spec: JobSpec
        do {
            spec = try JSONChainDecoder(limits: limits).decodeJob(document)
        } catch {
            throw DeriveError(error)
        }
        return try resolve(spec)
    }

    public func resolve(_ spec: JobSpec) throws(DeriveError) -> ResolvedJob {
        do {
            return try JobResolver(limits: limits, catalog: catalog).resolve(spec)
        } catch let error as ValidationError {
            throw DeriveError(error)
        } catch let error as DeriveError {
            throw error
        } catch {
            throw DeriveError(.databaseUnavailable, "could not read presets: \(error)")
        }
    }

    /// What a finished run produced.
    public struct Outcome: Sendable {
        public var report: JobReport
        public var record: DerivationRecord
    }

    /// Runs a resolved job on `source`. `stage` hears each stage as it starts; `isCancelled`
    /// is asked between stages, and a cancelled job stops with an `interrupted` error.
    /// `beforeStoring` hears every key the run is about to write, before the first write (the
    /// worker notes them in the write ledger).
    public func run(_ job: ResolvedJob, source: String, stage: (Stage) -> Void = { _ in },
                    isCancelled: () -> Bool = { false },
                    beforeStoring: ([StorageKey]) throws(DeriveError) -> Void = { _ in }) throws(DeriveError) -> Outcome {
        func checkCancelled() throws(DeriveError) {
            if isCancelled() { throw DeriveError(.interrupted, "cancelled while running") }
        }
        var timings = StageTimings()
        let started = DispatchTime.now().uptimeNanoseconds
        func milliseconds(since start: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000_000 }

        stage(.fetch)
        let fetched = try fetcher.fetch(source)
        timings.fetch = milliseconds(since: started)
        try checkCancelled()

        stage(.decode)
        var mark = DispatchTime.now().uptimeNanoseconds
        let inspection = try engine.inspect(fetched.image)
        timings.header = milliseconds(since: mark)
        mark = DispatchTime.now().uptimeNanoseconds
        let plan: Plan
        do {
            plan = try planner.plan(job, source: inspection.facts)
        } catch {
            throw DeriveError(error)
        }
        timings.plan = milliseconds(since: mark)
        let result = try engine.render(plan, source: fetched.image, inspection: inspection, overlays: overlays)
        try checkCancelled()

        stage(.store)
        mark = DispatchTime.now().uptimeNanoseconds
        var keys: [StorageKey] = []
        for output in result.outputs { keys.append(try self.key(for: output, source: result.source)) }
        try beforeStoring(keys)
        var stored: [StoredObject] = []
        for (output, key) in zip(result.outputs, keys) {
            stored.append(try store.put(output.data, key: key, contentType: output.metadata.format.mediaType))
        }
        timings.store = milliseconds(since: mark)
        let report = JobReport(plan: plan, result: result, locations: stored.map(\.url), timings: timings,
                               totalMilliseconds: milliseconds(since: started), fetched: fetched.origin == .file ? nil : fetched)
        return Outcome(report: report, record: DerivationRecord(report: report, resolved: job, stored: stored, sourceURL: source))
    }

    func key(for output: RenderedOutput, source: SourceMetadata) throws(DeriveError) -> StorageKey {
        switch naming {
        case .template(let template):
            return try template.key(KeyTemplate.Values(
                sourceHash: source.sha256, name: output.name, identity: output.identity, breakpointWidth: output.breakpointWidth,
                width: output.metadata.width, height: output.metadata.height, format: output.metadata.format))
        case .readable:
            let suffix = output.breakpointWidth.map { "-\($0)w" } ?? ""
            return try StorageKey("\(Self.readableStem(source.location))/\(output.name)\(suffix).\(output.metadata.format.fileExtension)")
        }
    }

    /// A source's name without folders or extension, made safe for a key: `photo` for
    /// `/pictures/photo.jpg` or `https://example.com/a/photo.jpg?x=1`.
    static func readableStem(_ location: String) -> String {
        let path = location.contains("://") ? (URLComponents(string: location)?.path ?? "") : location
        let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let safe = String(stem.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
            .trimmingCharacters(in: CharacterSet(charactersIn: "."))
        return safe.isEmpty ? "source" : safe
    }
}

/// Reads plain paths as the user's own files and hands everything else to a fetcher: what
/// `derive run` does with the sources named on its command line.
public struct LocalFirstFetcher: SourceFetcher {
    public var fetcher: any SourceFetcher
    public var maxBytes: Int

    public init(fetcher: any SourceFetcher, maxBytes: Int) {
        self.fetcher = fetcher
        self.maxBytes = maxBytes
    }

    public func fetch(_ source: String) throws(DeriveError) -> FetchedSource {
        if source.contains("://") || source.lowercased().hasPrefix("data:") { return try fetcher.fetch(source) }
        let image = try LocalFile.read(URL(fileURLWithPath: source), maxBytes: maxBytes)
        guard let format = ImageSniffer.format(of: image.bytes) else {
            throw DeriveError(.unsupportedFormat, "\(source) is not an image format Derive recognises")
        }
        return FetchedSource(image: image, format: format, finalLocation: source, origin: .file, transferredBytes: 0)
    }
}
