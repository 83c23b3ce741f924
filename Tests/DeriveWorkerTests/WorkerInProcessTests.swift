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

/// The worker created in the test's own process, on the embedded SQLite queue and a folder:
/// what a subprocess test cannot see, such as the threads it leaves behind.
@Suite(.serialized) struct WorkerInProcessTests {
    /// The names of this process's threads (`/proc/self/task/*/comm`).
    static func threadNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// Threads only a `Worker` names so (no other test starts a worker in process; the
    /// completion batcher's threads are left out, since its own tests start some).
    static func workerThreads() throws -> [String] {
        // The worker's own thread, its slots', its housekeeping's and its archivers' (Linux
        // keeps 15 characters of a name).
        try threadNames().filter { name in ["derive-worker", "derive-slot", "derive-db", "derive-archive"].contains { name.hasPrefix($0) } }
    }

    @Test func noThreadOutlivesRun() throws {
        let queue = try TestQueue(.sqlite)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-inprocess-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = Paths.fixture("photos/grace_hopper_noexif.jpg").path
        let ids = try queue.store.submit((0..<4).map { index in
            NewJob(payload: .object(["version": .int(1), "source": .string(photo),
                                     "outputs": .array([.object(["name": .string("t"), "chain": .string("c_scale,w_\(40 + index)")])])]))
        }).map(\.id)

        let engine = try VipsEngine()
        let fetcher = LocalFirstFetcher(fetcher: try CurlFetcher(settings: FetchSettings()), maxBytes: 64 << 20)
        let pipeline = JobPipeline(engine: engine, planner: engine.planner, fetcher: fetcher, overlays: NoOverlays(),
                                   store: FileAssetStore(root: folder), naming: .template(.default),
                                   catalog: DatabasePresetCatalog(store: queue.store))
        var settings = WorkerSettings(queues: ["default"])
        settings.slots = 3
        settings.untilIdle = true
        settings.pollInterval = 0.05
        settings.abandonedSweepInterval = 3600
        #expect(try Self.workerThreads().isEmpty)
        let quiet = Logger(label: "derive.worker") { _ in SwiftLogNoOpLogHandler() }
        let summary = Worker(database: queue.store, pipeline: pipeline, settings: settings, logger: quiet).runBlocking()

        #expect(summary.finished["completed"] == 4)
        for id in ids { #expect(try queue.store.job(id)?.state == .completed) }
        // A thread past its body takes a moment to leave the task list; one still looping never does.
        try waitUntil("the worker's threads have ended", timeout: 1) { try Self.workerThreads().isEmpty }
    }
}
