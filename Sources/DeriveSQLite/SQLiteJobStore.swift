import DeriveLanguage
import DeriveJobs
import Foundation

/// The embedded queue: the same `JobStore` semantics on one SQLite file, for any number of
/// worker processes on one machine. SQLite has one writer at a time, so every change is a
/// short `BEGIN IMMEDIATE` transaction and claims need no row locks: a claim that holds the
/// write lock sees every other claim committed or not yet begun.
public final class SQLiteJobStore: JobStore {
    public let path: String
    private let pool: ConnectionPool<SQLiteConnection>
    /// The clock the queue runs on: every process on the machine shares it.
    private let now: @Sendable () -> Double

    public init(path: String, busyTimeout: Double = 10, poolCapacity: Int = 8) throws(DeriveError) {
        self.path = path
        now = { Date().timeIntervalSince1970 }
        pool = ConnectionPool(capacity: poolCapacity, open: { () throws(DeriveError) in
            do throws(SQLiteError) { return try SQLiteConnection(path: path, busyTimeout: busyTimeout) } catch { throw error.deriveError }
        }, isReusable: { $0.isIdle })
        try pool.withConnection { connection throws(DeriveError) in
            do throws(SQLiteError) { try SQLiteSchema.migrate(connection) } catch { throw error.deriveError }
        }
    }

    @discardableResult
    func write<T>(_ body: (SQLiteConnection, Double) throws(SQLiteError) -> T) throws(DeriveError) -> T {
        try pool.withConnection { connection throws(DeriveError) in
            do throws(SQLiteError) {
                return try connection.transaction { () throws(SQLiteError) in try body(connection, now()) }
            } catch {
                throw error.deriveError
            }
        }
    }

    func read<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(DeriveError) -> T {
        try pool.withConnection { connection throws(DeriveError) in
            do throws(SQLiteError) { return try body(connection) } catch { throw error.deriveError }
        }
    }

    // MARK: Submitting

