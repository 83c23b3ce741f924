import DeriveLanguage
import DeriveJobs
import Foundation
import AsyncAlgorithms
import Logging
import ServiceLifecycle
import Synchronization

/// `derive work`: claims jobs for its free slots, runs each through the pipeline, and records
/// the outcome — completions in batches with their asset and derivative rows, failures with
/// backoff, cancellations acknowledged. Long jobs get heartbeats; expired leases anywhere are
/// rescued and scheduled jobs promoted by whichever worker gets there first.
///
/// A swift-service-lifecycle `Service`: `run()` owns one task group whose children are the
/// slots, the heartbeats, the housekeeping (promotion, rescue, status, queue depth), the
/// scheduler, the listener, the sweeper and the completion batcher's archivers, while the
/// dispatcher runs in `run()` itself.
/// Graceful shutdown finishes jobs in flight within the grace period; cancellation (the
/// service group's grace expiring, a second signal, a cancelled test) releases them at once.
/// Blocking C calls never run on Swift's cooperative pool: a job runs on one of the slots'
/// threads and a database call on one of the housekeeping threads (`BlockingPool`), and every
/// one of those threads has ended when `run()` returns. Time comes from an injected clock.
///
/// Read in this order: this file (state, start and stop), `Worker+Dispatch` (claiming),
/// `Worker+Slots` (running a job and recording its end), `Worker+Housekeeping` (leases, rescue,
/// status, schedules, sweeps), `Worker+Shutdown`.
///
/// The database reaches it as a `WorkerDatabase`: the queue, and the parts a deployment adds
/// (status registry, schedules, write ledger, derivation tables), each of which it uses when
/// given; on the in-memory queue its behaviour is tested in process.
public final class Worker: Service, Sendable {
    /// What a run of the worker did.
    public struct Summary: Sendable, Equatable {
        public var finished: [String: Int]
        public var released: Int
        /// Jobs still running when the grace period ended (released, their results dropped).
        public var abandoned: Int = 0
    }

    /// How a run ended, as the worker counts it (`derive_jobs_total{outcome}`, the summary).
    public enum RunOutcome: String, Sendable, CaseIterable {
        case completed, retried, failed, cancelled, stale, released
    }

    /// What a running job is doing: the pipeline's stages, and `enqueue` for tasks.
    public typealias Stage = JobPipeline.Stage

    struct InFlight {
        var job: ClaimedJob
        var stage: Stage
        var since: Date
        /// When its lease was last taken or extended, on the worker's clock.
        var lastLease: Duration
        var cancelRequested = false
    }

    struct State {
        var pending: [ClaimedJob] = []
        var running: [JobID: InFlight] = [:]
        var stopping = false
        var immediately = false
        var inFlight: Int { pending.count + running.count }
    }

    let database: WorkerDatabase
    let pipeline: JobPipeline
    public let settings: WorkerSettings
    let notifier: (any WorkNotifier)?
    public let metrics: Metrics
    /// What `/healthz` and `/readyz` report.
    public let health: Health
    let logger: Logger
    let state = Mutex(State())
    /// Rung when a slot frees, a notification arrives, or a stop is asked for.
    let doorbell = Doorbell()
    /// Claimed jobs on their way from the dispatcher to a free slot.
    let handoff = AsyncChannel<ClaimedJob>()
    let clock: WorkerClock
    let startedAt = Date()
    let completions: CompletionBatcher
    /// What the last `run()` did.
    let lastSummary = Mutex<Summary?>(nil)

    /// A worker on every part of one PostgreSQL or SQLite store.
    public convenience init(database: any DeriveDatabase, pipeline: JobPipeline, settings: WorkerSettings,
                            notifier: (any WorkNotifier)? = nil, metrics: Metrics = Metrics(), health: Health = Health(),
                            clock: WorkerClock = .continuous, logger: Logger = Logger(label: "derive.worker")) {
        self.init(database: WorkerDatabase(database), pipeline: pipeline, settings: settings, notifier: notifier, metrics: metrics,
                  health: health, clock: clock, logger: logger)
    }

    public init(database: WorkerDatabase, pipeline: JobPipeline, settings: WorkerSettings, notifier: (any WorkNotifier)? = nil,
                metrics: Metrics = Metrics(), health: Health = Health(), clock: WorkerClock = .continuous,
                logger: Logger = Logger(label: "derive.worker")) {
        self.database = database
        self.clock = clock
        self.health = health
        self.pipeline = pipeline
        self.settings = settings
        self.notifier = notifier
        self.metrics = metrics
        self.logger = logger
        // Completions are retried for about a lease: after that the job has been rescued and
        // recording it would be refused anyway.
        completions = CompletionBatcher(store: database.queue, settings: CompletionBatcher.Settings(attempts: 14), startsThreads: false) { batch, result in
            switch result {
            case .success(let done):
                metrics.increment(.jobs, ["outcome": RunOutcome.completed.rawValue], by: done.count)
                for completion in batch where !done.contains(completion.run.id) {
                    logger.warning("completion refused: the job is no longer this run's (its lease expired and it was rescued)",
                                   metadata: ["job": "\(completion.run.id)", "attempt": "\(completion.run.attempt)"])
                }
            case .failure(let error):
                metrics.increment(.databaseErrors)
                logger.error("could not record completed jobs; their leases will expire and they will run again",
                             metadata: ["jobs": .array(batch.map { .stringConvertible($0.run.id) }), "error": "\(error)"])
            }
        }
    }

