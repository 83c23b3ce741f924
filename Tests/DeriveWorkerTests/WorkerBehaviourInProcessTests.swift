import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveTestSupport
import DeriveVips
import DeriveWorker
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// The worker's behaviour, in this process, in milliseconds: shutdown with jobs in flight,
/// grace expiry, heartbeats and cancellation, lease loss and stale completion, rescue, retries
/// and backoff, a database outage. The queue is the in-memory one (held to the same
/// conformance suite as PostgreSQL and SQLite), on a clock the test moves where leases and
/// backoffs matter; the pipeline is the real one (libvips, a folder store); only the moment a
/// source arrives, or that it fails, is the test's to choose. The subprocess tests prove the
/// binary, the signals and the real servers end to end. Nested in `WorkerInProcessTests`,
/// which runs serially: its thread count must not see these workers' threads.
extension WorkerInProcessTests {
    @Suite struct Behaviour {
        @Test func jobsInFlightFinishOnStopAndWaitingJobsStayForTheNextWorker() throws {
            let rig = try Rig(slots: 2)
            let ids = try rig.submit(["a", "b", "c"], held: true)
            let running = try rig.start()
            try waitUntil("two jobs are fetching", timeout: 10) { rig.fetcher.startedCount == 2 }
            running.stop()
            rig.fetcher.letThroughAll()
            let summary = try running.wait()

            #expect(summary.finished["completed"] == 2 && summary.released == 0)
            let states = try ids.map { try #require(try rig.queue.job($0)) }
            #expect(states.filter { $0.state == .completed }.count == 2)
            let waiting = try #require(states.first { $0.state != .completed })
            #expect(waiting.state == .available && waiting.attempt == 0)
            #expect(rig.queue.records.count == 2)
        }

        @Test func aJobStillRunningWhenTheGraceEndsIsReleasedAndItsLateResultIsDropped() throws {
            let rig = try Rig(slots: 1, grace: 0.2)
            let id = try #require(try rig.submit(["slow"], held: true).first)
            let running = try rig.start()
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            running.stop()
            let summary = try running.wait(timeout: 5)
            #expect(summary.released == 1 && summary.finished["completed"] == nil)
            let released = try #require(try rig.queue.job(id))
            #expect(released.state == .available && released.attempt == 0 && released.errors.isEmpty)

            // The abandoned run finishes afterwards: nothing it produced is recorded.
            rig.fetcher.letThroughAll()
            Thread.sleep(forTimeInterval: 0.5)
            #expect(try rig.queue.job(id)?.state == .available && rig.queue.records.isEmpty)
        }

        /// Every thread the worker starts is named (so the thread check below sees it) and ends
        /// with its run: its own, a slot's, the housekeeping's, the archivers'.
        @Test func theWorkersThreadsAreNamedAndEndWithIt() throws {
            let rig = try Rig(slots: 1)
            _ = try rig.submit(["threads"], held: true)
            let running = try rig.start()
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            let names = try WorkerInProcessTests.workerThreads()
            for kind in ["derive-worker", "derive-slot", "derive-db", "derive-archive"] {
                #expect(names.contains { $0.hasPrefix(kind) }, "no \(kind) thread among \(names)")
            }
            running.stop()
            rig.fetcher.letThroughAll()
            _ = try running.wait()
            // A thread past its body takes a moment to leave the task list.
            try waitUntil("the worker's threads have ended", timeout: 2) { try WorkerInProcessTests.workerThreads().isEmpty }
        }

        /// The grace period on the worker's injected clock: thirty seconds pass when the test
        /// says, not in real time.
        @Test func theGracePeriodIsTheWorkersClocks() throws {
            // The queue on real time: its status list keeps what was reported in the last hour
            // of its own clock. The worker's time is the test's.
            let rig = try Rig(slots: 1, grace: 30, realTime: true)
            let id = try #require(try rig.submit(["slow"], held: true).first)
            let running = try rig.start(onTestClock: true)
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            running.stop()
            // Not released before the clock reaches the end of the grace period...
            try waitUntil("the worker says it is stopping", timeout: 5) {
                try rig.queue.workers(seenSince: .distantPast).first?.stopping == true
            }
            rig.clock.advance(by: 29)
            Thread.sleep(forTimeInterval: 0.2)
            #expect(try rig.queue.job(id)?.state == .running)
            // ...and at once after it.
            let before = Date()
            rig.clock.advance(by: 2)
            let summary = try running.wait(timeout: 5)
            #expect(Date().timeIntervalSince(before) < 3)
            #expect(summary.released == 1 && summary.abandoned == 1)
            #expect(try rig.queue.job(id)?.state == .available)
        }

        /// In a swift-service-lifecycle service group, as `derive work` runs it: graceful
        /// shutdown lets the job in flight finish; cancellation releases it at once.
        @Test(arguments: [false, true]) func inAServiceGroup(cancelled: Bool) async throws {
            let rig = try Rig(slots: 1, grace: 30)
            let id = try #require(try rig.submit(["in-group"], held: true).first)
            let quiet = Logger(label: "derive.worker") { _ in SwiftLogNoOpLogHandler() }
            let worker = Worker(database: WorkerDatabase(queue: rig.queue, registry: rig.queue), pipeline: rig.pipeline,
                                settings: rig.settings, logger: quiet)
            let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [.init(service: worker)], logger: quiet))
            let running = Task { try await group.run() }
            while rig.fetcher.startedCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
            if cancelled {
                running.cancel()
            } else {
                await group.triggerGracefulShutdown()
                try await Task.sleep(for: .milliseconds(100))
                #expect(try rig.queue.job(id)?.state == .running)
                rig.fetcher.letThroughAll()
            }
            try await running.value
            let summary = try #require(worker.summary)
            if cancelled {
                #expect(summary.released == 1 && summary.finished["completed"] == nil)
                #expect(try rig.queue.job(id)?.state == .available)
            } else {
                #expect(summary.released == 0 && summary.finished["completed"] == 1)
                #expect(try rig.queue.job(id)?.state == .completed)
            }
        }

