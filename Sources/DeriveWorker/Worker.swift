import DeriveCore
import Foundation
import Logging
import Synchronization

/// `derive work`: claims jobs for its free slots, runs each through the pipeline, and records
/// the outcome — completions in batches with their asset and derivative rows, failures with
/// backoff, cancellations acknowledged. Long jobs get heartbeats; expired leases anywhere are
/// rescued and scheduled jobs promoted by whichever worker gets there first.
///
/// Threads: the caller's thread runs the dispatcher (`run()`); each slot is a thread of its
/// own, because decoding and encoding block; a listener thread turns notifications into
/// wake-ups, a sweeper removes abandoned writes. They share one locked `State` and wake the
/// dispatcher through one semaphore, and every one of them has ended when `run()` returns.
///
/// Read in this order: this file (state, start and stop), `Worker+Dispatch` (claiming),
/// `Worker+Slots` (running a job and recording its end), `Worker+Housekeeping` (leases, rescue,
/// status, schedules, sweeps), `Worker+Shutdown`.
///
/// The database reaches it as a `WorkerDatabase`: the queue, and the parts a deployment adds
/// (status registry, schedules, write ledger, derivation tables), each of which it uses when
/// given; on the in-memory queue its behaviour is tested in process.
public final class Worker: Sendable {
    /// What a run of the worker did.
    public struct Summary: Sendable, Equatable {
        public var finished: [String: Int]
        public var released: Int
    }

    /// How a run ended, as the worker counts it (`derive_jobs_total{outcome}`, the summary).
    public enum RunOutcome: String, Sendable, CaseIterable {
        case completed, retried, failed, cancelled, stale, released
    }

    /// What a running job is doing, as `derive status` and the dashboard show it.
    public enum Stage: String, Sendable {
        case resolve, fetch, decode, store
        /// A reprocess or revalidation task enqueuing its jobs.
        case enqueue

        init(_ stage: JobPipeline.Stage) {
            switch stage {
            case .resolve: self = .resolve
            case .fetch: self = .fetch
            case .decode: self = .decode
            case .store: self = .store
            }
        }
    }

    struct InFlight {
        var job: ClaimedJob
        var stage: Stage
        var since: Date
        var lastLease: UInt64
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
    /// Signalled when a slot frees, a notification arrives, or a stop is asked for.
    let wake = DispatchSemaphore(value: 0)
    /// One signal per job handed to the slots.
    let work = DispatchSemaphore(value: 0)
    let startedAt = Date()
    let completions: CompletionBatcher
    /// The threads `run()` starts, which it waits for before returning.
    let threads = DispatchGroup()

    /// A worker on every part of one PostgreSQL or SQLite store.
    public convenience init(database: any DeriveDatabase, pipeline: JobPipeline, settings: WorkerSettings,
                            notifier: (any WorkNotifier)? = nil, metrics: Metrics = Metrics(), health: Health = Health(),
                            logger: Logger = Logger(label: "derive.worker")) {
        self.init(database: WorkerDatabase(database), pipeline: pipeline, settings: settings, notifier: notifier, metrics: metrics,
                  health: health, logger: logger)
    }

    public init(database: WorkerDatabase, pipeline: JobPipeline, settings: WorkerSettings, notifier: (any WorkNotifier)? = nil,
                metrics: Metrics = Metrics(), health: Health = Health(), logger: Logger = Logger(label: "derive.worker")) {
        self.database = database
        self.health = health
        self.pipeline = pipeline
        self.settings = settings
        self.notifier = notifier
        self.metrics = metrics
        self.logger = logger
        // Completions are retried for about a lease: after that the job has been rescued and
        // recording it would be refused anyway.
        completions = CompletionBatcher(store: database.queue, settings: CompletionBatcher.Settings(attempts: 14)) { batch, result in
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
        wake.signal()
    }

    /// Runs until stopped (or, with `untilIdle`, until the queues are empty). Returns after
    /// in-flight jobs have finished or been released, with every completion recorded.
    public func run() -> Summary {
        metrics.set(.slots, to: Double(settings.slots))
        logger.info("worker started", metadata: [
            "worker": "\(settings.id)", "queues": .array(settings.queues.map { .string($0) }), "slots": "\(settings.slots)",
            "lease": "\(settings.lease)",
        ])
        for index in 0..<settings.slots {
            start("derive-slot-\(index)") { [self] in slot() }
        }
        if let interval = settings.abandonedSweepInterval {
            start("derive-sweeper") { [self] in sweepAbandonedWrites(every: interval) }
        }
        if let notifier {
            start("derive-listener") { [self] in
                while !state.withLock({ $0.stopping }) {
                    if notifier.wait(timeout: 1) { wake.signal() }
                }
            }
        }
        dispatch()
        return shutDown()
    }

    /// Starts a thread that `run()` waits for, named for `top -H`, `gdb` and `/proc` (Linux
    /// keeps 15 characters; Foundation's `Thread.name` does not reach the kernel, and Swift's
    /// Glibc module does not offer `pthread_setname_np`, so the thread writes its own `comm`).
    func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        threads.enter()
        let thread = Thread { [threads] in
            try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            body()
            threads.leave()
        }
        thread.name = name
        thread.start()
    }
}
