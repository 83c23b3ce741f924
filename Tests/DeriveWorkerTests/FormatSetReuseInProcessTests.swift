import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveSQLite
import DeriveTestSupport
import DeriveVips
import DeriveWorker
import Foundation
import Logging
import Testing

/// Reuse of recorded work for an output with a format set (`"formats": [...]`): each format is
/// an output of its own identity under the output's one name, so reuse is decided per format.
/// A set that runs after one of its formats was recorded reuses that one and makes the others
/// (it used to look the name up by its first format only, reuse that and make nothing else).
@Suite(.serialized) struct FormatSetReuseInProcessTests {
    @Test func aFormatSetMakesTheFormatsNotYetRecordedAndReusesTheOthers() throws {
        let queue = try TestQueue(.sqlite)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-format-set-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = Paths.fixture("photos/grace_hopper_noexif.jpg").path
        func job(_ settings: KeyValuePairs<String, JSONValue>) -> NewJob {
            var output = [JSONMember(key: "name", value: .string("p")), JSONMember(key: "chain", value: .string("c_scale,w_40"))]
            output += settings.map { JSONMember(key: $0.key, value: $0.value) }
            return NewJob(payload: .object([JSONMember(key: "version", value: .int(1)), JSONMember(key: "source", value: .string(photo)),
                                            JSONMember(key: "outputs", value: .array([.object(output)]))]))
        }

        let engine = try VipsEngine()
        let fetcher = LocalFirstFetcher(fetcher: try CurlFetcher(settings: FetchSettings()), maxBytes: 64 << 20)
        let store = FileAssetStore(root: folder)
        var pipeline = JobPipeline(engine: engine, planner: engine.planner, fetcher: fetcher, overlays: NoOverlays(),
                                   store: store, naming: .template(.default), catalog: DatabasePresetCatalog(store: queue.store))
        pipeline.recordedWork = queue.store
        var settings = WorkerSettings(queues: ["default"])
        settings.slots = 1
        settings.untilIdle = true
        settings.pollInterval = 0.05
        settings.abandonedSweepInterval = 3600
        let quiet = Logger(label: "derive.worker") { _ in SwiftLogNoOpLogHandler() }
        /// Runs one job; its report's outputs as (format, reused, key), and whether it decoded.
        func run(_ newJob: NewJob) throws -> (outputs: [(format: String, reused: Bool, key: String)], decoded: Bool) {
            let id = try #require(try queue.store.submit([newJob]).first).id
            _ = Worker(database: queue.store, pipeline: pipeline, settings: settings, logger: quiet).runBlocking()
            let finished = try #require(try queue.store.job(id))
            #expect(finished.state == .completed, "\(JSONWriter.compact(.array(finished.errors)))")
            let result = try #require(finished.result)
            guard case .array(let outputs)? = result["outputs"] else { Issue.record("no outputs in \(JSONWriter.compact(result))"); return ([], true) }
            return (outputs.map { output in
                guard case .string(let format)? = output["format"], case .string(let key)? = output["key"] else { return ("", false, "") }
                return (format, output["reused"] == .bool(true), key)
            }, result["source"]?["decode"] != .null)
        }

        // JPEG alone: recorded.
        let jpeg = try run(job(["format": .string("jpeg")]))
        #expect(jpeg.outputs.map(\.format) == ["jpeg"] && jpeg.decoded)

        // The set after it: the JPEG reused, the WebP and the PNG made (with one decode).
        let set = try run(job(["formats": .array([.string("jpeg"), .string("webp"), .string("png")])]))
        #expect(set.outputs.map(\.format) == ["jpeg", "webp", "png"])
        #expect(set.outputs.map(\.reused) == [true, false, false])
        #expect(set.outputs.first?.key == jpeg.outputs.first?.key, "the recorded JPEG is the set's JPEG: same identity, same key")
        #expect(set.decoded)
        for output in set.outputs { #expect(try store.exists(try StorageKey(output.key)), "\(output.key)") }
        let id = try #require(try queue.store.recentAssets(before: nil, limit: 10, outputsPerAsset: 10).assets.first).id
        let detail = try #require(try queue.store.asset(id: id))
        #expect(Set(detail.derivatives.map(\.record.format)) == ["jpeg", "webp", "png"])
        // Each row's chain is its own format's (the one its chain_hash is of), not the set's first.
        for derivative in detail.derivatives { #expect(derivative.record.chain["format"] == .string(derivative.record.format)) }

        // The same set again: everything recorded, nothing decoded; in another order, the same.
        let again = try run(job(["formats": .array([.string("png"), .string("jpeg"), .string("webp")])]))
        #expect(again.outputs.map(\.format) == ["png", "jpeg", "webp"])
        #expect(again.outputs.allSatisfy(\.reused) && !again.decoded)
        #expect(Set(again.outputs.map(\.key)) == Set(set.outputs.map(\.key)))

        // A set whose first format is recorded and another is not: only that one is made.
        let wider = try run(job(["formats": .array([.string("webp"), .string("avif")])]))
        #expect(wider.outputs.map(\.format) == ["webp", "avif"])
        #expect(wider.outputs.map(\.reused) == [true, false])
    }
}
