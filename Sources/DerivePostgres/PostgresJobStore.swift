import DeriveLanguage
import DeriveJobs
import Foundation
import Synchronization

/// The production queue: `derive.jobs` on PostgreSQL, shared by any number of workers on any
/// number of machines. Claims use `FOR UPDATE SKIP LOCKED`, so claimers never wait for each
/// other; every change to a run is guarded by its id, attempt and lease owner; batches of jobs
/// move in one statement each, as JSON record sets.
public final class PostgresJobStore: JobStore {
    public let url: String
    private let pool: ConnectionPool<PostgresConnection>
    private let positions: Mutex<ClaimPositions>

    /// `rescanInterval`: how often, at least, a claim scans its queues from the start rather
    /// than from where this process last claimed (see `ClaimPositions`).
    /// `applicationName` names its connections in `pg_stat_activity`.
    public init(url: String, poolCapacity: Int = 8, rescanInterval: Double = 1, applicationName: String = "derive") {
        self.url = url
        positions = Mutex(ClaimPositions(rescanInterval: rescanInterval))
        pool = ConnectionPool(capacity: poolCapacity, open: { () throws(DeriveError) in
            do throws(PostgresError) { return try PostgresConnection(url: url, applicationName: applicationName) } catch { throw error.deriveError }
        }, isReusable: { $0.isIdle })
    }

    @discardableResult
    func withConnection<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(DeriveError) -> T {
        try pool.withConnection { connection throws(DeriveError) in
            do throws(PostgresError) { return try body(connection) } catch { throw error.deriveError }
        }
    }

    // MARK: Submitting

    public func submit(_ jobs: [NewJob]) throws(DeriveError) -> [SubmitResult] {
        guard !jobs.isEmpty else { return [] }
        try recordOriginalNames(jobs)
        var results = [SubmitResult?](repeating: nil, count: jobs.count)
        // A duplicate that finishes between the insert and the lookup of its id leaves a job
        // unresolved; it is submitted again (rarely more than once).
        for _ in 0..<5 {
            let pending = results.indices.filter { results[$0] == nil }
            guard !pending.isEmpty else { break }
            let records = JSONValue.array(pending.map { index in
                let job = jobs[index]
                return .object([
                    "ord": .int(index), "queue": .string(job.queue), "priority": .int(job.priority),
                    "run_at": job.runAt.map { .decimal($0.timeIntervalSince1970) } ?? .null, "max_attempts": .int(job.maxAttempts),
                    "dedupe_key": job.dedupeKey.map(JSONValue.string) ?? .null, "payload": job.payload,
                ])
            })
            let rows = try withConnection { connection throws(PostgresError) in
                try connection.query(SQL.submit, [JSONWriter.compact(records)])
            }
            for row in rows.named("a submitted job") {
                results[try row.int("ord")] = SubmitResult(id: try row.int64("id"), deduplicated: !(try row.bool("inserted")))
            }
        }
        guard results.allSatisfy({ $0 != nil }) else {
            throw DeriveError(.databaseUnavailable, "could not submit: jobs with the same dedupe key kept finishing while submitting")
        }
        return results.map { $0! }
    }

    // MARK: Running

    public func claim(queues: [String], limit: Int, owner: String, lease: Double) throws(DeriveError) -> [ClaimedJob] {
        guard limit > 0, !queues.isEmpty else { return [] }
        let started = DispatchTime.now().uptimeNanoseconds
        let (segments, full) = positions.withLock { positions in
            let full = positions.fullScanDue(now: started)
            return (positions.segments(for: queues, full: full), full)
        }
        let records = JSONValue.array(segments.enumerated().map { index, segment in
            .object([
                "ord": .int(index), "queue": .string(segment.queue), "lo": .int(segment.lowestPriority), "hi": .int(segment.highestPriority),
                "after_run_at": segment.after.map { .string(String($0.runAtMicros)) } ?? .null,
                "after_id": segment.after.map { .string(String($0.id)) } ?? .null,
            ])
        })
        let claimed: [(job: ClaimedJob, position: ClaimPositions.Position)]
        do {
            claimed = try withConnection { connection throws(PostgresError) in
                let rows = try connection.query(SQL.claim, [PostgresArray.literal(queues), String(limit), owner, String(lease),
                                                            JSONWriter.compact(records)])
                return try PostgresError.decoding { () throws(DeriveError) in
                    try rows.named("a claimed job").map { row throws(DeriveError) in
                        let job = try ClaimedJob(row: row, owner: owner)
                        return (job, ClaimPositions.Position(runAtMicros: try row.int64("run_at_micros"), id: job.run.id))
                    }
                }
            }
        } catch {
            // A claim that failed may have left jobs behind the positions.
            positions.withLock { $0.forget() }
            throw error
        }
        let finished = DispatchTime.now().uptimeNanoseconds
        positions.withLock { positions in
            positions.record(claimed.map { ($0.job.queue, $0.job.priority, $0.position) }, queues: queues, full: full,
                             started: started, now: finished)
        }
        // UPDATE ... RETURNING has no order of its own: restore the claim order.
        return claimed.map(\.job).sorted(by: ClaimedJob.claimOrder)
    }