        @Test func stoppingImmediatelyReleasesWithoutWaitingForTheGrace() throws {
            let rig = try Rig(slots: 1, grace: 30)
            let id = try #require(try rig.submit(["slow"], held: true).first)
            let running = try rig.start()
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            let asked = Date()
            running.stop(immediately: true)
            let summary = try running.wait(timeout: 5)
            #expect(Date().timeIntervalSince(asked) < 3 && summary.released == 1)
            #expect(try rig.queue.job(id)?.state == .available)
            rig.fetcher.letThroughAll()
        }

        /// Leases of a third of a second, heartbeats every tenth: a job held for a second is never
        /// rescued by anyone, and completes on its first attempt.
        @Test func heartbeatsKeepALongJobLeased() throws {
            let rig = try Rig(slots: 1, lease: 0.3, realTime: true)
            let id = try #require(try rig.submit(["long"], held: true).first)
            let running = try rig.start(untilIdle: true)
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            let end = Date().addingTimeInterval(1)
            while Date() < end {
                #expect(try rig.queue.rescueExpired(limit: 10, policy: retryAtOnce).requeued.isEmpty)
                Thread.sleep(forTimeInterval: 0.05)
            }
            rig.fetcher.letThroughAll()
            let summary = try running.wait()
            #expect(summary.finished["completed"] == 1)
            let done = try #require(try rig.queue.job(id))
            #expect(done.state == .completed && done.attempt == 1)
        }

        @Test func cancellingARunningJobStopsItAtItsNextHeartbeat() throws {
            let rig = try Rig(slots: 1, lease: 0.3, realTime: true)
            let id = try #require(try rig.submit(["doomed"], held: true).first)
            let running = try rig.start(untilIdle: true)
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            #expect(try rig.queue.cancel(id) == .requested)
            // A heartbeat (every 0.1 s here) carries the request to the run, which stops at its next stage.
            Thread.sleep(forTimeInterval: 0.4)
            rig.fetcher.letThroughAll()
            let summary = try running.wait()
            #expect(summary.finished["cancelled"] == 1 && summary.finished["completed"] == nil)
            #expect(try rig.queue.job(id)?.state == .cancelled && rig.queue.records.isEmpty)
        }

