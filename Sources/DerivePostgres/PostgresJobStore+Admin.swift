import DeriveCore
import Foundation

extension PostgresJobStore: PresetStore, WorkerRegistry, QueueInspector {
    // MARK: Presets

    public func savePreset(name: String, outputs: JSONValue) throws(DeriveError) -> Int {
        try withConnection { connection throws(PostgresError) in
            try connection.transaction { () throws(PostgresError) in
                // Two saves of one name at once take turns, so each gets its own version.
                try connection.query("SELECT pg_advisory_xact_lock(hashtext('derive.presets:' || $1))", [name])
                return try Fields(try connection.query(AdminSQL.savePreset, [name, JSONWriter.compact(outputs)]).rows[0]).int(0)
            }
        }
    }

    public func presets(includingRetired: Bool) throws(DeriveError) -> [StoredPreset] {
        let all = try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.latestPresets).rows.map(Self.preset)
        }
        return includingRetired ? all : all.filter { $0.retiredAt == nil }
    }

    public func presetVersions(_ name: String) throws(DeriveError) -> [StoredPreset] {
        try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.presetVersions, [name]).rows.map(Self.preset)
        }
    }

    public func retirePreset(_ name: String) throws(DeriveError) -> Bool {
        try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.retirePreset, [name]).scalar == "t"
        }
    }

    static func preset(_ row: [String?]) throws(PostgresError) -> StoredPreset {
        let fields = Fields(row)
        return StoredPreset(name: try fields.string(0), version: try fields.int(1), outputs: try fields.json(2),
                            createdAt: try fields.date(3), retiredAt: try fields.optionalDate(4))
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
            try connection.query(AdminSQL.workers, [String(date.timeIntervalSince1970)]).rows.map { row throws(PostgresError) in
                let fields = Fields(row)
                var status = WorkerStatus(id: try fields.string(0), host: try fields.string(1), pid: try fields.int(2),
                                          queues: Self.textArray(try fields.string(3)), slots: try fields.int(4),
                                          startedAt: try fields.date(5), seenAt: try fields.date(6), running: [], finished: [:],
                                          stopping: false)
                status.setActivity(try fields.json(7))
                return status
            }
        }
    }

    public func forgetWorker(_ id: String) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            try connection.query("DELETE FROM derive.workers WHERE id = $1", [id])
        }
    }

    /// A text[] as libpq prints it: `{a,b}` (queue names need no quoting).
    static func textArray(_ text: String) -> [String] {
        text.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",").map {
            $0.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
    }

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
            try connection.query(sql, parameters).rows.map(Self.snapshot)
        }
    }

    public func finishedCounts(since date: Date) throws(DeriveError) -> [JobState: Int] {
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query(AdminSQL.finishedCounts, [String(date.timeIntervalSince1970)]).rows
        }
        var counts: [JobState: Int] = [:]
        for row in rows {
            if let state = row[0].flatMap(JobState.init(rawValue:)), let count = row[1].flatMap({ Int($0) }) { counts[state] = count }
        }
        return counts
    }
}

enum AdminSQL {
    static let savePreset = """
        INSERT INTO derive.presets (name, version, outputs)
        SELECT $1, COALESCE(max(version), 0) + 1, $2::jsonb FROM derive.presets WHERE name = $1
        RETURNING version
        """
    static let presetColumns = "name, version, outputs, extract(epoch FROM created_at), extract(epoch FROM retired_at)"
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
        SELECT id, host, pid, queues, slots, extract(epoch FROM started_at), extract(epoch FROM seen_at), activity
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
        SELECT outcome, count(*) FROM derive.job_archive WHERE finished_at >= to_timestamp($1::double precision) GROUP BY outcome
        """
}
