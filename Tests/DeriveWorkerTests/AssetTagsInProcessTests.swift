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

/// Values from the asset, end to end (issue 30, item 3): jobs with tags and context go through
/// the embedded SQLite queue and a worker in this process; the branch each takes is the one its
/// tags decide, and the asset's row keeps what the jobs gave it.
@Suite(.serialized) struct AssetTagsInProcessTests {
    @Test func conditionsReadTheJobsTagsAndTheRowKeepsThem() throws {
        let queue = try TestQueue(.sqlite)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-tags-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = Paths.fixture("photos/grace_hopper_noexif.jpg").path
        let chain = "if_!sale!_in_tags_and_ctx:!kind!_eq_!shoes!/c_scale,w_50/if_else/c_scale,w_20/if_end"
        func job(_ extra: KeyValuePairs<String, JSONValue>) -> NewJob {
            var members = [JSONMember(key: "version", value: .int(1)), JSONMember(key: "source", value: .string(photo)),
                           JSONMember(key: "outputs", value: .array([.object(["name": .string("t"), "chain": .string(chain)])]))]
            members += extra.map { JSONMember(key: $0.key, value: $0.value) }
            return NewJob(payload: .object(members))
        }

        let engine = try VipsEngine()
        let fetcher = LocalFirstFetcher(fetcher: try CurlFetcher(settings: FetchSettings()), maxBytes: 64 << 20)
        var pipeline = JobPipeline(engine: engine, planner: engine.planner, fetcher: fetcher, overlays: NoOverlays(),
                                   store: FileAssetStore(root: folder), naming: .template(.default),
                                   catalog: DatabasePresetCatalog(store: queue.store))
        pipeline.recordedWork = queue.store
        var settings = WorkerSettings(queues: ["default"])
        settings.slots = 1
        settings.untilIdle = true
        settings.pollInterval = 0.05
        settings.abandonedSweepInterval = 3600
        let quiet = Logger(label: "derive.worker") { _ in SwiftLogNoOpLogHandler() }
        func work() { _ = Worker(database: queue.store, pipeline: pipeline, settings: settings, logger: quiet).runBlocking() }

        // Tagged and in context: the if_ branch.
        _ = try queue.store.submit([job(["tags": .array([.string("sale"), .string("new")]), "context": .object(["kind": .string("shoes")])])])
        work()
        let id = try #require(try queue.store.recentAssets(before: nil, limit: 10, outputsPerAsset: 10).assets.first).id
        var detail = try #require(try queue.store.asset(id: id))
        #expect(detail.record.tags == ["sale", "new"])
        #expect(detail.record.context == ["kind": "shoes"])
        #expect(detail.derivatives.map(\.record.width) == [50])

        // The same content with no tags: the else branch, another output (not the one recorded
        // for the tagged job reused); the row keeps the tags the first job gave.
        _ = try queue.store.submit([job([:])])
        work()
        detail = try #require(try queue.store.asset(id: id))
        #expect(detail.derivatives.map(\.record.width).sorted() == [20, 50])
        #expect(detail.record.tags == ["sale", "new"])

        // Other tags replace them; the context, not named, stays.
        _ = try queue.store.submit([job(["tags": .array([.string("archive")])])])
        work()
        detail = try #require(try queue.store.asset(id: id))
        #expect(detail.record.tags == ["archive"])
        #expect(detail.record.context == ["kind": "shoes"])

        // A bad tag is a permanent invalid-job failure naming the field.
        let bad = try #require(try queue.store.submit([job(["tags": .array([.string("a,b")])])]).first).id
        work()
        let failed = try #require(try queue.store.job(bad))
        #expect(failed.state == .failed)
        let errors = JSONWriter.compact(.array(failed.errors))
        #expect(errors.contains("tags[0]") && errors.contains("a tag cannot hold ','"), "\(errors)")
    }
}