        /// The worker stalls past its lease (the test moves the clock two minutes); the job is
        /// rescued and another worker holds it. What the first run says afterwards is refused.
        @Test func aRunThatLostItsLeaseCannotOverwriteTheNewRun() throws {
            let rig = try Rig(slots: 1, lease: 60)
            let id = try #require(try rig.submit(["stalled"], held: true).first)
            let running = try rig.start()
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            rig.clock.advance(by: 120)
            _ = try rig.queue.rescueExpired(limit: 10, policy: retryAtOnce)
            try waitUntil("the job is rescued", timeout: 5) { try rig.queue.job(id)?.state == .available }
            let second = try #require(try rig.queue.claim(queues: ["default"], limit: 1, owner: "other-worker", lease: 60).first).run
            #expect(second.attempt == 2)

            rig.fetcher.letThroughAll()
            running.stop()
            let summary = try running.wait()
            #expect(summary.finished["completed"] == nil)
            let snapshot = try #require(try rig.queue.job(id))
            #expect(snapshot.state == .running && snapshot.leaseOwner == "other-worker" && snapshot.attempt == 2)
            #expect(rig.queue.records.isEmpty)
            #expect(try rig.queue.complete([Completion(run: second)]) == [id])
        }

        /// A job whose worker died (claimed, never heard from again) is rescued by this worker once
        /// its lease has expired on the queue's clock, and runs to completion on its second attempt.
        @Test func aDeadWorkersJobIsRescuedAndRunOnce() throws {
            let rig = try Rig(slots: 1, lease: 60)
            let id = try #require(try rig.submit(["orphan"], held: false).first)
            _ = try rig.queue.claim(queues: ["default"], limit: 1, owner: "dead-worker", lease: 60)
            let running = try rig.start(untilIdle: true)
            Thread.sleep(forTimeInterval: 0.2)
            #expect(try rig.queue.job(id)?.leaseOwner == "dead-worker")
            rig.clock.advance(by: 120)
            let summary = try running.wait()

            #expect(summary.finished["completed"] == 1)
            let done = try #require(try rig.queue.job(id))
            #expect(done.state == .completed && done.attempt == 2)
            #expect(done.errors.count == 1 && done.errors.first?["code"] == .string("interrupted"))
            #expect(rig.queue.records.map(\.job) == [id])
            // The job's error and the rescuer's log name the dead worker as the likely cause, in the same words.
            guard case .string(let detail)? = done.errors.first?["detail"] else { throw Missing() }
            #expect(detail.hasPrefix(#"its worker "dead-worker" died while running it (attempt 1;"#)
                && detail.hasSuffix("lease lost 1 of 3 times — a job that keeps ending its workers is failed at the 3rd loss"), "\(detail)")
            let rescues = rig.logged.lines.withLock { $0 }.filter { $0.contains(" warning rescued job ") }
            #expect(rescues.count == 1 && rescues.first?.contains("rescued job \(id) (requeued): \(detail) attempt=1 job=\(id) outcome=requeued") == true,
                    "\(rescues)")
        }

        /// A passing failure waits out its backoff on the queue's clock: not run again before it,
        /// run again (and completed) once the clock has passed it.
        @Test func aPassingFailureIsRetriedAfterItsBackoff() throws {
            let rig = try Rig(slots: 1)
            let id = try #require(try rig.submit(["flaky"], held: false).first)
            rig.fetcher.fail(rig.source("flaky"), with: [DeriveError(.sourceUnavailable, "origin answered 503", retryAfter: 300)])
            let running = try rig.start(untilIdle: true)
            try waitUntil("the first attempt failed", timeout: 10) { try rig.queue.job(id)?.errors.count == 1 }
            Thread.sleep(forTimeInterval: 0.3)
            let waiting = try #require(try rig.queue.job(id))
            #expect(waiting.state == .scheduled && waiting.attempt == 1 && rig.fetcher.startedCount == 1)

            rig.clock.advance(by: 3600)
            let summary = try running.wait()
            #expect(summary.finished["retried"] == 1 && summary.finished["completed"] == 1)
            let done = try #require(try rig.queue.job(id))
            #expect(done.state == .completed && done.attempt == 2 && done.errors.first?["code"] == .string("source_unavailable"))
        }

        @Test func aBadSourceFailsItsJobAtOnceAndTheWorkerGoesOn() throws {
            let rig = try Rig(slots: 1)
            let missing = try #require(try rig.queue.submit([rig.job(source: rig.folder.appendingPathComponent("missing.jpg").path)]).first).id
            let good = try #require(try rig.submit(["good"], held: false).first)
            let summary = try rig.start(untilIdle: true).wait()
            #expect(summary.finished["failed"] == 1 && summary.finished["completed"] == 1)
            let failed = try #require(try rig.queue.job(missing))
            #expect(failed.state == .failed && failed.attempt == 1 && failed.errors.first?["retryable"] == .bool(false))
            #expect(try rig.queue.job(good)?.state == .completed)
        }

        /// The database goes away while a job runs: claims back off, the completion is retried,
        /// and when the database answers again the job is recorded once.
        @Test func aDatabaseOutageIsRiddenOut() throws {
            let rig = try Rig(slots: 1, realTime: true)
            let id = try #require(try rig.submit(["during-outage"], held: true).first)
            let running = try rig.start(untilIdle: true)
            try waitUntil("the job is fetching", timeout: 10) { rig.fetcher.startedCount == 1 }
            rig.queue.failCalls(with: DeriveError(.databaseUnavailable, "connection refused", retryable: true))
            rig.fetcher.letThroughAll()
            Thread.sleep(forTimeInterval: 0.6)
            #expect(throws: DeriveError.self) { try rig.queue.job(id) }
            rig.queue.failCalls(with: nil)
            let summary = try running.wait(timeout: 20)
            #expect(summary.finished["completed"] == 1)
            #expect(try rig.queue.job(id)?.state == .completed && rig.queue.records.map(\.job) == [id])
        }

        @Test func theStatusListShowsEachRunningJobsStageAndForgetsTheWorkerWhenItStops() throws {
            let rig = try Rig(slots: 1, realTime: true)
            let id = try #require(try rig.submit(["watched"], held: true).first)
            let running = try rig.start()
            try waitUntil("the status shows the job fetching", timeout: 10) {
                let status = try rig.queue.workers(seenSince: .distantPast)
                return status.first?.running.first.map { $0.id == id && $0.stage == "fetch" } ?? false
            }
            #expect(try rig.queue.workers(seenSince: .distantPast).map(\.id) == [rig.settings.id])
            rig.fetcher.letThroughAll()
            running.stop()
            _ = try running.wait()
            #expect(try rig.queue.workers(seenSince: .distantPast).isEmpty)
        }
    }
}

