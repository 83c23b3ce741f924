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
/// The database reaches it as a `WorkerDatabase`: the queue, and the parts a deployment adds
/// (status registry, schedules, write ledger, derivation tables), each of which it uses when
/// given; on the in-memory queue its behaviour is tested in process.
public final class Worker: Sendable {
    /// What a run of the worker did.
    public struct Summary: Sendable, Equatable {
        public var finished: [String: Int]
        public var released: Int
    }

    private struct InFlight {
        var job: ClaimedJob
        var stage: String
        var since: Date
        var lastLease: UInt64
        var cancelRequested = false
    }

    private struct State {
        var pending: [ClaimedJob] = []
        var running: [JobID: InFlight] = [:]
        var stopping = false
        var immediately = false
        var inFlight: Int { pending.count + running.count }
    }

    private let database: WorkerDatabase
    private let pipeline: JobPipeline
    public let settings: WorkerSettings
    private let notifier: (any WorkNotifier)?
    public let metrics: Metrics
    /// What `/healthz` and `/readyz` report.
    public let health: Health
    private let logger: Logger
    private let state = Mutex(State())
    /// Signalled when a slot frees, a notification arrives, or a stop is asked for.
    private let wake = DispatchSemaphore(value: 0)
    /// One signal per job handed to the slots.
    private let work = DispatchSemaphore(value: 0)
    private let startedAt = Date()
    private let completions: CompletionBatcher
    /// The threads `run()` starts, which it waits for before returning.
    private let threads = DispatchGroup()

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
                metrics.increment(.jobs, ["outcome": "completed"], by: done.count)
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
    private func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        threads.enter()
        let thread = Thread { [threads] in
            try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            body()
            threads.leave()
        }
        thread.name = name
        thread.start()
    }

    // MARK: Dispatching

    private func dispatch() {
        var maintenance = Maintenance()
        var failures = 0
        while !state.withLock({ $0.stopping }) {
            health.looped()
            maintain(&maintenance)
            let free = settings.slots - state.withLock { $0.inFlight }
            metrics.set(.slotsBusy, to: Double(settings.slots - free))
            if free > 0 {
                do {
                    let jobs = try database.queue.claim(queues: settings.queues, limit: free, owner: settings.id, lease: settings.lease)
                    health.database(nil)
                    failures = 0
                    if !jobs.isEmpty {
                        hand(jobs)
                        // A full batch: there may be more; claim again as soon as a slot frees.
                        if jobs.count == free { continue }
                    } else if settings.untilIdle, state.withLock({ $0.inFlight }) == 0, try queuesAreIdle() {
                        logger.info("the queues are empty: stopping (--until-idle)")
                        break
                    }
                } catch {
                    failures += 1
                    health.database(error)
                    metrics.increment(.databaseErrors)
                    let delay = Backoff(base: 0.5, factor: 2, maximum: 30).ceiling(attempt: failures)
                    logger.warning("cannot claim jobs; trying again", metadata: ["error": "\(error)", "retryIn": "\(delay)"])
                    _ = wake.wait(timeout: .now() + delay)
                    continue
                }
            }
            // Idle waits end in time for the next schedule check and housekeeping tick.
            let idle = min(free > 0 ? settings.pollInterval : 1, settings.schedulerInterval ?? 1, settings.tickInterval)
            _ = wake.wait(timeout: .now() + idle)
        }
    }

    private func hand(_ jobs: [ClaimedJob]) {
        state.withLock { $0.pending += jobs }
        for job in jobs {
            logger.debug("claimed", metadata: ["job": "\(job.run.id)", "attempt": "\(job.run.attempt)", "queue": "\(job.queue)"])
            work.signal()
        }
    }

    /// No job available, running or waiting to be retried in the worker's queues. A retry is
    /// work begun (its claim's answer may have been lost with a connection, and its lease
    /// rescued): stopping before it would leave a batch unfinished. Jobs submitted to run
    /// later wait for a later worker.
    private func queuesAreIdle() throws(DeriveError) -> Bool {
        _ = try database.queue.promoteScheduled(limit: 1000)
        let counts = try database.queue.counts().filter { settings.queues.contains($0.queue) }
        return counts.allSatisfy { ($0.states[.available] ?? 0) == 0 && ($0.states[.running] ?? 0) == 0 && $0.retrying == 0 }
    }

    // MARK: Housekeeping

    private struct Maintenance {
        var nextTick: UInt64 = 0
        var nextRescue: UInt64 = 0
        var nextStatus: UInt64 = 0
        var nextQueueDepth: UInt64 = 0
        var nextSchedule: UInt64 = 0
        /// The fire each schedule last had handled here, so a tick does not ask again.
        var handledFires: [String: Date] = [:]
    }

    /// Every tick (a second): promote due jobs and extend long jobs' leases; every few seconds: rescue
    /// expired leases, report status and, when metrics are served, read the queue depth. Database errors here are logged
    /// and tried again next time.
    private func maintain(_ schedule: inout Maintenance) {
        let now = DispatchTime.now().uptimeNanoseconds
        // Schedules keep their own time: a fire is due at its second, not at the next tick.
        if let interval = settings.schedulerInterval, let store = database.schedules, now >= schedule.nextSchedule {
            schedule.nextSchedule = now + UInt64(interval * 1e9)
            runSchedules(store, &schedule.handledFires)
        }
        guard now >= schedule.nextTick else { return }
        schedule.nextTick = now + UInt64(settings.tickInterval * 1e9)
        heartbeat(now: now)
        attempt("promote scheduled jobs") { () throws(DeriveError) in
            let promoted = try database.queue.promoteScheduled(limit: 1000)
            if promoted > 0 { logger.debug("promoted scheduled jobs", metadata: ["count": "\(promoted)"]) }
        }
        if now >= schedule.nextRescue {
            schedule.nextRescue = now + UInt64(settings.rescueInterval * 1e9)
            probeStore()
            if settings.deleteSuperseded, let derivations = database.derivations { deleteSupersededOutputs(derivations) }
            attempt("rescue expired leases") { () throws(DeriveError) in
                let rescue = try database.queue.rescueExpired(limit: 1000, policy: settings.retryPolicy)
                if !rescue.requeued.isEmpty || !rescue.failed.isEmpty {
                    logger.warning("rescued jobs whose workers stopped heartbeating", metadata: [
                        "requeued": .array(rescue.requeued.map { .stringConvertible($0) }),
                        "failed": .array(rescue.failed.map { .stringConvertible($0) }),
                    ])
                }
            }
        }
        if now >= schedule.nextStatus {
            schedule.nextStatus = now + UInt64(settings.statusInterval * 1e9)
            reportStatus()
        }
        if let interval = settings.queueDepthInterval, now >= schedule.nextQueueDepth {
            schedule.nextQueueDepth = now + UInt64(interval * 1e9)
            attempt("read the queue depth") { () throws(DeriveError) in
                let counts = try database.queue.counts()
                metrics.replace(.queueDepth, with: counts.flatMap { queue in
                    queue.states.map { (["queue": queue.queue, "state": $0.key.rawValue], Double($0.value)) }
                })
                metrics.replace(.oldestAvailableSeconds, with: counts.compactMap { queue in
                    queue.oldestAvailable.map { (["queue": queue.queue], max(0, Date().timeIntervalSince($0))) }
                })
            }
        }
    }

    /// Enqueues each schedule's due fire. Every worker may do this: the fire is recorded in the
    /// transaction that enqueues its job, and a fire already recorded is skipped, so it
    /// happens once however many workers see it.
    private func runSchedules(_ store: any ScheduleStore, _ handled: inout [String: Date]) {
        let schedules: [Schedule]
        do {
            schedules = try store.schedules()
        } catch {
            metrics.increment(.databaseErrors)
            logger.warning("could not read the schedules", metadata: ["error": "\(error)"])
            return
        }
        let now = Date()
        for schedule in schedules where schedule.enabled {
            let due: Date?
            do {
                due = try schedule.dueFire(at: now)
            } catch {
                logger.warning("schedule has an invalid cron expression", metadata: ["schedule": "\(schedule.name)", "error": "\(error)"])
                continue
            }
            guard let due, handled[schedule.name] != due else { continue }
            do {
                let job = try schedule.job(firedAt: due)
                if let id = try store.fire(schedule.name, at: due, job: job) {
                    metrics.increment(.scheduleFires, ["schedule": schedule.name])
                    logger.info("schedule fired", metadata: ["schedule": "\(schedule.name)", "fireTime": "\(Int(due.timeIntervalSince1970))",
                                                             "job": "\(id)"])
                }
                handled[schedule.name] = due
            } catch let error as ValidationError {
                logger.warning("schedule has an invalid action", metadata: ["schedule": "\(schedule.name)", "error": "\(error)"])
                handled[schedule.name] = due
            } catch {
                metrics.increment(.databaseErrors)
                logger.warning("could not fire a schedule", metadata: ["schedule": "\(schedule.name)", "error": "\(error)"])
            }
        }
    }

    /// Reads a key that does not exist: the store answers (nothing) when it is reachable and
    /// the credentials are good.
    private func probeStore() {
        do {
            _ = try pipeline.store.get(try StorageKey(Self.probeKey))
            health.store(nil)
        } catch {
            health.store(error)
            logger.warning("the store does not answer", metadata: ["error": "\(error)"])
        }
    }

    static let probeKey = "derive-health/probe"

    /// Deletes the objects, then the rows, of outputs a newer preset version replaced: up to
    /// a thousand per call, so a large backlog does not stall the dispatcher.
    private func deleteSupersededOutputs(_ derivations: any ReprocessStore) {
        for _ in 0..<5 where deleteSupersededBatch(derivations) == 200 {}
    }

    /// One batch; returns how many outputs it found.
    @discardableResult
    private func deleteSupersededBatch(_ derivations: any ReprocessStore) -> Int {
        var found = 0
        attempt("delete superseded outputs") { () throws(DeriveError) in
            let superseded = try derivations.supersededOutputs(limit: 200)
            found = superseded.count
            guard !superseded.isEmpty else { return }
            var deleted: [Int64] = []
            for output in superseded {
                do {
                    try pipeline.store.delete(try StorageKey(output.storageKey))
                    deleted.append(output.id)
                } catch {
                    logger.warning("could not delete a superseded output", metadata: ["key": "\(output.storageKey)", "error": "\(error)"])
                }
            }
            try derivations.deleteDerivatives(deleted)
            metrics.increment(.supersededDeleted, by: deleted.count)
            logger.info("deleted superseded outputs", metadata: ["count": "\(deleted.count)"])
        }
        return found
    }

    /// Removes, every `interval` seconds, the temporary files and multipart uploads that
    /// writers killed mid-write left in the store. On a thread of its own: walking a large
    /// folder store takes a while, and the dispatcher must keep claiming and heartbeating.
    /// The first sweep comes within a minute of starting (at a random moment, so workers
    /// started together do not sweep together), so short-lived workers sweep too.
    private func sweepAbandonedWrites(every interval: Double) {
        var due = Date().addingTimeInterval(Double.random(in: 0..<min(interval, 60)))
        while true {
            while Date() < due {
                if state.withLock({ $0.stopping }) { return }
                Thread.sleep(forTimeInterval: min(1, max(0, due.timeIntervalSinceNow)))
            }
            if state.withLock({ $0.stopping }) { return }
            due = Date().addingTimeInterval(interval)
            let cutoff = Date().addingTimeInterval(-settings.abandonedAfter)
            report(sweeping: "abandoned writes", counting: .abandonedWritesRemoved,
                   "removed writes that interrupted writers left in the store") { () throws(DeriveError) in
                try pipeline.store.removeAbandonedWrites(olderThan: cutoff)
            }
            guard let ledger = database.ledger else { continue }
            report(sweeping: "unrecorded writes", counting: .unrecordedWritesRemoved,
                   "removed objects that runs wrote and never recorded (their source changed before the retry)") {
                () throws(DeriveError) in try ledger.sweepUnrecordedWrites(in: pipeline.store, olderThan: cutoff)
            }
        }
    }

    /// Runs one sweep, counts what it removed and logs what it removed and what it could not.
    private func report(sweeping what: String, counting metric: MetricName, _ removedMessage: Logger.Message,
                        _ sweep: () throws(DeriveError) -> AbandonedWriteSweep) {
        do {
            let sweep = try sweep()
            metrics.increment(metric, by: sweep.removed.count)
            if !sweep.removed.isEmpty {
                logger.info(removedMessage, metadata: [
                    "count": "\(sweep.removed.count)", "removed": .array(sweep.removed.prefix(20).map { .string($0) }),
                ])
            }
            if !sweep.failures.isEmpty {
                logger.warning("could not remove some \(what); trying again at the next sweep", metadata: [
                    "count": "\(sweep.failures.count)", "failures": .array(sweep.failures.prefix(20).map { .string($0) }),
                ])
            }
        } catch {
            logger.warning("could not look for \(what)", metadata: ["error": "\(error)"])
        }
    }

    /// Extends the leases of jobs running longer than a third of a lease, and passes on
    /// cancellation requests.
    private func heartbeat(now: UInt64) {
        let interval = UInt64(settings.lease / 3 * 1e9)
        let due = state.withLock { state in state.running.values.filter { now - $0.lastLease >= interval }.map(\.job.run) }
        guard !due.isEmpty else { return }
        attempt("extend leases") { () throws(DeriveError) in
            let result = try database.queue.heartbeat(due, lease: settings.lease)
            state.withLock { state in
                for run in due where result.extended.contains(run.id) { state.running[run.id]?.lastLease = now }
                for id in result.cancelRequested { state.running[id]?.cancelRequested = true }
            }
            for run in due where !result.extended.contains(run.id) {
                logger.warning("lost the lease of a running job: another worker may run it; this run's result will be refused",
                               metadata: ["job": "\(run.id)", "attempt": "\(run.attempt)"])
            }
            for id in result.cancelRequested { logger.info("cancel requested", metadata: ["job": "\(id)"]) }
        }
    }

    /// Jobs finished so far, by outcome.
    private var finished: [String: Int] {
        var counts: [String: Int] = [:]
        for outcome in Self.outcomes {
            let value = metrics.value(.jobs, ["outcome": outcome])
            if value > 0 { counts[outcome] = value }
        }
        return counts
    }

    static let outcomes = ["completed", "retried", "failed", "cancelled", "stale", "released"]

    private func reportStatus(stopping: Bool = false) {
        let finished = self.finished
        let status = state.withLock { state in
            WorkerStatus(id: settings.id, host: WorkerSettings.hostName(), pid: Int(ProcessInfo.processInfo.processIdentifier),
                         queues: settings.queues, slots: settings.slots, startedAt: startedAt, seenAt: Date(),
                         running: state.running.values.sorted { $0.job.run.id < $1.job.run.id }.map {
                             WorkerStatus.RunningJob(id: $0.job.run.id, stage: $0.stage, since: $0.since)
                         }, finished: finished, stopping: stopping || state.stopping)
        }
        guard let registry = database.registry else { return }
        attempt("report status") { () throws(DeriveError) in try registry.report(status) }
    }

    private func attempt(_ what: String, _ body: () throws(DeriveError) -> Void) {
        do {
            try body()
        } catch {
            metrics.increment(.databaseErrors)
            logger.warning("could not \(what)", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Slots

    private func slot() {
        while true {
            work.wait()
            let next: ClaimedJob? = state.withLock { state in
                guard !state.stopping || !state.immediately, !state.pending.isEmpty else { return nil }
                let job = state.pending.removeFirst()
                state.running[job.run.id] = InFlight(job: job, stage: "resolve", since: Date(), lastLease: DispatchTime.now().uptimeNanoseconds)
                return job
            }
            guard let job = next else {
                if state.withLock({ $0.stopping }) { return }
                continue
            }
            execute(job)
            state.withLock { _ = $0.running.removeValue(forKey: job.run.id) }
            wake.signal()
        }
    }

    private func execute(_ job: ClaimedJob) {
        let run = job.run
        let started = DispatchTime.now().uptimeNanoseconds
        var log = logger
        log[metadataKey: "job"] = "\(run.id)"
        log[metadataKey: "attempt"] = "\(run.attempt)"
        log[metadataKey: "queue"] = "\(job.queue)"
        do throws(DeriveError) {
            if case .string(let task)? = job.payload["task"] {
                let result = try runTask(task, job: job)
                completions.add(Completion(run: run, result: result))
                metrics.observe(.jobSeconds, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
                log.info("task done", metadata: ["task": "\(task)", "result": "\(JSONWriter.compact(result))"])
                return
            }
            let resolved = try pipeline.resolve(job.payload)
            guard let source = resolved.source else { throw DeriveError(.invalidJob, "source: is missing") }
            log[metadataKey: "source"] = "\(Redacted.url(source))"
            let outcome = try pipeline.run(resolved, source: source, stage: { [self] stage in
                state.withLock { $0.running[run.id]?.stage = stage.rawValue }
            }, isCancelled: { [self] in
                state.withLock { $0.running[run.id]?.cancelRequested ?? false }
            }, beforeStoring: { [self] keys throws(DeriveError) in
                try database.ledger?.noteWrites(keys.map(\.value), store: pipeline.store.identity, job: run.id)
            })
            observe(outcome.report, started: started)
            guard completions.add(Completion(run: run, result: outcome.report.json, record: outcome.record)) else {
                log.warning("job finished after the worker released it on stopping; not recorded (its next run records it)")
                return
            }
            log.info("job done", metadata: [
                "outputs": "\(outcome.report.result.outputs.count)", "reused": "\(outcome.report.reusedOutputs)",
                "ms": "\(Int(outcome.report.totalMilliseconds))",
                "asset": "\(outcome.record.asset.sha256.prefix(16))",
            ])
        } catch {
            if state.withLock({ $0.running[run.id]?.cancelRequested ?? false }) {
                finish(run, as: "cancelled", log: log) { () throws(DeriveError) in _ = try database.queue.acknowledgeCancel([run]) }
                return
            }
            var outcome = FailureOutcome.stale
            finish(run, as: nil, log: log) { () throws(DeriveError) in
                outcome = try database.queue.fail([Failure(run: run, error: error)], policy: settings.retryPolicy)[run.id] ?? .stale
            }
            let name: String
            switch outcome {
            case .retrying(let delay):
                name = "retried"
                log.warning("job failed; it will be tried again", metadata: [
                    "error": "\(error.code.rawValue)", "detail": "\(error.detail)", "retryIn": "\(Int(delay.rounded()))",
                ])
            case .failed:
                name = "failed"
                log.error("job failed", metadata: ["error": "\(error.code.rawValue)", "detail": "\(error.detail)",
                                                   "retryable": "\(error.isRetryable)"])
            case .cancelled:
                name = "cancelled"
                log.info("job cancelled")
            case .stale:
                name = "stale"
                log.warning("job failed after its lease was lost; its new run decides", metadata: ["error": "\(error)"])
            }
            metrics.increment(.jobs, ["outcome": name])
        }
    }

    /// Jobs that are not derivations: expanding a reprocess or revalidation (what schedules
    /// enqueue), and checking one source with its origin.
    private func runTask(_ task: String, job: ClaimedJob) throws(DeriveError) -> JSONValue {
        guard let derivations = database.derivations else {
            throw DeriveError(.invalidJob, "task: \(Quoted(task)) needs the asset and derivative tables, which this worker's queue does not have")
        }
        switch task {
        case "reprocess", "revalidate":
            let plan: ReprocessPlan
            do {
                plan = try ReprocessPlan(task: job.payload)
            } catch {
                throw DeriveError(error)
            }
            state.withLock { $0.running[job.run.id]?.stage = "enqueue" }
            return try Reprocessor(database: derivations).enqueue(plan).json
        case "check-source":
            guard case .string(let source)? = job.payload["source"] else { throw DeriveError(.invalidJob, "source: is missing") }
            state.withLock { $0.running[job.run.id]?.stage = "fetch" }
            return try SourceCheck(database: derivations, fetcher: pipeline.fetcher).run(source, queue: job.queue, priority: job.priority)
        default:
            throw DeriveError(.invalidJob, "task: \(Quoted(task)) is not a task Derive runs (reprocess, revalidate, check-source)")
        }
    }

    /// Records a run's end, trying again for a while if the database is away.
    private func finish(_ run: JobRun, as outcome: String?, log: Logger, _ record: () throws(DeriveError) -> Void) {
        for attempt in 1...8 {
            do {
                try record()
                if let outcome {
                    metrics.increment(.jobs, ["outcome": outcome])
                    log.info("job \(outcome)")
                }
                return
            } catch {
                metrics.increment(.databaseErrors)
                guard error.isRetryable, attempt < 8 else {
                    log.error("could not record the job's outcome; its lease will expire and it will be rescued", metadata: ["error": "\(error)"])
                    return
                }
                Thread.sleep(forTimeInterval: Backoff(base: 0.2, factor: 2, maximum: 5).ceiling(attempt: attempt))
            }
        }
    }

    private func observe(_ report: JobReport, started: UInt64) {
        let t = report.timings, r = report.result.timings
        var stages = [("fetch", t.fetch), ("header", t.header), ("plan", t.plan), ("store", t.store)]
        if report.decoded { stages += [("decode", r.decode), ("metadata", r.metadata)] }
        for (stage, milliseconds) in stages {
            metrics.observe(.stageSeconds, ["stage": stage], seconds: milliseconds / 1000)
        }
        let reused = report.reusedOutputs
        if reused > 0 { metrics.increment(.outputs, ["outcome": "reused"], by: reused) }
        if report.result.outputs.count > reused {
            metrics.increment(.outputs, ["outcome": "derived"], by: report.result.outputs.count - reused)
        }
        for output in report.result.outputs where !output.reused {
            metrics.observe(.stageSeconds, ["stage": "apply"], seconds: output.metadata.applyMilliseconds / 1000)
            metrics.observe(.stageSeconds, ["stage": "encode"], seconds: output.metadata.encodeMilliseconds / 1000)
        }
        metrics.observe(.jobSeconds, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        if let fetched = report.fetched {
            metrics.increment(.fetches, ["origin": fetched.origin.rawValue])
            metrics.increment(.fetchBytes, by: fetched.transferredBytes)
        } else {
            metrics.increment(.fetches, ["origin": "file"])
        }
    }

    // MARK: Stopping

    private func shutDown() -> Summary {
        // Jobs claimed but not started go straight back.
        var leftovers = state.withLock { state in
            state.stopping = true
            defer { state.pending.removeAll() }
            return state.pending.map(\.run)
        }
        let busy = state.withLock { $0.running.count }
        if busy > 0 {
            logger.info("stopping: waiting for jobs in flight", metadata: ["jobs": "\(busy)", "grace": "\(settings.grace)"])
            reportStatus(stopping: true)
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(settings.grace * 1e9)
        while true {
            let (running, immediately) = state.withLock { ($0.running.count, $0.immediately) }
            let now = DispatchTime.now().uptimeNanoseconds
            if running == 0 || immediately || now >= deadline { break }
            health.looped()
            heartbeat(now: now)
            _ = wake.wait(timeout: .now() + min(settings.tickInterval, Double(deadline - now) / 1e9))
        }
        let abandoned = state.withLock { state in state.running.values.map(\.job.run) }
        leftovers += abandoned
        var released = 0
        if !leftovers.isEmpty {
            for attempt in 1...5 {
                do {
                    released = try database.queue.release(leftovers).count
                    break
                } catch {
                    logger.warning("could not release jobs", metadata: ["error": "\(error)"])
                    if attempt < 5 { Thread.sleep(forTimeInterval: Double(attempt)) }
                }
            }
            metrics.increment(.jobs, ["outcome": "released"], by: released)
            logger.info("released unfinished jobs without spending an attempt", metadata: [
                "jobs": .array(leftovers.map { .stringConvertible($0.id) }), "released": "\(released)",
            ])
        }
        completions.close()
        // What the last completions superseded goes too, not at some later worker's tick.
        if settings.deleteSuperseded, let derivations = database.derivations { deleteSupersededOutputs(derivations) }
        if let registry = database.registry {
            attempt("remove this worker from the status list") { () throws(DeriveError) in try registry.forgetWorker(settings.id) }
        }
        for _ in 0..<settings.slots { work.signal() }
        // The listener and the sweeper look at `stopping` at least once a second, and idle
        // slots end at once. A slot whose job outran the grace period is not waited for: its
        // job is released, and what it finishes is dropped (`CompletionBatcher.add`).
        if abandoned.isEmpty, threads.wait(timeout: .now() + 10) == .timedOut {
            logger.warning("stopped with a thread still running (a sweep that takes long)")
        }
        let finished = self.finished
        logger.info("worker stopped", metadata: ["finished": .dictionary(finished.mapValues { .stringConvertible($0) }),
                                                 "released": "\(released)"])
        return Summary(finished: finished, released: released)
    }
}
