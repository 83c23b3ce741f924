import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveTestSupport
import Foundation
import Testing

/// What an application does in plain SQL — submit, insert, cancel, retry, listen — and what
/// the least-privilege roles allow.
@Suite(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
struct PostgresSQLAPITests {
    @Test func submitTakesOutputsOrAPresetAndReturnsTheJobId() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        let outputs = #"[{"name": "thumb", "chain": "c_fill,w_200,h_200"}]"#
        let first = try #require(JobID(try sql.query("SELECT derive.submit('https://images.example/a.jpg', $1::jsonb)", [outputs]).scalar ?? ""))
        let second = try #require(JobID(try sql.query("""
            SELECT derive.submit(source => 'https://images.example/b.jpg', preset => 'web', priority => 7, queue => 'bulk',
                                 max_attempts => 2)
            """).scalar ?? ""))
        let one = try #require(try queue.store.job(first))
        #expect(same(one.payload, .object(["outputs": try JSONParser().parse(outputs), "source": .string("https://images.example/a.jpg"),
                                           "version": .int(1)])))
        #expect(try JSONChainDecoder().decodeJob(one.payload).outputs.first?.name == "thumb")
        let two = try #require(try queue.store.job(second))
        #expect(two.queue == "bulk" && two.priority == 7 && two.maxAttempts == 2 && two.payload["preset"] == .string("web"))
        #expect(try queue.store.claim(queues: ["bulk"], limit: 5, owner: "w", lease: 30).map(\.run.id) == [second])
    }

    /// Tags and context go into the job document, where the worker reads them (issue 30).
    @Test func submitTakesTagsAndContext() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        let id = try #require(JobID(try sql.query("""
            SELECT derive.submit('https://images.example/c.jpg', preset => 'web', tags => ARRAY['sale', 'new'],
                                 context => '{"productType": "shoes"}'::jsonb)
            """).scalar ?? ""))
        let job = try JSONChainDecoder().decodeJob(try #require(try queue.store.job(id)).payload)
        #expect(job.asset == AssetFacts(tags: ["sale", "new"], context: ["productType": "shoes"]))
        let plain = try #require(JobID(try sql.query("SELECT derive.submit('https://images.example/d.jpg', preset => 'web')").scalar ?? ""))
        let payload = try #require(try queue.store.job(plain)).payload
        #expect(payload["tags"] == nil && payload["context"] == nil)
        #expect { try sql.query("SELECT derive.submit('s', preset => 'web', context => '[1]'::jsonb)") } throws: { ($0 as? PostgresError)?.sqlState == "22023" }
    }

    @Test func submitRefusesBothOutputsAndPresetOrNeither() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        for call in ["SELECT derive.submit('s')", "SELECT derive.submit('s', '[]'::jsonb, 'web')"] {
            #expect { try sql.query(call) } throws: { ($0 as? PostgresError)?.sqlState == "22023" }
        }
    }

    @Test func aPlainInsertWithDefaultsIsClaimed() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        let id = try #require(JobID(try sql.query("""
            INSERT INTO derive.jobs (payload) VALUES ('{"version": 1, "source": "https://images.example/c.jpg", "preset": "web"}')
            RETURNING id
            """).scalar ?? ""))
        let later = try #require(JobID(try sql.query("""
            INSERT INTO derive.jobs (payload, run_at) VALUES ('{"version": 1, "source": "s", "preset": "p"}', now() + interval '1 hour')
            RETURNING id
            """).scalar ?? ""))
        #expect(try queue.store.job(later)?.state == .scheduled)
        let claimed = try #require(try queue.store.claim(queues: ["default"], limit: 5, owner: "w", lease: 30).first)
        #expect(claimed.run.id == id && claimed.maxAttempts == 5 && claimed.priority == 0)
    }

    @Test func submitWithADedupeKeyReturnsTheLiveJob() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        let call = "SELECT derive.submit('s', preset => 'web', dedupe_key => 'asset-9')"
        let first = try sql.query(call).scalar
        #expect(try sql.query(call).scalar == first)
        #expect(try sql.query("SELECT count(*) FROM derive.jobs").scalar == "1")
    }

    @Test func cancelAndRetryFromSQL() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        let waiting = try #require(try sql.query("SELECT derive.submit('s', preset => 'web')").scalar)
        let running = try #require(try sql.query("SELECT derive.submit('t', preset => 'web')").scalar)
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(String(run.id) == waiting)
        #expect(try sql.query("SELECT derive.cancel($1)", [running]).scalar == "cancelled")
        #expect(try sql.query("SELECT derive.cancel($1)", [waiting]).scalar == "requested")
        #expect(try sql.query("SELECT derive.cancel($1)", [running]).scalar == "finished")
        #expect(try sql.query("SELECT derive.cancel(-1)").scalar == "not_found")
        let again = try #require(try sql.query("SELECT derive.retry($1)", [running]).scalar)
        #expect(again != running)
        #expect(try sql.query("SELECT state FROM derive.jobs WHERE id = $1", [again]).scalar == "available")
        #expect(try sql.query("SELECT derive.retry($1)", [waiting]).scalar == nil)
    }

    @Test func oneNotificationPerTransactionWakesWorkers() throws {
        let queue = try TestQueue(.postgres)
        let listener = try queue.sql()
        try listener.execute("LISTEN derive_jobs")
        let sql = try queue.sql()
        try sql.transaction { () throws(PostgresError) in
            for index in 0..<3 { try sql.query("SELECT derive.submit($1, preset => 'web')", ["s\(index)"]) }
            try sql.query("INSERT INTO derive.jobs (payload) VALUES ('{}')")
        }
        _ = try queue.store.submit([NewJob(payload: document())])
        var received: [PostgresNotification] = []
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline, received.count < 3 {
            received += try listener.notifications(timeout: 0.2)
        }
        #expect(received.count == 2, "\(received)")
        #expect(received.allSatisfy { $0.channel == "derive_jobs" })
    }

    @Test func derive_doneCarriesTheJobAndItsOutcome() throws {
        let queue = try TestQueue(.postgres)
        let listener = try queue.sql()
        try listener.execute("LISTEN derive_done")
        let ids = try queue.store.submit([NewJob(payload: document("a")), NewJob(payload: document("b")), NewJob(payload: document("c"))])
            .map(\.id)
        let runs = try queue.store.claim(queues: ["default"], limit: 2, owner: "w", lease: 30).map(\.run)
        _ = try queue.store.complete([Completion(run: runs[0])])
        _ = try queue.store.fail([Failure(run: runs[1], error: permanent)], policy: retryAtOnce)
        _ = try queue.store.cancel(ids[2])
        var outcomes: [JobID: String] = [:]
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline, outcomes.count < 3 {
            for notification in try listener.notifications(timeout: 0.2) {
                let payload = try JSONParser().parse(notification.payload)
                if case .number(let id)? = payload["id"], case .string(let outcome)? = payload["outcome"], let value = id.intValue {
                    outcomes[JobID(value)] = outcome
                }
            }
        }
        #expect(outcomes == [ids[0]: "completed", ids[1]: "failed", ids[2]: "cancelled"])
    }

    /// The worker validates each payload; a malformed one fails at once with the reason.
    @Test func aMalformedPayloadFailsPermanentlyWithTheValidationMessage() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        let id = try #require(try sql.query("""
            SELECT derive.submit('https://images.example/a.jpg', '[{"name": "thumb", "chain": [{"resize": {"width": "wide"}}]}]')
            """).scalar.flatMap { JobID($0) })
        let claimed = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first)
        let invalid: DeriveError
        do {
            _ = try JSONChainDecoder().decodeJob(claimed.payload)
            Issue.record("the payload was accepted")
            return
        } catch {
            invalid = DeriveError(error)
        }
        #expect(try queue.store.fail([Failure(run: claimed.run, error: invalid)], policy: RetryPolicy()) == [id: .failed])
        let snapshot = try #require(try queue.store.job(id))
        #expect(snapshot.state == .failed && snapshot.attempt == 1)
        guard case .string(let detail)? = snapshot.errors.first?["detail"] else { throw Missing() }
        #expect(detail.contains("outputs[0].chain[0].resize.width"), "\(detail)")
    }

    @Test func theSubmitterRoleMaySubmitCancelAndReadButNothingElse() throws {
        let queue = try TestQueue(.postgres)
        let app = try PostgresConnection(url: try queue.login(as: "derive_submitter"))

        let id = try #require(try app.query("SELECT derive.submit('s', preset => 'web')").scalar)
        #expect(try app.query("INSERT INTO derive.jobs (payload, priority) VALUES ('{}', 2) RETURNING id").count == 1)
        #expect(try app.query("SELECT derive.cancel($1)", [id]).scalar == "cancelled")
        #expect(try app.query("SELECT outcome FROM derive.job_archive WHERE id = $1", [id]).scalar == "cancelled")
        #expect(try app.query("SELECT count(*) FROM derive.derivatives").scalar == "0")
        // An application that uploads names its originals; it sees which queues are paused.
        #expect(try app.query("INSERT INTO derive.original_names (source, name) VALUES ('s', 'IMG_1.jpg') RETURNING name").scalar == "IMG_1.jpg")
        #expect(try app.query("SELECT count(*) FROM derive.paused_queues").scalar == "0")
        let refused = [
            "INSERT INTO derive.paused_queues (queue, paused_by) VALUES ('default', 'app')",
            "DELETE FROM derive.original_names",
            "INSERT INTO derive.jobs (payload, state) VALUES ('{}', 'running')",
            "INSERT INTO derive.jobs (payload, attempt) VALUES ('{}', 3)",
            "UPDATE derive.jobs SET priority = 100",
            "DELETE FROM derive.jobs",
            "DELETE FROM derive.job_archive",
            "SELECT * FROM derive.claim('{default}', 1, 'me', 30, '[]')",
            "INSERT INTO derive.derivatives (asset_id, job_id, output_name, chain, chain_hash, storage_key, url, format, width, height, bytes, sha256) VALUES (1, 1, 'x', '[]', 'h', 'k', 'u', 'png', 1, 1, 1, 's')",
            "INSERT INTO derive.presets (name, version, outputs) VALUES ('web', 1, '[]')",
            "SELECT * FROM derive.schema_migrations",
            "CREATE TABLE derive.mine (a int)",
        ]
        for statement in refused {
            #expect(throws: PostgresError.self, "\(statement)") { try app.query(statement) }
            do { try app.query(statement) } catch { #expect(error.sqlState == "42501", "\(statement): \(error)") }
        }
    }

    @Test func theWorkerRoleRunsTheQueue() throws {
        let queue = try TestQueue(.postgres)
        let url = try queue.login(as: "derive_worker")
        let store = PostgresJobStore(url: url)
        let id = try #require(try store.submit([NewJob(payload: document())]).first).id
        let run = try #require(try store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try store.heartbeat([run], lease: 30).extended == [id])
        #expect(try store.complete([Completion(run: run)]) == [id])
        #expect(try store.promoteScheduled(limit: 10) == 0)
        #expect(try store.rescueExpired(limit: 10, policy: RetryPolicy()).requeued.isEmpty)
        #expect(try store.prune(finishedBefore: Date().addingTimeInterval(60)) == 1)
        // The operator's controls, as the worker role (the claim reads the paused queues as it).
        #expect(try store.pause(queue: "default", by: "ops") && (try store.pausedQueues()).map(\.queue) == ["default"])
        _ = try store.submit([NewJob(payload: document("s3://b/originals/x.jpg"), originalName: "x.jpg")])
        #expect(try store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).isEmpty)
        #expect(try store.resume(queue: "default") && (try store.originalNames(of: ["s3://b/originals/x.jpg"])) == ["s3://b/originals/x.jpg": ["x.jpg"]])
        let second = try #require(try store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try store.complete([Completion(run: second)]) == [second.id] && (try store.deleteFinished([second.id])) == [second.id])
        let connection = try PostgresConnection(url: url)
        #expect { try connection.query("DROP TABLE derive.jobs") } throws: { ($0 as? PostgresError)?.sqlState == "42501" }
    }

    @Test func aLostConnectionIsARetryableErrorAndTheNextCallReconnects() throws {
        let queue = try TestQueue(.postgres)
        let id = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        let admin = try queue.sql()
        try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """)
        do {
            _ = try queue.store.job(id)
        } catch {
            #expect(error.code == .databaseUnavailable && error.isRetryable, "\(error)")
        }
        #expect(try queue.store.job(id)?.state == .available)
    }

    @Test func anUnreachableServerIsARetryableErrorThatHidesThePassword() throws {
        let store = PostgresJobStore(url: "postgresql://derive:s3cret-pw@127.0.0.1:1/derive?connect_timeout=2")
        do {
            _ = try store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30)
            Issue.record("claimed from a server that is not there")
        } catch {
            #expect(error.code == .databaseUnavailable && error.isRetryable)
            #expect(error.detail.contains("127.0.0.1") && !error.detail.contains("s3cret-pw"), "\(error.detail)")
        }
    }

    /// Positions are hints: a job that became available behind this process's position is
    /// claimed by its next full scan, within the rescan interval.
    @Test func aJobReleasedBehindAPositionIsClaimedByTheNextFullScan() throws {
        let queue = try TestQueue(.postgres)
        let worker = try #require(try queue.openAnother(rescanInterval: 0.5) as? PostgresJobStore)
        let other = try queue.openAnother()
        let ids = try queue.store.submit((0..<6).map { NewJob(payload: document("n\($0)")) }).map(\.id)
        let first = try #require(try other.claim(queues: ["default"], limit: 1, owner: "other", lease: 30).first).run
        #expect(try worker.claim(queues: ["default"], limit: 2, owner: "w", lease: 30).map(\.run.id) == [ids[1], ids[2]])
        #expect(try other.release([first]) == [ids[0]])
        // Behind the worker's position: the next claim reads on from there.
        #expect(try worker.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).map(\.run.id) == [ids[3]])
        // 0.5 s, or longer when the first full scan was slow (a loaded machine).
        Thread.sleep(forTimeInterval: worker.currentRescanInterval + 0.1)
        #expect(try worker.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).map(\.run.id) == [ids[0]])
        #expect(try worker.claim(queues: ["default"], limit: 5, owner: "w", lease: 30).map(\.run.id) == [ids[4], ids[5]])
    }

    /// Claims read from a position, so a transaction held open elsewhere (whose snapshot keeps
    /// every claimed job's dead index entry) does not make them walk the queue's history.
    @Test func aClaimFromAPositionSkipsTheDeadEntriesBeforeIt() throws {
        let queue = try TestQueue(.postgres)
        let holder = try queue.sql()
        try holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT txid_current(); SELECT count(*) FROM derive.jobs")
        defer { _ = try? holder.execute("ROLLBACK") }
        _ = try queue.store.submit((0..<2000).map { NewJob(payload: document("n\($0)")) })
        var done = 0
        while done < 1990 {
            let claimed = try queue.store.claim(queues: ["default"], limit: 10, owner: "w", lease: 30).map(\.run)
            done += try queue.store.complete(claimed.map { Completion(run: $0) }).count
        }
        let sql = try queue.sql()
        let next = try sql.query("""
            SELECT (extract(epoch FROM run_at) * 1000000)::bigint, id - 1 FROM derive.jobs
            WHERE state = 'available' ORDER BY priority DESC, run_at, id LIMIT 1
            """).rows[0]
        let fromStart = #"[{"ord": 0, "queue": "default", "lo": -2147483648, "hi": 2147483647}]"#
        let fromPosition = #"[{"ord": 0, "queue": "default", "lo": 0, "hi": 0, "after_run_at": \#(next[0]!), "after_id": \#(next[1]!)}]"#
        /// Index entries a claim reads, counted within its (rolled back) transaction. Earlier
        /// counts are flushed first: PostgreSQL's per-transaction counters include any not yet
        /// reported.
        func entriesRead(_ segments: String) throws -> (read: Int, claimed: Int) {
            try sql.query("SELECT pg_stat_force_next_flush()")
            try sql.execute("BEGIN")
            defer { _ = try? sql.execute("ROLLBACK") }
            let claimed = try sql.query("SELECT count(*) FROM derive.claim('{default}', 10, 'probe', 30, $1::jsonb)", [segments]).scalar
            let read = try sql.query("SELECT pg_stat_get_xact_tuples_returned('derive.jobs_claim'::regclass)").scalar
            return (Int(read ?? "") ?? -1, Int(claimed ?? "") ?? -1)
        }
        let slow = try entriesRead(fromStart), fast = try entriesRead(fromPosition)
        #expect(slow.claimed == 10 && fast.claimed == 10)
        #expect(slow.read >= 1990, "the held transaction should keep the dead entries: read \(slow.read)")
        #expect(fast.read <= 20, "a claim from a position read \(fast.read) index entries")
    }
}
