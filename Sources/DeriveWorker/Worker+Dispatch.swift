import DeriveLanguage
import DeriveJobs
import Foundation
import Logging
import Synchronization

/// The dispatcher: claims as many jobs as there are free slots, hands them to the slots, and
/// waits until a slot frees, a notification arrives or the poll interval has passed.
extension Worker {
    func dispatch(on threads: BlockingPool) async {
        var failures = 0
        // With --until-idle, how long to wait before asking again whether the queues are empty:
        // the last job's completion is recorded just after its slot frees (the batcher), so
        // the first answer is often "running"; ask again soon, then less often (up to the poll
        // interval) while other workers' jobs run.
        var idleRecheck = 0.02
        while !isStopping {
            health.looped()
            let free = settings.slots - state.withLock { $0.inFlight }
            metrics.set(.slotsBusy, to: Double(settings.slots - free))
            if free > 0 {
                let claimed = await threads.run { [self] in
                    Result { () throws(DeriveError) in
                        try database.queue.claim(queues: settings.queues, limit: free, owner: settings.id, lease: settings.lease)
                    }
                }
                guard let claimed else { break }  // cancelled: stopping at once
                switch claimed {
                case .success(let jobs):
                    health.database(nil)
                    failures = 0
                    if !jobs.isEmpty {
                        idleRecheck = 0.02
                        await hand(jobs)
                        // A full batch: there may be more; claim again as soon as a slot frees.
                        if jobs.count == free { continue }
                    } else if settings.untilIdle, state.withLock({ $0.inFlight }) == 0 {
                        let idle = await threads.run { [self] in Result { () throws(DeriveError) in try queuesAreIdle() } }
                        if case .success(true)? = idle {
                            logger.info("the queues are empty: stopping (--until-idle)")
                            return
                        }
                        if case .failure(let error)? = idle {
                            metrics.increment(.databaseErrors)
                            logger.warning("cannot tell whether the queues are empty; asking again", metadata: ["error": "\(error)"])
                        }
                        if case .success(false)? = idle, idleRecheck < settings.pollInterval {
                            await doorbell.wait(timeout: .seconds(of: idleRecheck), clock: clock)
                            idleRecheck = min(settings.pollInterval, idleRecheck * 2)
                            continue
                        }
                    }
                case .failure(let error):
                    failures += 1
                    health.database(error)
                    metrics.increment(.databaseErrors)
                    let delay = Backoff(base: 0.5, factor: 2, maximum: 30).ceiling(attempt: failures)
                    logger.warning("cannot claim jobs; trying again", metadata: ["error": "\(error)", "retryIn": "\(delay)"])
                    await doorbell.wait(timeout: .seconds(of: delay), clock: clock)
                    continue
                }
            }
            await doorbell.wait(timeout: .seconds(of: free > 0 ? settings.pollInterval : 1), clock: clock)
        }
    }

    /// Hands claimed jobs to free slots (there is one for each: the claim asked for no more).
    func hand(_ jobs: [ClaimedJob]) async {
        state.withLock { $0.pending += jobs }
        for job in jobs {
            logger.debug("claimed", metadata: ["job": "\(job.run.id)", "attempt": "\(job.run.attempt)", "queue": "\(job.queue)"])
            await handoff.send(job)
        }
    }

    /// No job available, running or waiting to be retried in the worker's queues. A retry is
    /// work begun (its claim's answer may have been lost with a connection, and its lease
    /// rescued): stopping before it would leave a batch unfinished. Jobs submitted to run
    /// later wait for a later worker; so do the waiting jobs of a paused queue (its running ones
    /// are waited for), which no worker claims until it is resumed.
    func queuesAreIdle() throws(DeriveError) -> Bool {
        _ = try database.queue.promoteScheduled(limit: 1000)
        let counts = try database.queue.counts().filter { settings.queues.contains($0.queue) }
        let paused = Set(try database.queue.pausedQueues().map(\.queue))
        return counts.allSatisfy { queue in
            (queue.states[.running] ?? 0) == 0
                && (paused.contains(queue.queue) || ((queue.states[.available] ?? 0) == 0 && queue.retrying == 0))
        }
    }
}
