import DeriveLanguage
import DeriveJobs
import Foundation
import Logging
import Synchronization

/// The worker's periodic tasks, each a child of `run()`'s task group calling the database on
/// the housekeeping threads: heartbeats; promotion, rescue, status reports, the queue depth and
/// superseded outputs; schedules; notifications; the sweep of abandoned writes. Database errors
/// here are logged and tried again next time.
extension Worker {
    /// Every tick (a second): extends the leases of long jobs and hears of cancellations. Goes
    /// on while jobs run in the grace period; ends when `run()` cancels it.
    func heartbeats(on threads: BlockingPool) async {
        while (try? await clock.sleep(.seconds(of: settings.tickInterval))) != nil {
            let now = clock.now()
            _ = await threads.run { [self] in heartbeat(now: now) }
        }
    }

    /// Every tick: promotes due jobs; every few seconds: rescues expired leases, reports
    /// status and, when metrics are served, reads the queue depth. Ends when stopping.
    func housekeeping(on threads: BlockingPool) async {
        var nextRescue = Duration.zero, nextStatus = Duration.zero, nextQueueDepth = Duration.zero
        while !isStopping {
            let now = clock.now()
            let rescue = now >= nextRescue, status = now >= nextStatus
            let queueDepth = settings.queueDepthInterval.map { _ in now >= nextQueueDepth } ?? false
            if rescue { nextRescue = now + .seconds(of: settings.rescueInterval) }
            if status { nextStatus = now + .seconds(of: settings.statusInterval) }
            if queueDepth, let interval = settings.queueDepthInterval { nextQueueDepth = now + .seconds(of: interval) }
            let done: Void? = await threads.run { [self] in
                maintain(rescue: rescue, status: status, queueDepth: queueDepth)
            }
            guard done != nil, (try? await clock.sleep(.seconds(of: settings.tickInterval))) != nil else { return }
        }
    }

    func maintain(rescue: Bool, status: Bool, queueDepth: Bool) {
        attempt("promote scheduled jobs") { () throws(DeriveError) in
            let promoted = try database.queue.promoteScheduled(limit: 1000)
            if promoted > 0 { logger.debug("promoted scheduled jobs", metadata: ["count": "\(promoted)"]) }
        }
        if rescue {
            probeStore()
            if settings.deleteSuperseded, let derivations = database.derivations { deleteSupersededOutputs(derivations) }
            attempt("rescue expired leases") { () throws(DeriveError) in
                let rescue = try database.queue.rescueExpired(limit: 1000, policy: settings.retryPolicy)
                // One line per job, in the words of its error: the likely cause of a worker's
                // death is named where an operator looks first.
                for run in rescue.rescued {
                    logger.warning("rescued job \(run.id) (\(run.outcome.rawValue)): \(run.detail)", metadata: [
                        "job": "\(run.id)", "attempt": "\(run.attempt)", "worker": "\(run.owner ?? "?")", "outcome": "\(run.outcome.rawValue)",
                    ])
                }
            }
        }
        if status { reportStatus() }
        if queueDepth {
            attempt("read the queue depth") { () throws(DeriveError) in
                let counts = try database.queue.counts()
                metrics.replace(.queueDepth, with: counts.flatMap { queue in
                    queue.states.map { (["queue": queue.queue, "state": $0.key.rawValue], Double($0.value)) }
                })
                metrics.replace(.oldestAvailableSeconds, with: counts.compactMap { queue in
                    queue.oldestAvailable.map { (["queue": queue.queue], max(0, Date().timeIntervalSince($0))) }
                })
                metrics.replace(.queuePaused, with: try database.queue.pausedQueues().map { (["queue": $0.queue], 1) })
            }
        }
    }

    /// Looks at the schedules every `interval` seconds (a fire is due at its second, not at
    /// the next tick) until stopping.
    func scheduler(_ store: any ScheduleStore, every interval: Double, on threads: BlockingPool) async {
        // The fire each schedule last had handled here, so a look does not ask again.
        let handled = Mutex<[String: Date]>([:])
        while !isStopping {
            let done: Void? = await threads.run { [self] in
                handled.withLock { runSchedules(store, &$0) }
            }
            guard done != nil, (try? await clock.sleep(.seconds(of: interval))) != nil else { return }
        }
    }

