import DeriveLanguage
import DeriveJobs
import Foundation

extension PostgresJobStore: PresetStore, WorkerRegistry, QueueInspector {
    // MARK: Presets

    public func savePreset(name: String, outputs: JSONValue) throws(DeriveError) -> Int {
        try withConnection { connection throws(PostgresError) in
            try connection.transaction { () throws(PostgresError) in
                // Two saves of one name at once take turns, so each gets its own version.
                try connection.query("SELECT pg_advisory_xact_lock(hashtext('derive.presets:' || $1))", [name])
                let rows = try connection.query(AdminSQL.savePreset, [name, JSONWriter.compact(outputs)]).named("presets")
                return try PostgresError.decoding { () throws(DeriveError) in try rows.first.map { row throws(DeriveError) in try row.int("version") } ?? 0 }
            }
        }
    }

    public func presets(includingRetired: Bool) throws(DeriveError) -> [StoredPreset] {
        let all = try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.latestPresets).named("presets").map(Self.preset)
        }
        return includingRetired ? all : all.filter { $0.retiredAt == nil }
    }

    public func presetVersions(_ name: String) throws(DeriveError) -> [StoredPreset] {
        try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.presetVersions, [name]).named("presets").map(Self.preset)
        }
    }

    public func retirePreset(_ name: String) throws(DeriveError) -> Bool {
        try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.retirePreset, [name]).scalar == "t"
        }
    }

    static func preset(_ row: DatabaseRow) throws(PostgresError) -> StoredPreset {
        try PostgresError.decoding { () throws(DeriveError) in try StoredPreset(row: row) }
    }

    // MARK: Workers

    public func report(_ status: WorkerStatus) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.reportWorker, [
                status.id, status.host, String(status.pid), PostgresArray.literal(status.queues), String(status.slots),
                String(status.startedAt.timeIntervalSince1970), JSONWriter.compact(status.activity),
            ])
        }
    }

    public func workers(seenSince date: Date) throws(DeriveError) -> [WorkerStatus] {
        try withConnection { connection throws(PostgresError) in
            let rows = try connection.query(AdminSQL.workers, [String(date.timeIntervalSince1970)]).named("workers")
            return try PostgresError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try WorkerStatus(row: row) } }
        }
    }

    public func forgetWorker(_ id: String) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            try connection.query("DELETE FROM derive.workers WHERE id = $1", [id])
        }
    }

    /// A text[] as libpq prints it: `{a,b}` (queue names need no quoting).
    // MARK: Inspecting

    public func jobs(state: JobState?, queue: String?, limit: Int) throws(DeriveError) -> [JobSnapshot] {
        let sql: String
        var parameters: [String?] = [queue, String(limit)]
        switch state {
        case nil: sql = AdminSQL.liveJobs
        case let state? where state.isLive:
            sql = AdminSQL.liveJobsInState
            parameters.append(state.rawValue)
        case let state?:
            sql = AdminSQL.finishedJobs
            parameters.append(state.rawValue)
        }
        return try withConnection { connection throws(PostgresError) in
            try connection.query(sql, parameters).named("jobs").map(Self.snapshot)
        }
    }

    public func finishedJobs(_ filter: JobFilter, after cursor: JobCursor?, limit: Int) throws(DeriveError) -> JobPage {
        let (sql, values) = Self.finishedJobsQuery(filter, after: cursor, limit: limit)
        let jobs = try withConnection { connection throws(PostgresError) in
            try connection.query(sql, values).named("job_archive").map(Self.snapshot)
        }
        return JobPage(jobs: jobs, limit: limit)
    }

    /// The statement `finishedJobs` runs: only the conditions asked for, each one an index
    /// (Migrations/0007) serves in (finished_at, id) order. Public for the plan checks.
    public static func finishedJobsQuery(_ filter: JobFilter, after cursor: JobCursor?, limit: Int) -> (sql: String, values: [String?]) {
        var conditions: [String] = [], values: [String?] = []
        func narrow(_ condition: (Int) -> String, _ bound: String...) {
            conditions.append(condition(values.count + 1))
            values += bound
        }
        if let outcome = filter.outcome { narrow({ "outcome = $\($0)" }, outcome.rawValue) }
        if let queue = filter.queue { narrow({ "queue = $\($0)" }, queue) }
        if let code = filter.errorCode { narrow({ "errors -> -1 ->> 'code' = $\($0)" }, code) }
        if let host = filter.sourceHost { narrow({ "derive.source_host(payload ->> 'source') = $\($0)" }, host) }
        if let since = filter.finishedSince { narrow({ "finished_at >= to_timestamp($\($0)::double precision)" }, String(since.timeIntervalSince1970)) }
        if let text = filter.sourceContains {
            narrow({ "(strpos(payload ->> 'source', $\($0)::text) > 0 OR payload ->> 'source' IN "
                + "(SELECT source FROM derive.original_names WHERE strpos(name, $\($0)::text) > 0))" }, text)
        }
        if let cursor {
            narrow({ "(finished_at, id) < ('epoch'::timestamptz + $\($0)::bigint * interval '1 microsecond', $\($0 + 1)::bigint)" },
                   String(cursor.finishedAtMicroseconds), String(cursor.id))
        }
        let sql = "SELECT \(SQL.archivedColumns) FROM derive.job_archive"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY job_archive.finished_at DESC, job_archive.id DESC LIMIT $\(values.count + 1)::integer"
        return (sql, values + [String(max(0, limit))])
    }

    public func failureGroups(since date: Date) throws(DeriveError) -> [FailureGroup] {
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query("""
                SELECT errors -> -1 ->> 'code' AS code, count(*) AS jobs, extract(epoch FROM max(finished_at)) AS last_failed_at
                FROM derive.job_archive
                WHERE outcome = 'failed' AND finished_at >= to_timestamp($1::double precision) AND errors -> -1 ->> 'code' IS NOT NULL
                GROUP BY 1 ORDER BY jobs DESC, code
                """, [String(date.timeIntervalSince1970)]).named("job_archive")
        }
        return try rows.map { row throws(DeriveError) in try FailureGroup(row: row) }
    }

    public func throughput(since date: Date, bucket seconds: Int) throws(DeriveError) -> [ThroughputBucket] {
        try ThroughputBucket.from(rows: try withConnection { connection throws(PostgresError) in
            try connection.query("""
                SELECT floor(extract(epoch FROM finished_at) / $2::integer) * $2::integer AS bucket, outcome, count(*) AS jobs
                FROM derive.job_archive WHERE finished_at >= to_timestamp($1::double precision) GROUP BY 1, 2
                """, [String(date.timeIntervalSince1970), String(max(1, seconds))]).named("job_archive")
        })
    }

    public func finishedTotals(since date: Date, bucket seconds: Int, limit: Int) throws(DeriveError) -> [FinishedTotal] {
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query(Self.finishedTotalsSQL, [String(date.timeIntervalSince1970), String(max(1, seconds)), String(max(0, limit))])
                .named("job_archive")
        }
        return try rows.map { row throws(DeriveError) in try FinishedTotal(row: row) }
    }

    public func jobs(dedupeKey key: String, limit: Int) throws(DeriveError) -> [JobSnapshot] {
        try withConnection { connection throws(PostgresError) in
            try connection.query(Self.generationsSQL, [key, String(max(0, limit))]).named("jobs").map(Self.snapshot)
        }
    }

    /// $1 since (Unix seconds), $2 the bucket's seconds, $3 the most groups: read from
    /// `job_archive_totals` (Migrations/0013) alone once the archive is vacuumed. The bucket is
    /// worked out in double precision (`date_part`): `extract` gives a numeric, and grouping
    /// a day of 14,000 jobs by it took three times as long. Public for the plan checks.
    public static let finishedTotalsSQL = """
        SELECT floor(date_part('epoch', finished_at) / $2::integer) * $2::integer AS bucket, queue, worker, outcome, count(*) AS jobs
        FROM derive.job_archive WHERE finished_at >= to_timestamp($1::double precision)
        GROUP BY 1, 2, 3, 4 ORDER BY 1 DESC, 2, 3, 4 LIMIT $3::integer
        """

    /// $1 the dedupe key, $2 the most jobs: `jobs_dedupe` and `job_archive_dedupe`. Public for
    /// the plan checks.
    public static let generationsSQL = """
        SELECT * FROM (SELECT \(SQL.liveColumns) FROM derive.jobs WHERE dedupe_key = $1
                       UNION ALL
                       SELECT \(SQL.archivedColumns) FROM derive.job_archive WHERE dedupe_key = $1) AS generations
        ORDER BY id LIMIT $2::integer
        """

    public func finishedCounts(since date: Date) throws(DeriveError) -> [JobState: Int] {
        try JobState.counts(rows: try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.finishedCounts, [String(date.timeIntervalSince1970)]).named("job_archive")
        })
    }
}

