import DeriveLanguage
import DeriveJobs
import Foundation
import Logging
import Synchronization

/// Stopping: the grace period for jobs in flight, releasing the rest without spending an
/// attempt, and the last records. Its database calls run to the end even when the stop is
/// immediate (cancellation): releasing the jobs is what an immediate stop is for.
extension Worker {
    func shutDown(on threads: BlockingPool) async -> Summary {
        // The grace period runs from the moment the worker stops claiming.
        let deadline = clock.now() + .seconds(of: settings.grace)
        // Jobs claimed but not started go straight back.
        var leftovers = state.withLock { state in
            state.stopping = true
            defer { state.pending.removeAll() }
            return state.pending.map(\.run)
        }
        handoff.finish()
        let busy = state.withLock { $0.running.count }
        if busy > 0 {
            logger.info("stopping: waiting for jobs in flight", metadata: ["jobs": "\(busy)", "grace": "\(settings.grace)"])
            _ = await threads.run(cancellable: false) { [self] in reportStatus(stopping: true) }
        }
        // The heartbeats go on meanwhile, in their own task.
        while true {
            let (running, immediately) = state.withLock { ($0.running.count, $0.immediately) }
            let now = clock.now()
            if running == 0 || immediately || now >= deadline { break }
            health.looped()
            await doorbell.wait(timeout: min(.seconds(of: settings.tickInterval), deadline - now), clock: clock)
        }
        let abandoned = state.withLock { state in state.running.values.map(\.job.run) }
        leftovers += abandoned
        let released = leftovers.isEmpty ? 0 : await release(leftovers, on: threads)
        _ = await threads.run(cancellable: false) { [self] in
            completions.close()
            // What the last completions superseded goes too, not at some later worker's tick.
            if settings.deleteSuperseded, let derivations = database.derivations { deleteSupersededOutputs(derivations) }
            if let registry = database.registry {
                attempt("remove this worker from the status list") { () throws(DeriveError) in try registry.forgetWorker(settings.id) }
            }
        }
        let finished = self.finished
        logger.info("worker stopped", metadata: ["finished": .dictionary(finished.mapValues { .stringConvertible($0) }),
                                                 "released": "\(released)"])
        return Summary(finished: finished, released: released, abandoned: abandoned.count)
    }

    /// Gives runs back to the queue without spending an attempt, trying for a while if the
    /// database is away (on a housekeeping thread: real seconds, since the outage passes in
    /// real time); returns how many it released.
    func release(_ runs: [JobRun], on threads: BlockingPool) async -> Int {
        let released = await threads.run(cancellable: false) { [self] in
            for attempt in 1...5 {
                do {
                    return try database.queue.release(runs).count
                } catch {
                    logger.warning("could not release jobs", metadata: ["error": "\(error)"])
                    if attempt < 5 { Thread.sleep(forTimeInterval: Double(attempt)) }
                }
            }
            return 0
        } ?? 0
        metrics.increment(.jobs, ["outcome": RunOutcome.released.rawValue], by: released)
        logger.info("released unfinished jobs without spending an attempt", metadata: [
            "jobs": .array(runs.map { .stringConvertible($0.id) }), "released": "\(released)",
        ])
        return released
    }
}