/// A clock the test moves by hand: the in-memory queue's time (`date`, for leases and
/// backoff) and, as a `Clock`, the worker's (`WorkerClock(clock)`: its ticks, polls and grace
/// period pass only when the test advances it).
final class TestClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var date = Date(timeIntervalSince1970: 1_800_000_000)
        var offset = Duration.zero
        var sleepers: [UUID: Sleeper] = [:]
    }

    private let state = Mutex(State())

    var date: Date { state.withLock { $0.date } }

    var now: Instant { state.withLock { Instant(offset: $0.offset) } }

    var minimumResolution: Duration { .nanoseconds(1) }

    func advance(by seconds: Double) {
        let due = state.withLock { state in
            state.date = state.date.addingTimeInterval(seconds)
            state.offset += .nanoseconds(Int64(seconds * 1e9))
            let due = state.sleepers.filter { $0.value.deadline.offset <= state.offset }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// How many sleeps are waiting for the clock to move.
    var sleeping: Int { state.withLock { $0.sleepers.count } }
}

extension TestClock {
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let answer: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline.offset <= state.offset { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let answer { continuation.resume(with: answer) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                defer { state.sleepers[id] = nil }
                return state.sleepers[id]
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}

/// The real fetcher, with a gate the test opens and failures the test scripts.
final class GatedFetcher: SourceFetcher {
    private struct State {
        var held: Set<String> = []
        var failures: [String: [DeriveError]] = [:]
        var started = 0
    }

    private let inner: any SourceFetcher
    private let state = Mutex(State())

    init(_ inner: any SourceFetcher) {
        self.inner = inner
    }

    var startedCount: Int { state.withLock { $0.started } }

    func hold(_ source: String) {
        state.withLock { _ = $0.held.insert(source) }
    }

    func letThroughAll() {
        state.withLock { $0.held.removeAll() }
    }

    func fail(_ source: String, with errors: [DeriveError]) {
        state.withLock { $0.failures[source, default: []] += errors }
    }

    func fetch(_ source: String) throws(DeriveError) -> FetchedSource {
        state.withLock { $0.started += 1 }
        while state.withLock({ $0.held.contains(source) }) { Thread.sleep(forTimeInterval: 0.005) }
        let failure = state.withLock { state -> DeriveError? in
            guard var pending = state.failures[source], !pending.isEmpty else { return nil }
            let first = pending.removeFirst()
            state.failures[source] = pending
            return first
        }
        if let failure { throw failure }
        return try inner.fetch(source)
    }
}

/// The in-memory queue, the real pipeline on a folder, and a worker's settings with short
/// ticks: everything one behaviour test needs.
final class Rig: @unchecked Sendable {
    let clock = TestClock()
    let queue: MemoryJobQueue
    let fetcher: GatedFetcher
    let folder: URL
    let pipeline: JobPipeline
    var settings: WorkerSettings
    /// What the workers it started logged, as text lines. (A box of its own: a logger holding
    /// the rig would keep it, and the sources it holds back, alive as long as a worker thread.)
    let logged = LogLines()

    /// `realTime` runs the queue on the real clock (for heartbeats, whose cadence is real
    /// time); otherwise on `clock`, which only the test moves.
    init(slots: Int, lease: Double = 60, grace: Double = 5, retry: RetryPolicy = retryAtOnce, realTime: Bool = false) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-behaviour-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let testClock = clock
        queue = realTime ? MemoryJobQueue() : MemoryJobQueue(clock: { testClock.date })
        fetcher = GatedFetcher(LocalFirstFetcher(fetcher: try CurlFetcher(settings: FetchSettings()), maxBytes: 64 << 20))
        let engine = try VipsEngine()
        pipeline = JobPipeline(engine: engine, planner: engine.planner, fetcher: fetcher, overlays: NoOverlays(),
                               store: FileAssetStore(root: folder.appendingPathComponent("store")), naming: .template(.default),
                               catalog: InMemoryPresetCatalog([]))
        settings = WorkerSettings(id: "test-worker-\(UUID().uuidString.prefix(8))", queues: ["default"], slots: slots, lease: lease,
                                  pollInterval: 0.02, grace: grace, retryPolicy: retry, rescueInterval: 0.05, statusInterval: 0.05,
                                  schedulerInterval: nil)
        settings.tickInterval = 0.02
    }

    deinit {
        fetcher.letThroughAll()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A copy of the test photograph under its own name: one source per job.
    func source(_ name: String) -> String {
        folder.appendingPathComponent("\(name).jpg").path
    }

    func job(source: String) -> NewJob {
        NewJob(payload: .object(["version": .int(1), "source": .string(source),
                                 "outputs": .array([.object(["name": .string("t"), "chain": .string("c_scale,w_40")])])]))
    }

    func submit(_ names: [String], held: Bool) throws -> [JobID] {
        for name in names {
            let path = source(name)
            if !FileManager.default.fileExists(atPath: path) {
                try FileManager.default.copyItem(atPath: Paths.fixture("photos/grace_hopper_noexif.jpg").path, toPath: path)
            }
            if held { fetcher.hold(path) }
        }
        return try queue.submit(names.map { job(source: source($0)) }).map(\.id)
    }

    /// `onTestClock`: the worker's ticks, polls and grace period on `clock` too, so they pass
    /// only when the test advances it (else real time, short ticks).
    func start(untilIdle: Bool = false, onTestClock: Bool = false) throws -> RunningWorker {
        var settings = self.settings
        settings.untilIdle = untilIdle
        let logged = self.logged
        let logger = Logger(label: "derive.worker") { label in
            LogOutput(label: label, format: .text, level: .info) { line in logged.lines.withLock { $0.append(line) } }
        }
        let worker = Worker(database: WorkerDatabase(queue: queue, registry: queue), pipeline: pipeline, settings: settings,
                            clock: onTestClock ? WorkerClock(clock) : .continuous, logger: logger)
        return RunningWorker(worker)
    }
}

/// Log lines, collected.
final class LogLines: Sendable {
    let lines = Mutex<[String]>([])
}

/// `Worker.runBlocking()` on a thread of its own, so the test can act while it runs.
final class RunningWorker: Sendable {
    let worker: Worker
    private let summary = Mutex<Worker.Summary?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ worker: Worker) {
        self.worker = worker
        Thread { [self] in
            let result = worker.runBlocking()
            summary.withLock { $0 = result }
            done.signal()
        }.start()
    }

    func stop(immediately: Bool = false) {
        worker.stop(immediately: immediately)
    }

    /// Waits for `run()` to return; a worker still running after `timeout` fails the test.
    func wait(timeout: Double = 15) throws -> Worker.Summary {
        guard done.wait(timeout: .now() + timeout) == .success else {
            worker.stop(immediately: true)
            throw WorkerStillRunning(seconds: timeout)
        }
        return try #require(summary.withLock { $0 })
    }
}

struct WorkerStillRunning: Error, CustomStringConvertible {
    var seconds: Double
    var description: String { "the worker had not stopped after \(seconds) s" }
}