    /// Forgets where this process last claimed, so its next claim scans every queue from the
    /// start: for when jobs may have become available behind those positions.
    /// Seconds between claims that scan from the start (`rescanInterval`, stretched when full
    /// scans are slow): the longest a job released behind this process's position waits.
    public var currentRescanInterval: Double { positions.withLock { $0.currentInterval } }

    public func rescanNextClaim() {
        positions.withLock { $0.forget() }
    }

    public func heartbeat(_ runs: [JobRun], lease: Double) throws(DeriveError) -> HeartbeatResult {
        guard !runs.isEmpty else { return HeartbeatResult(extended: [], cancelRequested: []) }
        return try withConnection { connection throws(PostgresError) in
            let rows = try connection.query(SQL.heartbeat, [Self.runRecords(runs), String(lease)])
            var result = HeartbeatResult(extended: [], cancelRequested: [])
            try PostgresError.decoding { () throws(DeriveError) in
                for row in rows.named("a heartbeat") {
                    let id = try row.int64("id")
                    result.extended.insert(id)
                    if try row.bool("cancel_requested") { result.cancelRequested.insert(id) }
                }
            }
            return result
        }
    }

    public func complete(_ completions: [Completion]) throws(DeriveError) -> Set<JobID> {
        guard !completions.isEmpty else { return [] }
        let runs = completions.map { completion in
            Self.runRecord(completion.run, extra: ["result": completion.result])
        }
        let records = completions.filter { $0.record != nil }
        return try withConnection { connection throws(PostgresError) in
            // No-op jobs archive in one statement; the rest write their rows in the same
            // transaction, for the runs that still held their jobs.
            guard !records.isEmpty else { return try Self.archive(runs, outcome: .completed, on: connection) }
            return try connection.transaction { () throws(PostgresError) in
                let done = try Self.archive(runs, outcome: .completed, on: connection)
                try Self.write(records.filter { done.contains($0.run.id) }, on: connection)
                return done
            }
        }
    }

