import DeriveLanguage
import DeriveJobs
import DeriveWorker
import Foundation
import Testing

/// A worker's metrics, read from its own registry in this process: no global MetricsSystem, no
/// server, no scrape. Nested in `WorkerInProcessTests`, which runs serially (its thread count
/// must not see this worker's threads).
extension WorkerInProcessTests {
    @Suite struct WorkerMetrics {
        @Test func aWorkerCountsItsJobsOutputsStagesAndFetchesInItsOwnRegistry() throws {
            let rig = try Rig(slots: 1)
            _ = try #require(try rig.queue.submit([rig.job(source: rig.folder.appendingPathComponent("missing.jpg").path)]).first)
            _ = try rig.submit(["good"], held: false)
            let running = try rig.start(untilIdle: true)
            let summary = try running.wait()
            #expect(summary.finished == ["completed": 1, "failed": 1])

            let metrics = running.worker.metrics
            #expect(metrics.value(.jobs, ["outcome": "completed"]) == 1 && metrics.value(.jobs, ["outcome": "failed"]) == 1)
            let text = metrics.render()
            #expect(text.contains("\nderive_jobs_total{outcome=\"completed\"} 1\n") && text.contains("\nderive_jobs_total{outcome=\"failed\"} 1\n"))
            #expect(text.contains("\nderive_outputs_total{outcome=\"derived\"} 1\n"))
            for stage in ["decode", "encode", "store"] {
                #expect(text.contains("\nderive_stage_seconds_count{stage=\"\(stage)\"} 1\n"), "\(stage): \(text)")
            }
            #expect(!text.contains("\nderive_job_seconds_count 0\n") && text.contains("\nderive_fetch_total{origin="))
            #expect(text.contains("\nderive_slots 1.0\n") && text.contains("\nderive_slots_busy 0.0\n"))
            #expect(text.contains("\nderive_database_errors_total 0\n"))
        }
    }
}
