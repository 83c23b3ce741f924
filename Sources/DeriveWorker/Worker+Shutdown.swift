import DeriveCore
import Foundation
import Logging
import Synchronization

/// Stopping: the grace period for jobs in flight, releasing the rest without spending an
/// attempt, and waiting for every thread `run()` started.
extension Worker {
    func shutDown() -> Summary {
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
            metrics.increment(.jobs, ["outcome": RunOutcome.released.rawValue], by: released)
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