    public func acknowledgeCancel(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> {
        try withConnection { connection throws(PostgresError) in
            try Self.archive(runs.map { Self.runRecord($0) }, outcome: .cancelled, on: connection)
        }
    }

    public func release(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> {
        guard !runs.isEmpty else { return [] }
        return try withConnection { connection throws(PostgresError) in
            try connection.transaction { () throws(PostgresError) in
                // A job asked to cancel is not put back: it is cancelled.
                var released = try Self.archive(runs.map { Self.runRecord($0) }, outcome: .cancelled, on: connection)
                let rows = try connection.query(SQL.release, [Self.runRecords(runs)])
                released.formUnion(try Self.ids(rows))
                if !rows.rows.isEmpty {
                    try connection.query(SQL.wake)
                    self.rescanNextClaim()
                }
                return released
            }
        }
    }

    public func fail(_ failures: [Failure], policy: RetryPolicy) throws(DeriveError) -> [JobID: FailureOutcome] {
        guard !failures.isEmpty else { return [:] }
        let errors = Dictionary(failures.map { ($0.run.id, $0.error) }, uniquingKeysWith: { first, _ in first })
        return try withConnection { connection throws(PostgresError) in
            try connection.transaction { () throws(PostgresError) in
                let rows = try connection.query(SQL.lockRuns, [Self.runRecords(failures.map(\.run))])
                let ended = try PostgresError.decoding { () throws(DeriveError) in
                    try rows.named("a failed run").map { row throws(DeriveError) in try EndedRun(row: row) }
                }
                var outcomes = Dictionary(uniqueKeysWithValues: failures.map { ($0.run.id, FailureOutcome.stale) })
                let decided = ended.map { run in (run.id, policy.disposition(of: run, error: errors[run.id]!, lostLease: false)) }
                try Self.apply(decided, on: connection)
                for (id, disposition) in decided { outcomes[id] = disposition.failureOutcome }
                return outcomes
            }
        }
    }

    public func rescueExpired(limit: Int, policy: RetryPolicy) throws(DeriveError) -> RescueResult {
        try withConnection { connection throws(PostgresError) in
            try connection.transaction { () throws(PostgresError) in
                let rows = try connection.query(SQL.lockExpired, [String(limit)])
                var decided: [(JobID, Disposition)] = []
                var result = RescueResult(requeued: [], failed: [])
                for row in rows.named("an expired run") {
                    let expired = try PostgresError.decoding { () throws(DeriveError) in try ExpiredLease(row: row) }
                    let disposition = policy.disposition(of: expired)
                    decided.append((expired.run.id, disposition))
                    result.add(expired, disposition)
                }
                try Self.apply(decided, on: connection)
                return result
            }
        }
    }

    public func promoteScheduled(limit: Int) throws(DeriveError) -> Int {
        try withConnection { connection throws(PostgresError) in
            let promoted = Int(try connection.query(SQL.promote, [String(limit)]).scalar ?? "0") ?? 0
            if promoted > 0 {
                try connection.query(SQL.wake)
                self.rescanNextClaim()
            }
            return promoted
        }
    }

    // MARK: Managing

    public func cancel(_ id: JobID) throws(DeriveError) -> CancelResult {
        let answer = try withConnection { connection throws(PostgresError) in
            try connection.query("SELECT derive.cancel($1)", [String(id)]).scalar
        }
        return answer.flatMap(CancelResult.init(rawValue:)) ?? .notFound
    }

    public func retry(_ id: JobID) throws(DeriveError) -> JobID? {
        try withConnection { connection throws(PostgresError) in
            try connection.query("SELECT derive.retry($1)", [String(id)]).scalar.flatMap { JobID($0) }
        }
    }

    public func job(_ id: JobID) throws(DeriveError) -> JobSnapshot? {
        try withConnection { connection throws(PostgresError) in
            try connection.query(SQL.job, [String(id)]).named("jobs").first.map(Self.snapshot)
        }
    }

    /// A row of `SQL.snapshotColumns`, from the jobs table or the archive.
    static func snapshot(_ row: DatabaseRow) throws(PostgresError) -> JobSnapshot {
        try PostgresError.decoding { () throws(DeriveError) in try JobSnapshot(row: row) }
    }

    public func ping() throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in try connection.query("SELECT 1") }
    }

    public func counts() throws(DeriveError) -> [QueueCounts] {
        try QueueCounts.from(rows: try withConnection { connection throws(PostgresError) in
            try connection.query(SQL.counts).named("queue counts")
        })
    }

    public func prune(finishedBefore date: Date) throws(DeriveError) -> Int {
        try prune(finishedBefore: date) { _ in }
    }

    public func prune(finishedBefore date: Date, progress: (Int) -> Void) throws(DeriveError) -> Int {
        var total = 0
        // In slices, so pruning a large archive never holds one long transaction.
        while true {
            let deleted = try withConnection { connection throws(PostgresError) in
                Int(try connection.query(SQL.prune, [String(date.timeIntervalSince1970), "10000"]).scalar ?? "0") ?? 0
            }
            total += deleted
            progress(total)
            if deleted < 10000 { return total }
        }
    }

    // MARK: Statements

    static func runRecord(_ run: JobRun, extra: KeyValuePairs<String, JSONValue> = [:]) -> JSONValue {
        .object([JSONMember(key: "id", value: .int(Int(run.id))), JSONMember(key: "attempt", value: .int(run.attempt)),
                 JSONMember(key: "owner", value: .string(run.owner))] + extra.map { JSONMember(key: $0.key, value: $0.value) })
    }

    static func runRecords(_ runs: [JobRun]) -> String {
        JSONWriter.compact(.array(runs.map { runRecord($0) }))
    }

    /// The `id` column of every row (what an archive or release returns).
    static func ids(_ rows: PostgresRows) throws(PostgresError) -> Set<JobID> {
        try PostgresError.decoding { () throws(DeriveError) in Set(try rows.named("jobs").map { row throws(DeriveError) in try row.int64("id") }) }
    }

    /// Moves runs to the archive. Records with an owner must still hold their run; those
    /// without were locked by the caller's transaction.
    static func archive(_ records: [JSONValue], outcome: JobState, on connection: PostgresConnection) throws(PostgresError) -> Set<JobID> {
        guard !records.isEmpty else { return [] }
        return try ids(try connection.query(SQL.archive, [JSONWriter.compact(.array(records)), outcome.rawValue]))
    }