    public func submit(_ jobs: [NewJob]) throws(DeriveError) -> [SubmitResult] {
        guard !jobs.isEmpty else { return [] }
        return try write { connection, now throws(SQLiteError) in
            for (source, name) in OriginalName.pairs(jobs) {
                try connection.query("INSERT INTO original_names (source, name, noted_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                                     [SQLiteValue(source), SQLiteValue(name), SQLiteValue(now)])
            }
            return try jobs.map { job throws(SQLiteError) in try Self.insert(job, at: now, on: connection) }
        }
    }

    /// Enqueues one job inside the caller's write transaction, or finds the live job with its
    /// dedupe key.
    static func insert(_ job: NewJob, at now: Double, on connection: SQLiteConnection) throws(SQLiteError) -> SubmitResult {
        let runAt = job.runAt?.timeIntervalSince1970 ?? now
        let inserted = try connection.query(SQL.insert, [
            SQLiteValue(job.queue), runAt > now ? "scheduled" : "available", SQLiteValue(job.priority), SQLiteValue(runAt),
            SQLiteValue(job.maxAttempts), SQLiteValue(job.dedupeKey), SQLiteValue(JSONWriter.compact(job.payload)), SQLiteValue(now),
        ])
        if let id = inserted.first?.first?.int { return SubmitResult(id: JobID(id), deduplicated: false) }
        return SubmitResult(id: try liveJob(dedupeKey: job.dedupeKey, on: connection), deduplicated: true)
    }

    /// The live job holding `dedupeKey`, after an insert `jobs_dedupe` turned away (inside the
    /// same write transaction, so it is still there).
    static func liveJob(dedupeKey: String?, on connection: SQLiteConnection) throws(SQLiteError) -> JobID {
        let live = try connection.query("SELECT id FROM jobs WHERE dedupe_key = ?", [SQLiteValue(dedupeKey)])
        guard let id = live.first?.first?.int else { throw SQLiteError(code: SQLITE_MISUSE_CODE, message: "dedupe key lookup failed") }
        return JobID(id)
    }

    // MARK: Running

    public func claim(queues: [String], limit: Int, owner: String, lease: Double) throws(DeriveError) -> [ClaimedJob] {
        guard limit > 0, !queues.isEmpty else { return [] }
        let queueList = JSONWriter.compact(.array(queues.map(JSONValue.string)))
        return try write { connection, now throws(SQLiteError) in
            let rows = try connection.rows(SQL.claim, [SQLiteValue(owner), SQLiteValue(now + lease), SQLiteValue(now),
                                                        SQLiteValue(queueList), SQLiteValue(limit)], source: "a claimed job")
            return try SQLiteError.decoding { () throws(DeriveError) in
                try rows.map { row throws(DeriveError) in try ClaimedJob(row: row, owner: owner) }
            }.sorted(by: ClaimedJob.claimOrder)
        }
    }

    public func heartbeat(_ runs: [JobRun], lease: Double) throws(DeriveError) -> HeartbeatResult {
        guard !runs.isEmpty else { return HeartbeatResult(extended: [], cancelRequested: []) }
        return try write { connection, now throws(SQLiteError) in
            var result = HeartbeatResult(extended: [], cancelRequested: [])
            for run in runs {
                let rows = try connection.rows(SQL.heartbeat, [SQLiteValue(now + lease)] + Self.guardValues(run), source: "a heartbeat")
                guard let row = rows.first else { continue }
                result.extended.insert(run.id)
                if try SQLiteError.decoding({ () throws(DeriveError) in try row.bool("cancel_requested") }) { result.cancelRequested.insert(run.id) }
            }
            return result
        }
    }

    public func complete(_ completions: [Completion]) throws(DeriveError) -> Set<JobID> {
        guard !completions.isEmpty else { return [] }
        return try write { connection, now throws(SQLiteError) in
            var done: Set<JobID> = []
            for completion in completions where try Self.archive(completion.run, outcome: .completed, entry: nil, result: completion.result,
                                                                 at: now, on: connection) {
                done.insert(completion.run.id)
                if let record = completion.record { try Self.write(record, job: completion.run.id, at: now, on: connection) }
            }
            return done
        }
    }

    public func acknowledgeCancel(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> {
        guard !runs.isEmpty else { return [] }
        return try write { connection, now throws(SQLiteError) in
            var done: Set<JobID> = []
            for run in runs where try Self.archive(run, outcome: .cancelled, entry: nil, result: nil, at: now, on: connection) {
                done.insert(run.id)
            }
            return done
        }
    }

    public func release(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> {
        guard !runs.isEmpty else { return [] }
        return try write { connection, now throws(SQLiteError) in
            var released: Set<JobID> = []
            for run in runs {
                // A job asked to cancel is not put back: it is cancelled.
                if try Self.archive(run, outcome: .cancelled, entry: nil, result: nil, at: now, on: connection) {
                    released.insert(run.id)
                    continue
                }
                try connection.query(SQL.release, Self.guardValues(run))
                if connection.changes > 0 { released.insert(run.id) }
            }
            return released
        }
    }

    public func fail(_ failures: [Failure], policy: RetryPolicy) throws(DeriveError) -> [JobID: FailureOutcome] {
        guard !failures.isEmpty else { return [:] }
        return try write { connection, now throws(SQLiteError) in
            var outcomes: [JobID: FailureOutcome] = [:]
            for failure in failures {
                let rows = try connection.rows(SQL.endedRun + " AND attempt = ? AND lease_owner = ? AND state = 'running'",
                                               Self.guardValues(failure.run), source: "a failed run")
                guard let row = rows.first else {
                    outcomes[failure.run.id] = .stale
                    continue
                }
                let ended = try SQLiteError.decoding { () throws(DeriveError) in try EndedRun(row: row) }
                let disposition = policy.disposition(of: ended, error: failure.error, lostLease: false,
                                                     at: Date(timeIntervalSince1970: now))
                try Self.apply(disposition, to: failure.run.id, at: now, on: connection)
                outcomes[failure.run.id] = disposition.failureOutcome
            }
            return outcomes
        }
    }

    public func rescueExpired(limit: Int, policy: RetryPolicy) throws(DeriveError) -> RescueResult {
        try write { connection, now throws(SQLiteError) in
            var result = RescueResult(requeued: [], failed: [])
            let rows = try connection.rows(SQL.expired, [SQLiteValue(now), SQLiteValue(limit)], source: "an expired run")
            for row in rows {
                let expired = try SQLiteError.decoding { () throws(DeriveError) in try ExpiredLease(row: row) }
                var random = SystemRandomNumberGenerator()
                let disposition = policy.disposition(of: expired, at: Date(timeIntervalSince1970: now), using: &random)
                try Self.apply(disposition, to: expired.run.id, at: now, on: connection)
                result.add(expired, disposition)
            }
            return result
        }
    }

    public func promoteScheduled(limit: Int) throws(DeriveError) -> Int {
        try write { connection, now throws(SQLiteError) in
            try connection.query(SQL.promote, [SQLiteValue(now), SQLiteValue(limit)])
            return connection.changes
        }
    }

    // MARK: Managing

    public func cancel(_ id: JobID) throws(DeriveError) -> CancelResult {
        try write { connection, now throws(SQLiteError) in
            try connection.query(SQL.archiveWaiting, [SQLiteValue(JobState.cancelled.rawValue), SQLiteValue(now), SQLiteValue(Int(id))])
            if connection.changes > 0 {
                try connection.query("DELETE FROM jobs WHERE id = ?", [SQLiteValue(Int(id))])
                return .cancelled
            }
            try connection.query("UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'", [SQLiteValue(Int(id))])
            if connection.changes > 0 { return .requested }
            let archived = try connection.query("SELECT 1 FROM job_archive WHERE id = ?", [SQLiteValue(Int(id))])
            return archived.isEmpty ? .notFound : .finished
        }
    }

    public func retry(_ id: JobID) throws(DeriveError) -> JobID? {
        try write { connection, now throws(SQLiteError) in
            try connection.query("UPDATE jobs SET state = 'available', run_at = ? WHERE id = ? AND state = 'scheduled'",
                                 [SQLiteValue(now), SQLiteValue(Int(id))])
            if connection.changes > 0 { return id }
            // Under the archived job's dedupe key, else retry:<id>; while a live job holds it, that job.
            let key = try connection.query(SQL.retryKey, [SQLiteValue(Int(id))])
            guard let key = key.first?.first?.string else { return nil }
            let rows = try connection.query(SQL.rerun, [SQLiteValue(now), SQLiteValue(key), SQLiteValue(Int(id))])
            if let rerun = rows.first?.first?.int { return JobID(rerun) }
            return try Self.liveJob(dedupeKey: key, on: connection)
        }
    }

    public func job(_ id: JobID) throws(DeriveError) -> JobSnapshot? {
        try read { connection throws(SQLiteError) in
            try connection.rows(SQL.job, [SQLiteValue(Int(id))], source: "jobs").first.map(Self.snapshot)
        }
    }

    /// A row of `SQL.liveColumns` or `SQL.archivedColumns`.
    static func snapshot(_ row: DatabaseRow) throws(SQLiteError) -> JobSnapshot {
        try SQLiteError.decoding { () throws(DeriveError) in try JobSnapshot(row: row) }
    }

    public func ping() throws(DeriveError) {
        _ = try read { connection throws(SQLiteError) in try connection.query("SELECT count(*) FROM jobs WHERE id = 0") }
    }

    public func counts() throws(DeriveError) -> [QueueCounts] {
        try QueueCounts.from(rows: try read { connection throws(SQLiteError) in try connection.rows(SQL.counts, source: "queue counts") })
    }

    public func prune(finishedBefore date: Date) throws(DeriveError) -> Int {
        try prune(finishedBefore: date) { _ in }
    }

    public func prune(finishedBefore date: Date, progress: (Int) -> Void) throws(DeriveError) -> Int {
        var total = 0
        while true {
            let deleted = try write { connection, _ throws(SQLiteError) in
                try connection.query(SQL.prune, [SQLiteValue(date.timeIntervalSince1970)])
                return connection.changes
            }
            total += deleted
            progress(total)
            if deleted < 10000 { return total }
        }
    }

    // MARK: Helpers

    private static func guardValues(_ run: JobRun) -> [SQLiteValue] {
        [SQLiteValue(Int(run.id)), SQLiteValue(run.attempt), SQLiteValue(run.owner)]
    }

    /// Moves one run to the archive if it still holds its job (and, to be cancelled, was
    /// asked to cancel). Returns whether it did.
    private static func archive(_ run: JobRun, outcome: JobState, entry: JSONValue?, result: JSONValue?, at now: Double,
                                on connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        let cancelGuard = outcome == .cancelled ? " AND cancel_requested = 1" : ""
        try connection.query(SQL.archiveRun + cancelGuard, [
            SQLiteValue(outcome.rawValue), SQLiteValue(entry.map(JSONWriter.compact)), SQLiteValue(result.map(JSONWriter.compact)),
            SQLiteValue(now),
        ] + guardValues(run))
        guard connection.changes > 0 else { return false }
        try connection.query("DELETE FROM jobs WHERE id = ?", [SQLiteValue(Int(run.id))])
        return true
    }

    /// Applies a decided disposition to a job the transaction already checked.
    private static func apply(_ disposition: Disposition, to id: JobID, at now: Double, on connection: SQLiteConnection) throws(SQLiteError) {
        switch disposition {
        case .requeue(let delay, let entry, let lostLease):
            try connection.query(SQL.requeue, [delay > 0 ? "scheduled" : "available", SQLiteValue(now + delay), SQLiteValue(lostLease ? 1 : 0),
                                               SQLiteValue(JSONWriter.compact(entry)), SQLiteValue(Int(id))])
        case .archive(let outcome, let entry):
            try connection.query(SQL.archiveLocked, [SQLiteValue(outcome.rawValue), SQLiteValue(JSONWriter.compact(entry)), SQLiteValue(now),
                                                     SQLiteValue(Int(id))])
            try connection.query("DELETE FROM jobs WHERE id = ?", [SQLiteValue(Int(id))])
        }
    }

    enum SQL {
        static let insert = """
            INSERT INTO jobs (queue, state, priority, run_at, max_attempts, dedupe_key, payload, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
            RETURNING id
            """

        static let claim = """
            UPDATE jobs SET state = 'running', attempt = attempt + 1, lease_owner = ?1, lease_expires_at = ?2, started_at = ?3
            WHERE id IN (
                SELECT id FROM jobs
                WHERE state = 'available' AND queue IN (SELECT value FROM json_each(?4))
                  AND queue NOT IN (SELECT queue FROM paused_queues)
                ORDER BY priority DESC, run_at, id
                LIMIT ?5
            )
            RETURNING id, attempt, queue, priority, max_attempts, payload, lease_expires_at, created_at, run_at
            """

        static let heartbeat = """
            UPDATE jobs SET lease_expires_at = ?1 WHERE id = ?2 AND attempt = ?3 AND lease_owner = ?4 AND state = 'running'
            RETURNING cancel_requested
            """

        static let release = """
            UPDATE jobs SET state = 'available', attempt = attempt - 1, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL
            WHERE id = ? AND attempt = ? AND lease_owner = ? AND state = 'running'
            """

        static let endedRun = "SELECT id, attempt, max_attempts, lease_losses, cancel_requested, lease_owner FROM jobs WHERE id = ?"

        /// With the owner's last status report (`seen_at`, NULL when it left none), to tell a
        /// dead worker from one alive that stopped extending the lease.
        static let expired = """
            SELECT j.id AS id, j.attempt AS attempt, j.max_attempts AS max_attempts, j.lease_losses AS lease_losses,
                   j.cancel_requested AS cancel_requested, j.lease_owner AS lease_owner, j.lease_expires_at AS lease_expires_at,
                   w.seen_at AS seen_at
            FROM jobs j LEFT JOIN workers w ON w.id = j.lease_owner
            WHERE j.state = 'running' AND j.lease_expires_at < ? ORDER BY j.lease_expires_at LIMIT ?
            """

        static let requeue = """
            UPDATE jobs SET state = ?1, run_at = ?2, lease_owner = NULL, lease_expires_at = NULL, lease_losses = lease_losses + ?3,
                            errors = json_insert(errors, '$[#]', json(?4))
            WHERE id = ?5
            """

        private static let archiveColumns = """
            INSERT INTO job_archive (id, queue, outcome, priority, attempt, max_attempts, dedupe_key, payload, errors, result,
                                     created_at, started_at, finished_at, worker)
            """

        /// ?1 outcome, ?2 error entry or NULL, ?3 result or NULL, ?4 now, then the run's id, attempt and owner.
        static let archiveRun = archiveColumns + """

            SELECT id, queue, ?1, priority, attempt, max_attempts, dedupe_key, payload,
                   CASE WHEN ?2 IS NULL THEN errors ELSE json_insert(errors, '$[#]', json(?2)) END, ?3, created_at, started_at, ?4,
                   lease_owner
            FROM jobs WHERE id = ?5 AND attempt = ?6 AND lease_owner = ?7 AND state = 'running'
            """

        /// ?1 outcome, ?2 error entry, ?3 now, ?4 id: a job the transaction already checked.
        static let archiveLocked = archiveColumns + """

            SELECT id, queue, ?1, priority, attempt, max_attempts, dedupe_key, payload, json_insert(errors, '$[#]', json(?2)), NULL,
                   created_at, started_at, ?3, lease_owner
            FROM jobs WHERE id = ?4
            """

        /// ?1 outcome, ?2 now, ?3 id: a job that is waiting, not running.
        static let archiveWaiting = archiveColumns + """

            SELECT id, queue, ?1, priority, attempt, max_attempts, dedupe_key, payload, errors, NULL, created_at, started_at, ?2,
                   lease_owner
            FROM jobs WHERE id = ?3 AND state <> 'running'
            """

        static let promote = """
            UPDATE jobs SET state = 'available'
            WHERE id IN (SELECT id FROM jobs WHERE state = 'scheduled' AND run_at <= ? ORDER BY run_at LIMIT ?)
            """

        /// The dedupe key a retry of failed or cancelled job ?1 carries: its own (a retry's is the
        /// key it was given), else `retry:<id>`. No row: nothing to retry.
        static let retryKey = """
            SELECT COALESCE(dedupe_key, 'retry:' || id) FROM job_archive WHERE id = ?1 AND outcome IN ('failed', 'cancelled')
            """

        /// Failed or cancelled job ?3, run again as a new job with fresh attempts under dedupe key
        /// ?2, unless a live job holds that key.
        static let rerun = """
            INSERT INTO jobs (queue, state, priority, run_at, max_attempts, dedupe_key, payload, created_at)
            SELECT queue, 'available', priority, ?1, max_attempts, ?2, payload, ?1 FROM job_archive WHERE id = ?3
            ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
            RETURNING id
            """

        /// What `JobSnapshot(row:)` reads, from the jobs table and from the archive.
        static let liveColumns = """
            id, queue, state, priority, attempt, max_attempts, run_at, lease_owner, dedupe_key, cancel_requested, payload, errors,
            NULL AS result, created_at, NULL AS finished_at, lease_expires_at, started_at, lease_owner AS worker
            """
        static let archivedColumns = """
            id, queue, outcome AS state, priority, attempt, max_attempts, NULL AS run_at, NULL AS lease_owner, dedupe_key,
            0 AS cancel_requested, payload, errors, result, created_at, finished_at, NULL AS lease_expires_at, started_at, worker
            """

        static let job = """
            SELECT \(liveColumns) FROM jobs WHERE id = ?1
            UNION ALL
            SELECT \(archivedColumns) FROM job_archive WHERE id = ?1
            """

        static let counts = """
            SELECT queue, state, count(*) AS jobs, min(CASE WHEN state = 'available' THEN run_at END) AS oldest_available,
                   sum(state = 'scheduled' AND attempt > 0) AS retrying
            FROM jobs GROUP BY queue, state
            """

        static let prune = """
            DELETE FROM job_archive WHERE id IN (SELECT id FROM job_archive WHERE finished_at < ? LIMIT 10000)
            """
    }
}
