import DeriveLanguage
import DeriveDigest
import Foundation

/// One job from document to stored outputs: resolve, fetch and hash, read the header, plan,
/// reuse what an earlier run recorded for the same content and outputs, decode once at size
/// for the rest, apply and encode each, store each. The worker runs it in a slot; `derive run`
/// runs it without a queue. It throws a classified `DeriveError` and never anything else.
public struct JobPipeline: Sendable {
    public var engine: any ImageEngine
    public var planner: Planner
    public var fetcher: any SourceFetcher
    public var overlays: any OverlayLoader
    public var store: any AssetStore
    public var naming: OutputNaming
    public var catalog: any PresetCatalog
    public var limits: ChainLimits
    /// Where recorded work is looked up before decoding (the worker's database); nil derives
    /// every output (`derive run`, `DERIVE_REUSE=off`).
    public var recordedWork: (any RecordedWork)?

    /// Where each output goes in the store.
    public enum OutputNaming: Sendable {
        /// Content-addressed keys (`{source_hash}/{name}{variant}-{identity_short}.{ext}`).
        case template(KeyTemplate)
        /// `<source name>/<output name>[-<width>w].<ext>`, for people (`derive run --out`).
        case readable
    }

    /// What a running job is doing, as the worker reports it (`derive status`, the dashboard).
    public enum Stage: String, Sendable {
        /// `decode` covers reading the header, planning, decoding and finding faces; `encode`
        /// applying every output's chain and encoding it.
        case resolve, fetch, decode, encode, store
        /// A reprocess or revalidation task enqueuing its jobs (not a stage of this pipeline).
        case enqueue
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
        let fetched: FetchedSource
        do {
            fetched = try fetcher.fetch(source)
        } catch let error where error.sourceMissing {
            guard let placeholder = job.defaultImage else { throw error }
            fetched = try Self.defaultImage(placeholder, overlays: overlays, missing: error)
        }
        var image = fetched.image
        // Hashed once, before anything parses it: the content's hash finds recorded work.
        let sourceHash = ContentHash.sha256(image.bytes)
        image.sha256 = sourceHash
        timings.fetch = milliseconds(since: started)
        try checkCancelled()

        stage(.decode)
        var mark = DispatchTime.now().uptimeNanoseconds
        // pg_name / pg_embedded: the document's layers or embedded file stand in for it (the
        // hash stays the document's: recorded work is found by the content fetched).
        let selection = try job.psdSelection()
        if let selection {
            image = try engine.selecting(selection, from: image)
        }
        // What is recorded describes the image the outputs are made from: a selection's facts
        // (size, format, perceptual hash, faces) are recorded as an asset of their own, under
        // the hash of the document's hash and the selection, not over the document's row, so
        // that reusing one selection's outputs never reports another's facts.
        let recordHash = Self.recordHash(sourceHash: sourceHash, selection: selection)
        let inspection = try engine.inspect(image)
        timings.header = milliseconds(since: mark)
        mark = DispatchTime.now().uptimeNanoseconds
        let plan = try self.plan(job, facts: inspection.facts)
        timings.plan = milliseconds(since: mark)
        let reusable = try reusableOutputs(plan, sourceHash: sourceHash, recordHash: recordHash)
        // By name and identity: the formats of a format set share the name, each its own identity.
        let missing = plan.outputs.filter { reusable.outputs[OutputIdentity($0)] == nil }
        let result: RenderResult
        // The plan as reported: every output, with the decode that was done.
        var reported = plan
        if missing.isEmpty, let asset = reusable.asset {
            var source = SourceMetadata(recorded: asset, inspection: inspection, image: image)
            source.sha256 = sourceHash
            result = RenderResult(source: source, outputs: [], timings: StageTimings())
        } else {
            let names = Set(missing.map(\.name))
            var toRender = plan
            if missing.count != plan.outputs.count {
                // Planned again for the outputs to make (their decode), less the formats of a
                // set that were recorded.
                let wanted = Set(missing.map(OutputIdentity.init))
                toRender = try self.plan(ResolvedJob(source: job.source, outputs: job.outputs.filter { names.contains($0.name) }, preset: job.preset, asset: job.asset),
                                         facts: inspection.facts)
                toRender.outputs.removeAll { !wanted.contains(OutputIdentity($0)) }
            }
            reported.decode = toRender.decode
            result = try engine.render(toRender, source: image, inspection: inspection, overlays: overlays) { phase in
                if phase == .outputs { stage(.encode) }
            }
        }
        try checkCancelled()

