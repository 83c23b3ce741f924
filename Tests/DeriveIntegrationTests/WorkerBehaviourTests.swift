import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// What a running `derive work` does with bad jobs, cancellations, a database that drops its
/// connections, and operators watching it.
@Suite(.enabled(if: TestServers.available && TestServers.postgresAvailable, "needs the servers Scripts/test.sh starts"))
struct WorkerBehaviourTests {
    static func job(_ source: String, chain: String = "c_thumb,w_32,h_32", maxAttempts: Int = 5) -> NewJob {
        NewJob(payload: .object(["version": .int(1), "source": .string(source),
                                 "outputs": .array([.object(["name": .string("t"), "chain": .string(chain)])])]), maxAttempts: maxAttempts)
    }

    static func worker(_ queue: TestQueue, _ extra: [String] = [], environment: [String: String] = [:]) throws -> BackgroundProcess {
        let s3 = try TestServers.s3()
        return try BackgroundProcess(["work", "--database", queue.location, "--store", "s3://\(s3.bucket)/behaviour"] + extra,
                                     environment: WorkerEndToEndTests.environment(s3).merging(environment) { $1 })
    }

    /// SIGTERM at any moment of a worker's start-up stops it with exit 0: while it opens the
    /// database, while it builds its pipeline, as it starts working. A signal between the
    /// database wait and the worker's start used to go unheard (the wait's watcher had left
    /// SIGTERM ignored), and the worker then ran until killed.
    @Test(arguments: [0.05, 0.15, 0.3, 0.5, 0.8, 1.2])
    func aSignalDuringStartUpStopsTheWorker(after delay: Double) throws {
        let queue = try TestQueue(.postgres)
        let worker = try Self.worker(queue)
        Thread.sleep(forTimeInterval: delay)
        worker.signal(SIGTERM)
        // Exit 0; or, for a signal before the process has set anything up, SIGTERM's own end.
        let status = worker.wait(timeout: 15)
        #expect(status == 0 || (status == SIGTERM && worker.process.terminationReason == .uncaughtSignal),
                "exit \(String(describing: status)): \(worker.logLines.suffix(5))")
    }

    /// A worker started while PostgreSQL is unreachable waits with backoff and starts working
    /// when the database appears (a forwarder opens on its port), instead of exiting.
    @Test func aWorkerStartedWhileTheDatabaseIsDownWaitsForIt() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin()
        let forwarder = Paths.repository.appendingPathComponent("Tests/Servers/forward.py").path
        let port = try #require(Int(try Python.run("import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
            .output.trimmingCharacters(in: .whitespacesAndNewlines)))
        var unreachable = try #require(URLComponents(string: queue.location))
        let target = (host: unreachable.host ?? "127.0.0.1", port: unreachable.port ?? 5432)
        unreachable.port = port
        let s3 = try TestServers.s3()
        let worker = try BackgroundProcess(["work", "--database", unreachable.string!, "--store", "s3://\(s3.bucket)/behaviour"],
                                           environment: WorkerEndToEndTests.environment(s3))
        try waitUntil("the worker to say it waits", timeout: 20) { worker.logLines.contains { $0.contains("waiting for the database") } }
        Thread.sleep(forTimeInterval: 1.5)
        #expect(worker.process.isRunning, "\(worker.logLines.suffix(5).joined(separator: "\n"))")

        let id = try queue.store.submit([Self.job(origin + "/fixture/photos/grace_hopper_noexif.jpg?n=\(UUID().uuidString)")])[0].id
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        proxy.arguments = ["python3", forwarder, String(port), target.host, String(target.port)]
        try proxy.run()
        defer {
            kill(proxy.processIdentifier, SIGKILL)
            while proxy.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        }
        try waitUntil("the job to complete once the database answers", timeout: 60) { try queue.store.job(id)?.state == .completed }
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 30) == 0, "\(worker.logLines.suffix(10).joined(separator: "\n"))")
    }

    /// Stopped while it waits for a database that never comes, a worker exits at once, cleanly.
    @Test func aSignalEndsTheWaitForTheDatabase() throws {
        let port = try #require(Int(try Python.run("import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
            .output.trimmingCharacters(in: .whitespacesAndNewlines)))
        let worker = try BackgroundProcess(["work", "--database", "postgresql://derive@127.0.0.1:\(port)/nowhere", "--store", NSTemporaryDirectory()])
        try waitUntil("the worker to say it waits", timeout: 20) { worker.logLines.contains { $0.contains("waiting for the database") } }
        let started = Date()
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 10) == 0, "\(worker.logLines.suffix(5).joined(separator: "\n"))")
        #expect(Date().timeIntervalSince(started) < 3)
    }

    @Test func badJobsFailWithClassifiedErrorsAndPassingTroubleIsRetried() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin()
        let sql = try queue.sql()
        let malformed = try #require(JobID(try sql.query("""
            SELECT derive.submit('\(origin)/fixture/photos/grace_hopper_noexif.jpg', '[{"name": "t", "chain": "c_fill,w_abc"}]')
            """).scalar ?? ""))
        let ids = try queue.store.submit([
            Self.job(origin + "/text?n=\(UUID().uuidString)"),                         // not an image
            Self.job(origin + "/status/404?n=\(UUID().uuidString)"),                   // gone
            Self.job(origin + "/status/503?n=\(UUID().uuidString)", maxAttempts: 2),   // passing trouble
            Self.job("http://10.0.0.1/private.jpg"),                                   // refused before connecting
            Self.job(origin + "/fixture/photos/grace_hopper_noexif.jpg?n=\(UUID().uuidString)"),
        ]).map(\.id)
        let worker = try Self.worker(queue, ["--until-idle", "--slots", "2"], environment: ["DERIVE_FETCH_ATTEMPTS": "1"])
        #expect(worker.wait(timeout: 120) == 0, "\(worker.logLines.suffix(10).joined(separator: "\n"))")

        func failure(_ id: JobID) throws -> (JobState, String, String) {
            let job = try #require(try queue.store.job(id))
            let last = job.errors.last
            if case .string(let code)? = last?["code"], case .string(let detail)? = last?["detail"] { return (job.state, code, detail) }
            return (job.state, "", "")
        }
        let bad = try failure(malformed)
        #expect(bad.0 == .failed && bad.1 == "invalid_job" && bad.2.contains("outputs[0].chain"), "\(bad)")
        #expect(try failure(ids[0]).0 == .failed && failure(ids[0]).1 == "unsupported_format")
        #expect(try failure(ids[1]).0 == .failed && failure(ids[1]).1 == "source_refused")
        // Retried after its backoff (`--until-idle` waits for retries) until its attempts ran out.
        let passing = try #require(try queue.store.job(ids[2]))
        #expect(passing.state == .failed && passing.attempt == 2, "\(passing.state) \(passing.attempt)")
        #expect(passing.errors.count == passing.attempt && passing.errors.allSatisfy {
            $0["code"] == .string("source_unavailable") && $0["retryable"] == .bool(true)
        })
        #expect(try failure(ids[3]).0 == .failed && failure(ids[3]).1 == "source_refused")
        #expect(try queue.store.job(ids[4])?.state == .completed)
        #expect(try queue.store.job(malformed)?.attempt == 1)
    }

    @Test func cancellingARunningJobStopsItAtItsNextHeartbeat() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin()
        let id = try #require(try queue.store.submit([Self.job(origin + "/slow?delay=4&n=\(UUID().uuidString)")]).first).id
        let worker = try Self.worker(queue, ["--lease", "3"], environment: ["DERIVE_LOG_FORMAT": "json"])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 30)
        }
        try waitUntil("the job runs") { try queue.store.job(id)?.state == .running }
        let cancel = try DeriveBinary.run(["jobs", "cancel", String(id), "--database", queue.location])
        #expect(cancel.status == 0 && cancel.stdout.contains("next heartbeat"), "\(cancel.stderr)")
        try waitUntil("the job is cancelled", timeout: 20) { try queue.store.job(id)?.state == .cancelled }
        #expect(worker.logLines.contains { $0.contains("cancel requested") })
    }

    /// A claim whose answer was lost with its connection leaves the job running under a lease
    /// nobody renews; it is rescued into a retry. `--until-idle` waits for that retry and runs
    /// it (CI once saw the worker stop with the rescued job still scheduled: it counted only
    /// available and running jobs).
    @Test func untilIdleWaitsForARescuedJobsRetry() throws {
        let queue = try TestQueue(.sqlite)
        let origin = try TestServers.origin()
        let id = try #require(try queue.store.submit([Self.job(origin + "/fixture/photos/grace_hopper_noexif.jpg?n=\(UUID().uuidString)")]).first).id
        _ = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "lost-claim", lease: 3).first)
        let worker = try Self.worker(queue, ["--until-idle"], environment: ["DERIVE_RESCUE_INTERVAL": "1"])
        #expect(worker.wait(timeout: 60) == 0, "\(worker.logLines.suffix(10).joined(separator: "\n"))")
        let job = try #require(try queue.store.job(id))
        #expect(job.state == .completed && job.attempt == 2, "\(job.state) attempt \(job.attempt) \(job.errors)")
    }

    /// Every connection the worker holds is killed, three times, while it works: it reconnects
    /// and every job completes exactly once.
    @Test func aWorkerSurvivesItsDatabaseConnectionsDropping() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin()
        let ids = try queue.store.submit((0..<40).map { index in
            Self.job(origin + "/slow?delay=0.2&n=\(UUID().uuidString)", chain: "c_scale,w_\(20 + index)")
        }).map(\.id)
        let worker = try Self.worker(queue, ["--slots", "2", "--until-idle"], environment: ["DERIVE_LOG_FORMAT": "json"])
        let admin = try queue.sql()
        var killed = 0
        for _ in 0..<3 {
            Thread.sleep(forTimeInterval: 1)
            killed += try admin.query("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND application_name IN ('derive-worker', 'derive-listener')
                """).count
        }
        #expect(killed >= 3, "the worker's connections were not found")
        #expect(worker.wait(timeout: 180) == 0, "\(worker.logLines.suffix(10).joined(separator: "\n"))")
        for id in ids {
            let job = try #require(try queue.store.job(id))
            #expect(job.state == .completed, "job \(id): \(job.state) \(job.errors)")
        }
        let sql = try queue.sql()
        #expect(try sql.query("SELECT count(*) FROM derive.derivatives").scalar == "40")
        let done = worker.logLines.filter { $0.contains("\"job done\"") }.count
        #expect(done >= 40, "every job ran (a job whose completion was lost with a connection runs again; it is recorded once)")
        #expect(worker.logLines.contains { $0.contains("PostgreSQL") }, "the worker should have seen its connections go")
    }

    @Test func statusShowsWhatEachWorkerIsDoingAndMetricsAreServed() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin()
        let ids = try queue.store.submit([Self.job(origin + "/slow?delay=5&n=\(UUID().uuidString)"),
                                          Self.job(origin + "/fixture/photos/grace_hopper_noexif.jpg?n=\(UUID().uuidString)")]).map(\.id)
        let worker = try Self.worker(queue, ["--slots", "2", "--metrics-port", "0", "--metrics-address", "127.0.0.1"],
                                     environment: ["DERIVE_LOG_FORMAT": "json", "DERIVE_RESCUE_INTERVAL": "0.5"])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 30)
        }
        try waitUntil("the quick job is done and the slow one running") {
            try queue.store.job(ids[1])?.state == .completed && queue.store.job(ids[0])?.state == .running
        }
        var status = JSONValue.null
        // The worker reports its status on its heartbeat, so a report may predate the quick
        // job's completion: wait for one that has both.
        try waitUntil("the worker reports its running job and the finished one") {
            let result = try DeriveBinary.run(["status", "--database", queue.location, "--json"])
            status = try JSONParser().parse(result.stdout)
            guard case .array(let workers)? = status["workers"], case .array(let running)? = workers.first?["running"] else { return false }
            return running.contains { $0["id"] == .int(Int(ids[0])) } && workers.first?["finished"]?["completed"] == .int(1)
        }
        guard case .array(let workers)? = status["workers"] else { throw Missing() }
        #expect(workers.count == 1 && workers[0]["slots"] == .int(2))
        #expect(workers[0]["finished"]?["completed"] == .int(1))
        guard case .array(let queues)? = status["queues"] else { throw Missing() }
        #expect(queues.first?["running"] == .int(1))

        // The metrics port was logged; scrape it.
        let line = try #require(worker.logLines.first { $0.contains("serving metrics") })
        guard case .string(let port)? = try JSONParser().parse(line)["port"] else { throw Missing() }
        // The queue depth is read every 1.5 s here (three status intervals).
        var metrics = ""
        try waitUntil("the metrics show the running job") {
            metrics = try TestServers.fetch("http://127.0.0.1:\(port)/metrics")
            return metrics.contains("derive_queue_depth{queue=\"default\",state=\"running\"} 1")
        }
        #expect(metrics.contains("derive_jobs_total{outcome=\"completed\"} 1"), "\(metrics)")
        #expect(metrics.contains("derive_stage_seconds_bucket{stage=\"decode\",le=\"+Inf\"} 1"))
        #expect(metrics.contains("derive_slots 2") && metrics.contains("derive_slots_busy"))
        #expect(metrics.contains("derive_fetch_total{origin=\"network\"} 1") && metrics.contains("derive_fetch_bytes_total"))
        // A paused queue shows as 1 from the next read.
        #expect(!metrics.contains("derive_queue_paused{"))
        _ = try queue.store.pause(queue: "held", by: "test")
        try waitUntil("the metrics show the paused queue") {
            try TestServers.fetch("http://127.0.0.1:\(port)/metrics").contains("derive_queue_paused{queue=\"held\"} 1")
        }
    }
}