    /// Turns the database's notifications (PostgreSQL's LISTEN) into wake-ups of the
    /// dispatcher, so a submitted job starts without waiting for the next poll.
    func listen(to notifier: any WorkNotifier, on threads: BlockingPool) async {
        while !isStopping {
            guard let notified = await threads.run({ notifier.wait(timeout: 1) }) else { return }
            if notified { doorbell.ring() }
        }
    }

    /// Enqueues each schedule's due fire. Every worker may do this: the fire is recorded in the
    /// transaction that enqueues its job, and a fire already recorded is skipped, so it
    /// happens once however many workers see it.
    func runSchedules(_ store: any ScheduleStore, _ handled: inout [String: Date]) {
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
    func probeStore() {
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
    func deleteSupersededOutputs(_ derivations: any ReprocessStore) {
        for _ in 0..<5 where deleteSupersededBatch(derivations) == 200 {}
    }

    /// One batch; returns how many outputs it found.
    @discardableResult
    func deleteSupersededBatch(_ derivations: any ReprocessStore) -> Int {
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
    /// folder store takes a while. The first sweep comes within a minute of starting (at a
    /// random moment, so workers started together do not sweep together), so short-lived
    /// workers sweep too.
    func sweepAbandonedWrites(every interval: Double, on threads: BlockingPool) async {
        var delay = Double.random(in: 0..<min(interval, 60))
        while !isStopping {
            // Sleeps of a second at most, to see a stop promptly.
            let due = clock.now() + .seconds(of: delay)
            while clock.now() < due {
                if isStopping { return }
                guard (try? await clock.sleep(min(.seconds(1), due - clock.now()))) != nil else { return }
            }
            if isStopping { return }
            delay = interval
            let swept: Void? = await threads.run { [self] in
                let cutoff = Date().addingTimeInterval(-settings.abandonedAfter)
                report(sweeping: "abandoned writes", counting: .abandonedWritesRemoved,
                       "removed writes that interrupted writers left in the store") { () throws(DeriveError) in
                    try pipeline.store.removeAbandonedWrites(olderThan: cutoff)
                }
                guard let ledger = database.ledger else { return }
                report(sweeping: "unrecorded writes", counting: .unrecordedWritesRemoved,
                       "removed objects that runs wrote and never recorded (their source changed before the retry)") {
                    () throws(DeriveError) in try ledger.sweepUnrecordedWrites(in: pipeline.store, olderThan: cutoff)
                }
            }
            if swept == nil { return }
        }
    }

    /// Runs one sweep, counts what it removed and logs what it removed and what it could not.
    func report(sweeping what: String, counting metric: MetricName, _ removedMessage: Logger.Message,
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
    func heartbeat(now: Duration) {
        let interval = Duration.seconds(of: settings.lease / 3)
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
    var finished: [String: Int] {
        var counts: [String: Int] = [:]
        for outcome in RunOutcome.allCases.map(\.rawValue) {
            let value = metrics.value(.jobs, ["outcome": outcome])
            if value > 0 { counts[outcome] = value }
        }
        return counts
    }


    func reportStatus(stopping: Bool = false) {
        let finished = self.finished
        let status = state.withLock { state in
            WorkerStatus(id: settings.id, host: WorkerSettings.hostName(), pid: Int(ProcessInfo.processInfo.processIdentifier),
                         queues: settings.queues, slots: settings.slots, startedAt: startedAt, seenAt: Date(),
                         running: state.running.values.sorted { $0.job.run.id < $1.job.run.id }.map {
                             WorkerStatus.RunningJob(id: $0.job.run.id, stage: $0.stage.rawValue, since: $0.since)
                         }, finished: finished, stopping: stopping || state.stopping)
        }
        guard let registry = database.registry else { return }
        attempt("report status") { () throws(DeriveError) in try registry.report(status) }
    }

    func attempt(_ what: String, _ body: () throws(DeriveError) -> Void) {
        do {
            try body()
        } catch {
            metrics.increment(.databaseErrors)
            logger.warning("could not \(what)", metadata: ["error": "\(error)"])
        }
    }
}