        stage(.store)
        mark = DispatchTime.now().uptimeNanoseconds
        var keys: [StorageKey] = []
        for output in result.outputs { keys.append(try self.key(for: output, sourceHash: result.source.sha256, location: result.source.location)) }
        // fl_getinfo: a JSON document beside the image, under its key with `.json` added.
        var infoKeys: [StorageKey?] = []
        for (output, key) in zip(result.outputs, keys) {
            infoKeys.append(plan.outputs.first { $0.name == output.name }?.encoding.getInfo == true ? try StorageKey(key.value + ".json") : nil)
        }
        if !keys.isEmpty { try beforeStoring(keys + infoKeys.compactMap { $0 }) }
        var stored: [OutputIdentity: [(RenderedOutput, StoredObject)]] = [:]
        var infos: [String: String] = [:]
        for (index, (output, key)) in zip(result.outputs, keys).enumerated() {
            let object = try store.put(output.data, key: key, contentType: output.metadata.format.mediaType)
            stored[OutputIdentity(name: output.name, identity: output.identity), default: []].append((output, object))
            if let infoKey = infoKeys[index] {
                let document = JSONWriter.pretty(GetInfo.document(source: result.source, output: output)) + "\n"
                infos[object.key.value] = try store.put(Array(document.utf8), key: infoKey, contentType: "application/json").url
            }
        }
        // Every output in the plan's order, the reused ones where they were recorded (the
        // widths of a step-spaced breakpoint set are planned outputs of one name and identity).
        var outputs: [RenderedOutput] = [], objects: [StoredObject] = []
        var seen: Set<OutputIdentity> = []
        for planned in plan.outputs where seen.insert(OutputIdentity(planned)).inserted {
            for (output, object) in reusable.outputs[OutputIdentity(planned)] ?? stored[OutputIdentity(planned)] ?? [] {
                outputs.append(output)
                objects.append(object)
            }
        }
        timings.store = milliseconds(since: mark)
        var report = JobReport(plan: reported, result: RenderResult(source: result.source, outputs: outputs, timings: result.timings),
                               locations: objects.map(\.url), keys: objects.map(\.key.value), timings: timings, totalMilliseconds: milliseconds(since: started),
                               fetched: fetched.origin == .file ? nil : fetched, decoded: !missing.isEmpty)
        report.infoLocations = infos
        var record = DerivationRecord(report: report, resolved: job, stored: objects, sourceURL: source)
        record.asset.sha256 = recordHash
        return Outcome(report: report, record: record)
    }

    /// The hash the record of a job's source is kept under: the content's, or for a PSD
    /// selection (`pg_name:`, `pg_embedded:`) the hash of the document's hash and the selection.
    public static func recordHash(sourceHash: String, selection: PSDSelection?) -> String {
        guard let selection else { return sourceHash }
        return ContentHash.sha256(Array("\(sourceHash) pg_\(selection.cloudinaryText)".utf8))
    }

    /// `d_`: the default image, loaded as overlays are, in place of a source that does not
    /// exist. Its own failure says both what was missing and why the default could not stand in.
    static func defaultImage(_ name: String, overlays: any OverlayLoader, missing: DeriveError) throws(DeriveError) -> FetchedSource {
        let image: SourceImage
        do {
            image = try overlays.load(name)
        } catch {
            throw error.prefixed("\(missing.detail); and the default image d_\(name.replacingOccurrences(of: "/", with: ":"))")
        }
        guard let format = ImageSniffer.format(of: image.bytes) else {
            throw DeriveError(.unsupportedFormat, "\(missing.detail); and the default image \(Quoted(name)) is not an image format Derive recognises")
        }
        return FetchedSource(image: image, format: format, finalLocation: image.location, origin: .file, transferredBytes: 0)
    }