enum AdminSQL {
    static let savePreset = """
        INSERT INTO derive.presets (name, version, outputs)
        SELECT $1, COALESCE(max(version), 0) + 1, $2::jsonb FROM derive.presets WHERE name = $1
        RETURNING version
        """
    static let presetColumns = "name, version, outputs, extract(epoch FROM created_at) AS created_at, extract(epoch FROM retired_at) AS retired_at"
    static let latestPresets = "SELECT DISTINCT ON (name) \(presetColumns) FROM derive.presets ORDER BY name, version DESC"
    static let presetVersions = "SELECT \(presetColumns) FROM derive.presets WHERE name = $1 ORDER BY version DESC"
    static let retirePreset = """
        WITH retired AS (UPDATE derive.presets SET retired_at = now() WHERE name = $1 AND retired_at IS NULL RETURNING 1)
        SELECT EXISTS (SELECT 1 FROM derive.presets WHERE name = $1)
        """

    /// Upserts the worker's row, and forgets workers silent for an hour.
    static let reportWorker = """
        WITH forgotten AS (DELETE FROM derive.workers WHERE seen_at < now() - interval '1 hour')
        INSERT INTO derive.workers (id, host, pid, queues, slots, started_at, seen_at, activity)
        VALUES ($1, $2, $3::integer, $4::text[], $5::integer, to_timestamp($6::double precision), now(), $7::jsonb)
        ON CONFLICT (id) DO UPDATE SET queues = EXCLUDED.queues, slots = EXCLUDED.slots, seen_at = now(), activity = EXCLUDED.activity
        """
    static let workers = """
        SELECT id, host, pid, to_jsonb(queues) AS queues, slots, extract(epoch FROM started_at) AS started_at,
               extract(epoch FROM seen_at) AS seen_at, activity
        FROM derive.workers WHERE seen_at >= to_timestamp($1::double precision) ORDER BY host, pid
        """

    static let liveJobs = """
        SELECT \(PostgresJobStore.SQL.liveColumns) FROM derive.jobs
        WHERE $1::text IS NULL OR queue = $1 ORDER BY id LIMIT $2::integer
        """
    static let liveJobsInState = """
        SELECT \(PostgresJobStore.SQL.liveColumns) FROM derive.jobs
        WHERE ($1::text IS NULL OR queue = $1) AND state = $3 ORDER BY id LIMIT $2::integer
        """
    static let finishedJobs = """
        SELECT \(PostgresJobStore.SQL.archivedColumns) FROM derive.job_archive
        WHERE ($1::text IS NULL OR queue = $1) AND outcome = $3 ORDER BY finished_at DESC LIMIT $2::integer
        """
    static let finishedCounts = """
        SELECT outcome, count(*) AS jobs FROM derive.job_archive WHERE finished_at >= to_timestamp($1::double precision) GROUP BY outcome
        """
}