    /// Asks the worker to stop: no more claims; in-flight jobs get the grace period, or are
    /// released at once when `immediately`.
    public func stop(immediately: Bool = false) {
        state.withLock { state in
            state.stopping = true
            if immediately { state.immediately = true }
        }
        doorbell.ring()
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    /// Tells the worker a job was just queued in its process (`derive serve` working its own
    /// queue): it claims at once instead of at its next poll.
    public func wake() {
        doorbell.ring()
    }

    /// `Service`: runs until graceful shutdown (jobs in flight finish within the grace period)
    /// or cancellation (they are released at once). `summary` says what it did.
    public func run() async {
        let summary = await work()
        lastSummary.withLock { $0 = summary }
    }

    /// What the last `run()` did; nil before it returned.
    public var summary: Summary? { lastSummary.withLock { $0 } }

    /// Runs until stopped (or, with `untilIdle`, until the queues are empty). Returns after
    /// in-flight jobs have finished or been released, with every completion recorded, and
    /// every thread it started has ended (but for one still in a job past the grace period).
    public func work() async -> Summary {
        let executor = WorkerExecutor(name: "derive-worker")
        let summary = await withTaskExecutorPreference(executor) { await self.workOnOwnThread() }
        await executor.close()
        return summary
    }

    /// `work()` for a caller on a thread of its own (tests, tools): blocks that thread until
    /// the worker has stopped. The worker's task starts on its own thread, so it needs nothing
    /// from Swift's cooperative pool, even to begin.
    public func runBlocking() -> Summary {
        let executor = WorkerExecutor(name: "derive-worker")
        let result = Mutex<Summary?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: executor) {
            let summary = await self.workOnOwnThread()
            result.withLock { $0 = summary }
            done.signal()
        }
        done.wait()
        executor.closeAndWait()
        let summary = result.withLock { $0! }
        lastSummary.withLock { $0 = summary }
        return summary
    }

    private func workOnOwnThread() async -> Summary {
        metrics.set(.slots, to: Double(settings.slots))
        logger.info("worker started", metadata: [
            "worker": "\(settings.id)", "queues": .array(settings.queues.map { .string($0) }), "slots": "\(settings.slots)",
            "lease": "\(settings.lease)",
        ])
        let slotThreads = BlockingPool(name: "derive-slot", threads: settings.slots)
        // One thread for each task below that calls the database or the store, so none waits
        // for another: dispatcher, heartbeats, housekeeping, scheduler, listener, sweeper.
        let serviceThreads = BlockingPool(name: "derive-db", threads: 6)
        // The completion batcher's archivers: each blocks in a transaction while slots go on.
        let archiverThreads = BlockingPool(name: "derive-archive", threads: completions.archivers)
        let summary = await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withTaskGroup(of: Void.self, returning: Summary.self) { group in
                    for _ in 0..<settings.slots {
                        group.addTask { await self.slot(on: slotThreads) }
                    }
                    for _ in 0..<completions.archivers {
                        // Not cancellable: an archiver ends once the shutdown closes the batcher
                        // and what was added is archived.
                        group.addTask { _ = await archiverThreads.run(cancellable: false) { self.completions.archive() } }
                    }
                    group.addTask { await self.heartbeats(on: serviceThreads) }
                    group.addTask { await self.housekeeping(on: serviceThreads) }
                    if let interval = settings.schedulerInterval, let schedules = database.schedules {
                        group.addTask { await self.scheduler(schedules, every: interval, on: serviceThreads) }
                    }
                    if let notifier {
                        group.addTask { await self.listen(to: notifier, on: serviceThreads) }
                    }
                    if let interval = settings.abandonedSweepInterval {
                        group.addTask { await self.sweepAbandonedWrites(every: interval, on: serviceThreads) }
                    }
                    await dispatch(on: serviceThreads)
                    let summary = await shutDown(on: serviceThreads)
                    // A slot whose job outran the grace period returns now (its thread finishes
                    // the job alone; the result is dropped); the others have ended with the
                    // handoff, and the periodic tasks end their sleep.
                    group.cancelAll()
                    return summary
                }
            } onGracefulShutdown: {
                self.stop()
            }
        } onCancel: {
            self.stop(immediately: true)
        }
        slotThreads.close()
        serviceThreads.close()
        archiverThreads.close()
        // A slot thread still in an abandoned job is not waited for; every other thread ends
        // within moments (a sweep of a large folder store may take longer: said, not waited for).
        if summary.abandoned == 0, await !slotThreads.joined(timeout: 10) {
            logger.warning("stopped with a job thread still running")
        }
        if await !archiverThreads.joined(timeout: 10) {
            logger.warning("stopped with a completion archiver still running")
        }
        if await !serviceThreads.joined(timeout: 10) {
            logger.warning("stopped with a thread still running (a sweep that takes long)")
        }
        return summary
    }
}