    /// Applies decided dispositions to runs locked by the caller's transaction.
    static func apply(_ decided: [(JobID, Disposition)], on connection: PostgresConnection) throws(PostgresError) {
        var requeue: [JSONValue] = []
        var archive: [JobState: [JSONValue]] = [:]
        for (id, disposition) in decided {
            switch disposition {
            case .requeue(let delay, let entry, let lostLease):
                requeue.append(.object(["id": .int(Int(id)), "delay": .decimal(delay), "error": entry, "lost": .int(lostLease ? 1 : 0)]))
            case .archive(let outcome, let entry):
                archive[outcome, default: []].append(.object(["id": .int(Int(id)), "error": entry]))
            }
        }
        if !requeue.isEmpty {
            try connection.query(SQL.requeue, [JSONWriter.compact(.array(requeue))])
        }
        for (outcome, records) in archive {
            _ = try Self.archive(records, outcome: outcome, on: connection)
        }
    }

    enum SQL {
        static let submit = """
            WITH input AS MATERIALIZED (
                SELECT i.*, nextval('derive.jobs_id_seq') AS id
                FROM jsonb_to_recordset($1::jsonb) AS i(ord integer, queue text, priority integer, run_at double precision,
                                                       max_attempts integer, dedupe_key text, payload jsonb)
            ), inserted AS (
                INSERT INTO derive.jobs (id, queue, priority, run_at, max_attempts, dedupe_key, payload)
                SELECT id, queue, priority, COALESCE(to_timestamp(run_at), now()), max_attempts, dedupe_key, payload
                FROM input ORDER BY ord
                ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                RETURNING id
            )
            SELECT input.ord, COALESCE(inserted.id, live.id) AS id, inserted.id IS NOT NULL AS inserted
            FROM input
            LEFT JOIN inserted ON inserted.id = input.id
            LEFT JOIN derive.jobs live ON inserted.id IS NULL AND live.dedupe_key = input.dedupe_key
            WHERE inserted.id IS NOT NULL OR live.id IS NOT NULL
            """

        /// Up to $2 jobs from the queues in $1, best first, leased to $3 for $4 seconds. $5 lists
        /// the ranges of `jobs_claim` to read, per queue in claim order (see `ClaimPositions`):
        /// a span of priorities from its start, or one priority after a position. The
        /// ranges are read in order and reading stops once $2 jobs are found.
        /// Up to $2 jobs from the queues in $1, leased to $3 for $4 seconds, reading the ranges
        /// of the claim index listed in $5 (see `derive.claim` in Migrations/0001_queue.sql).
        static let claim = "SELECT * FROM derive.claim($1::text[], $2::integer, $3::text, $4::double precision, $5::jsonb)"

        static let heartbeat = """
            UPDATE derive.jobs j SET lease_expires_at = now() + make_interval(secs => $2::double precision)
            FROM jsonb_to_recordset($1::jsonb) AS r(id bigint, attempt integer, owner text)
            WHERE j.id = r.id AND j.attempt = r.attempt AND j.lease_owner = r.owner AND j.state = 'running'
            RETURNING j.id, j.cancel_requested
            """

        /// Archives jobs as $2. A record with an owner must still hold its run (and, to be
        /// cancelled, must have been asked to cancel); one without was locked by the caller.
        static let archive = """
            WITH gone AS (
                DELETE FROM derive.jobs j
                USING jsonb_to_recordset($1::jsonb) AS r(id bigint, attempt integer, owner text, error jsonb, result jsonb)
                WHERE j.id = r.id
                  AND (r.owner IS NULL OR (j.attempt = r.attempt AND j.lease_owner = r.owner AND j.state = 'running'
                                           AND ($2 <> 'cancelled' OR j.cancel_requested)))
                RETURNING j.*, r.error, r.result
            )
            INSERT INTO derive.job_archive (id, queue, outcome, priority, attempt, max_attempts, dedupe_key, payload, errors, result,
                                            created_at, started_at, worker)
            SELECT id, queue, $2, priority, attempt, max_attempts, dedupe_key, payload,
                   CASE WHEN error IS NULL THEN errors ELSE errors || jsonb_build_array(error) END, result, created_at, started_at,
                   lease_owner
            FROM gone
            RETURNING id
            """