    private func plan(_ job: ResolvedJob, facts: SourceFacts) throws(DeriveError) -> Plan {
        do {
            return try planner.plan(job, source: facts)
        } catch {
            throw DeriveError(error)
        }
    }

    /// What an earlier run recorded for this content, by output name and identity (each format
    /// of a format set is an output of its own identity under the set's name, reused only if
    /// that format was recorded): each output whose rows are current, whose keys are the ones
    /// this pipeline would write, and whose objects are in the store. An output with any of
    /// that missing is derived again, whole (every width of a breakpoint set). The record is
    /// found by `recordHash` (a PSD selection's own), the keys are made with `sourceHash`.
    func reusableOutputs(_ plan: Plan, sourceHash: String, recordHash: String) throws(DeriveError) -> (asset: AssetRecord?, outputs: [OutputIdentity: [(RenderedOutput, StoredObject)]]) {
        guard let recordedWork, case .template = naming else { return (nil, [:]) }
        var identities: [OutputIdentity] = []
        for planned in plan.outputs where !identities.contains(OutputIdentity(planned)) {
            identities.append(OutputIdentity(planned))
        }
        guard let recorded = try recordedWork.recorded(sourceSHA256: recordHash, outputs: identities) else { return (nil, [:]) }
        var outputs: [OutputIdentity: [(RenderedOutput, StoredObject)]] = [:]
        outputs: for identity in identities {
            let rows = recorded.derivatives(of: identity)
            guard !rows.isEmpty else { continue }
            var reused: [(RenderedOutput, StoredObject)] = []
            for row in rows {
                guard let output = RenderedOutput(reusing: row), let key = try? StorageKey(row.storageKey),
                      (try? self.key(for: output, sourceHash: sourceHash, location: "")) == key, try store.exists(key) else { continue outputs }
                reused.append((output, StoredObject(key: key, url: row.url, bytes: row.bytes)))
            }
            outputs[identity] = reused
        }
        return (recorded.asset, outputs)
    }

    func key(for output: RenderedOutput, sourceHash: String, location: String) throws(DeriveError) -> StorageKey {
        switch naming {
        case .template(let template):
            return try template.key(KeyTemplate.Values(
                sourceHash: sourceHash, name: output.name, identity: output.identity, breakpointWidth: output.breakpointWidth,
                width: output.metadata.width, height: output.metadata.height, format: output.metadata.format))
        case .readable:
            let suffix = output.breakpointWidth.map { "-\($0)w" } ?? ""
            return try StorageKey("\(Self.readableStem(location))/\(output.name)\(suffix).\(output.metadata.format.fileExtension)")
        }
    }

    /// A source's name without folders or extension, made safe for a key: `photo` for
    /// `/pictures/photo.jpg` or `https://example.com/a/photo.jpg?x=1`.
    static func readableStem(_ location: String) -> String {
        let path: String
        switch try? SourceAddress(location) {
        case .web(let url)?: path = URLComponents(string: url)?.path ?? ""
        case .s3(_, let key)?: path = key
        case .fileURL(let filePath)?, .path(let filePath)?: path = filePath
        case .data?, nil: path = ""
        }
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
        guard case .path = try SourceAddress(source) else { return try fetcher.fetch(source) }
        let image = try LocalFile.read(URL(fileURLWithPath: source), maxBytes: maxBytes)
        guard let format = ImageSniffer.format(of: image.bytes) else {
            throw DeriveError(.unsupportedFormat, "\(source) is not an image format Derive recognises")
        }
        return FetchedSource(image: image, format: format, finalLocation: source, origin: .file, transferredBytes: 0)
    }
}

extension OutputIdentity {
    /// A planned output's name and identity (the same for every width of a breakpoint set).
    init(_ planned: PlannedOutput) {
        self.init(name: planned.name, identity: planned.identity)
    }
}
