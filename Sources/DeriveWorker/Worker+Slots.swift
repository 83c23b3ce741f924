import DeriveLanguage
import DeriveJobs
import Foundation
import Logging
import Synchronization

/// A slot: takes one job at a time from the dispatcher and runs it on the slot threads (a
/// derivation through the pipeline, or a task), then records how it ended.
extension Worker {
    func slot(on threads: BlockingPool) async {
        for await job in handoff {
            let started: Bool = state.withLock { state in
                // Stopping at once: the job stays pending, and shutting down releases it.
                guard !state.immediately, let index = state.pending.firstIndex(where: { $0.run.id == job.run.id }) else { return false }
                state.pending.remove(at: index)
                state.running[job.run.id] = InFlight(job: job, stage: .resolve, since: Date(), lastLease: clock.now())
                return true
            }
            guard started else { continue }
            // Nil when cancelled past the grace period: the thread finishes the job alone and
            // its late completion is dropped (the job was released).
            guard await threads.run({ [self] in execute(job) }) != nil else { return }
            state.withLock { _ = $0.running.removeValue(forKey: job.run.id) }
            doorbell.ring()
        }
    }

    func execute(_ job: ClaimedJob) {
        let run = job.run
        var log = logger
        log[metadataKey: "job"] = "\(run.id)"
        log[metadataKey: "attempt"] = "\(run.attempt)"
        log[metadataKey: "queue"] = "\(job.queue)"
        // A job run before failed or lost its lease: it may be one that kills its workers. It
        // starts once this worker's finished jobs are recorded (milliseconds; retries are rare),
        // so that a crash does not take them along: rescued, run again and charged a lost lease
        // (Docs/queue.md, a job that kills its workers).
        if run.attempt > 1, !completions.waitUntilRecorded(timeout: 5) {
            log.warning("starting a retried job before this worker's finished jobs are recorded (the database is slow)")
        }
        let started = DispatchTime.now().uptimeNanoseconds
        do throws(DeriveError) {
            if case .string(let name)? = job.payload["task"] {
                guard let task = JobTask(rawValue: name) else {
                    throw DeriveError(.invalidJob, "task: \(Quoted(name)) is not a task Derive runs (\(JobTask.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                let result = try runTask(task, job: job)
                completions.add(Completion(run: run, result: result))
                metrics.observe(.jobSeconds, seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
                log.info("task done", metadata: ["task": "\(task.rawValue)", "result": "\(JSONWriter.compact(result))"])
                return
            }
            let resolved = try pipeline.resolve(job.payload)
            guard let source = resolved.source else { throw DeriveError(.invalidJob, "source: is missing") }
            log[metadataKey: "source"] = "\(Redacted.url(source))"
            #if DEBUG
            crashIfSwitched(source: source, log: log)
            #endif
            let outcome = try pipeline.run(resolved, source: source, stage: { [self] stage in
                state.withLock { $0.running[run.id]?.stage = stage }
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
                finish(run, as: .cancelled, log: log) { () throws(DeriveError) in _ = try database.queue.acknowledgeCancel([run]) }
                return
            }
            var outcome = FailureOutcome.stale
            finish(run, as: nil, log: log) { () throws(DeriveError) in
                outcome = try database.queue.fail([Failure(run: run, error: error)], policy: settings.retryPolicy)[run.id] ?? .stale
            }
            let name: RunOutcome
            switch outcome {
            case .retrying(let delay):
                name = .retried
                log.warning("job failed; it will be tried again", metadata: [
                    "error": "\(error.code.rawValue)", "detail": "\(error.detail)", "retryIn": "\(Int(delay.rounded()))",
                ])
            case .failed:
                name = .failed
                log.error("job failed", metadata: ["error": "\(error.code.rawValue)", "detail": "\(error.detail)",
                                                   "retryable": "\(error.isRetryable)"])
            case .cancelled:
                name = .cancelled
                log.info("job cancelled")
            case .stale:
                name = .stale
                log.warning("job failed after its lease was lost; its new run decides", metadata: ["error": "\(error)"])
            }
            metrics.increment(.jobs, ["outcome": name.rawValue])
        }
    }

    /// Jobs that are not derivations: expanding a reprocess or revalidation (what schedules
    /// enqueue), and checking one source with its origin.
    func runTask(_ task: JobTask, job: ClaimedJob) throws(DeriveError) -> JSONValue {
        guard let derivations = database.derivations else {
            throw DeriveError(.invalidJob, "task: \(Quoted(task.rawValue)) needs the asset and derivative tables, which this worker's queue does not have")
        }
        switch task {
        case .reprocess, .revalidate:
            let plan: ReprocessPlan
            do {
                plan = try ReprocessPlan(task: job.payload)
            } catch {
                throw DeriveError(error)
            }
            state.withLock { $0.running[job.run.id]?.stage = .enqueue }
            return try Reprocessor(database: derivations).enqueue(plan).json
        case .checkSource:
            guard case .string(let source)? = job.payload["source"] else { throw DeriveError(.invalidJob, "source: is missing") }
            state.withLock { $0.running[job.run.id]?.stage = .fetch }
            return try SourceCheck(database: derivations, fetcher: pipeline.fetcher).run(source, queue: job.queue, priority: job.priority)
        }
    }

    /// Records a run's end, trying again for a while if the database is away.
    func finish(_ run: JobRun, as outcome: RunOutcome?, log: Logger, _ record: () throws(DeriveError) -> Void) {
        for attempt in 1...8 {
            do {
                try record()
                if let outcome {
                    metrics.increment(.jobs, ["outcome": outcome.rawValue])
                    log.info("job \(outcome.rawValue)")
                }
                return
            } catch {
                metrics.increment(.databaseErrors)
                guard error.isRetryable, attempt < 8 else {
                    log.error("could not record the job's outcome; its lease will expire and it will be rescued", metadata: ["error": "\(error)"])
                    return
                }
                // On the slot's own thread, which waits for nothing else.
                Thread.sleep(forTimeInterval: Backoff(base: 0.2, factor: 2, maximum: 5).ceiling(attempt: attempt))
            }
        }
    }

    func observe(_ report: JobReport, started: UInt64) {
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
}