        /// Puts runs back without spending their attempt.
        static let release = """
            UPDATE derive.jobs j
            SET state = 'available', attempt = j.attempt - 1, lease_owner = NULL, lease_expires_at = NULL, started_at = NULL
            FROM jsonb_to_recordset($1::jsonb) AS r(id bigint, attempt integer, owner text)
            WHERE j.id = r.id AND j.attempt = r.attempt AND j.lease_owner = r.owner AND j.state = 'running'
            RETURNING j.id
            """

        static let lockRuns = """
            SELECT j.id, j.attempt, j.max_attempts, j.lease_losses, j.cancel_requested
            FROM derive.jobs j JOIN jsonb_to_recordset($1::jsonb) AS r(id bigint, attempt integer, owner text)
              ON j.id = r.id AND j.attempt = r.attempt AND j.lease_owner = r.owner AND j.state = 'running'
            FOR UPDATE OF j
            """

        /// With the owner's last status report (`seen_at`, NULL when it left none), to tell a
        /// dead worker from one alive that stopped extending the lease.
        static let lockExpired = """
            SELECT j.id, j.attempt, j.max_attempts, j.lease_losses, j.cancel_requested, j.lease_owner,
                   extract(epoch FROM j.lease_expires_at) AS lease_expires_at, extract(epoch FROM w.seen_at) AS seen_at
            FROM derive.jobs j LEFT JOIN derive.workers w ON w.id = j.lease_owner
            WHERE j.state = 'running' AND j.lease_expires_at < now()
            ORDER BY j.lease_expires_at
            LIMIT $1
            FOR UPDATE OF j SKIP LOCKED
            """

        /// Back to the queue: at once, or scheduled after the backoff delay.
        static let requeue = """
            UPDATE derive.jobs j
            SET state = CASE WHEN r.delay > 0 THEN 'scheduled' ELSE 'available' END,
                run_at = now() + make_interval(secs => r.delay), lease_owner = NULL, lease_expires_at = NULL,
                lease_losses = j.lease_losses + r.lost, errors = j.errors || jsonb_build_array(r.error)
            FROM jsonb_to_recordset($1::jsonb) AS r(id bigint, delay double precision, error jsonb, lost integer)
            WHERE j.id = r.id
            """

        static let promote = """
            WITH due AS (
                SELECT id FROM derive.jobs WHERE state = 'scheduled' AND run_at <= now()
                ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED
            ), promoted AS (
                UPDATE derive.jobs j SET state = 'available' FROM due WHERE j.id = due.id RETURNING 1
            )
            SELECT count(*) FROM promoted
            """

        static let wake = "SELECT pg_notify('derive_jobs', '')"

        /// A job's columns as `snapshot(_:)` reads them, live and archived.
        static let liveColumns = """
            id, queue, state, priority, attempt, max_attempts, extract(epoch FROM run_at) AS run_at, lease_owner, dedupe_key,
            cancel_requested, payload, errors, NULL::jsonb AS result, extract(epoch FROM created_at) AS created_at, NULL::numeric AS finished_at,
            extract(epoch FROM lease_expires_at) AS lease_expires_at, extract(epoch FROM started_at) AS started_at, lease_owner AS worker
            """
        static let archivedColumns = """
            id, queue, outcome AS state, priority, attempt, max_attempts, NULL::numeric AS run_at, NULL AS lease_owner, dedupe_key,
            false AS cancel_requested, payload, errors, result, extract(epoch FROM created_at) AS created_at,
            extract(epoch FROM finished_at) AS finished_at, NULL::numeric AS lease_expires_at, extract(epoch FROM started_at) AS started_at,
            worker
            """

        static let job = """
            SELECT \(liveColumns) FROM derive.jobs WHERE id = $1
            UNION ALL
            SELECT \(archivedColumns) FROM derive.job_archive WHERE id = $1
            """

        static let counts = """
            SELECT queue, state, count(*) AS jobs, extract(epoch FROM min(run_at) FILTER (WHERE state = 'available')) AS oldest_available,
                   count(*) FILTER (WHERE state = 'scheduled' AND attempt > 0) AS retrying
            FROM derive.jobs GROUP BY queue, state
            """

        static let prune = """
            WITH old AS (
                SELECT id FROM derive.job_archive WHERE finished_at < to_timestamp($1::double precision) LIMIT $2
            ), gone AS (
                DELETE FROM derive.job_archive a USING old WHERE a.id = old.id RETURNING 1
            )
            SELECT count(*) FROM gone
            """
    }
}

/// PostgreSQL array literals for text parameters.
enum PostgresArray {
    static func literal(_ values: [String]) -> String {
        "{" + values.map { value in
            "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }.joined(separator: ",") + "}"
    }
}
