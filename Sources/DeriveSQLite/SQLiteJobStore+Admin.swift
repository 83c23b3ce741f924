import DeriveLanguage
import DeriveJobs
import Foundation

extension SQLiteJobStore: PresetStore, WorkerRegistry, QueueInspector {
    // MARK: Records

    /// Upserts a completed run's asset and derivatives, inside the caller's transaction.
    static func write(_ record: DerivationRecord, job: JobID, at now: Double, on connection: SQLiteConnection) throws(SQLiteError) {
        try connection.query(AdminSQL.asset, [SQLiteValue(JSONWriter.compact(record.asset.row)), SQLiteValue(now)])
        for derivative in record.derivatives {
            try connection.query(AdminSQL.derivative, [SQLiteValue(JSONWriter.compact(derivative.row)), SQLiteValue(record.asset.sha256),
                                                       SQLiteValue(Int(job)), SQLiteValue(now)])
        }
        let keys = JSONWriter.compact(.array(record.derivatives.map { .string($0.storageKey) }))
        // What is recorded is no longer pending (WriteLedger).
        try connection.query("DELETE FROM pending_writes WHERE job_id = ? AND storage_key IN (SELECT value FROM json_each(?))",
                             [SQLiteValue(Int(job)), SQLiteValue(keys)])
        for (preset, version) in record.presetVersions {
            try connection.query(ScheduleSQL.supersede, [SQLiteValue(now), SQLiteValue(record.asset.sha256), SQLiteValue(preset),
                                                         SQLiteValue(version), SQLiteValue(keys)])
        }
        if let source = record.source {
            try connection.query(ScheduleSQL.recordSource, [SQLiteValue(source.url), SQLiteValue(record.asset.sha256), SQLiteValue(source.etag),
                                                            SQLiteValue(source.lastModified), SQLiteValue(now)])
        }
    }

    // MARK: Presets

    public func savePreset(name: String, outputs: JSONValue) throws(DeriveError) -> Int {
        try write { connection, now throws(SQLiteError) in
            let rows = try connection.rows(AdminSQL.savePreset, [SQLiteValue(name), SQLiteValue(JSONWriter.compact(outputs)), SQLiteValue(now)],
                                           source: "presets")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.first.map { row throws(DeriveError) in try row.int("version") } ?? 0 }
        }
    }

    public func presets(includingRetired: Bool) throws(DeriveError) -> [StoredPreset] {
        let all = try read { connection throws(SQLiteError) in
            try connection.rows(AdminSQL.latestPresets, source: "presets").map(Self.preset)
        }
        return includingRetired ? all : all.filter { $0.retiredAt == nil }
    }

    public func presetVersions(_ name: String) throws(DeriveError) -> [StoredPreset] {
        try read { connection throws(SQLiteError) in
            try connection.rows(AdminSQL.presetVersions, [SQLiteValue(name)], source: "presets").map(Self.preset)
        }
    }

    public func retirePreset(_ name: String) throws(DeriveError) -> Bool {
        try write { connection, now throws(SQLiteError) in
            try connection.query("UPDATE presets SET retired_at = ? WHERE name = ? AND retired_at IS NULL", [SQLiteValue(now), SQLiteValue(name)])
            return !(try connection.query("SELECT 1 FROM presets WHERE name = ? LIMIT 1", [SQLiteValue(name)]).isEmpty)
        }
    }

    static func preset(_ row: DatabaseRow) throws(SQLiteError) -> StoredPreset {
        try SQLiteError.decoding { () throws(DeriveError) in try StoredPreset(row: row) }
    }

    // MARK: Workers

    public func report(_ status: WorkerStatus) throws(DeriveError) {
        try write { connection, now throws(SQLiteError) in
            try connection.query("DELETE FROM workers WHERE seen_at < ?", [SQLiteValue(now - 3600)])
            try connection.query(AdminSQL.reportWorker, [
                SQLiteValue(status.id), SQLiteValue(status.host), SQLiteValue(status.pid),
                SQLiteValue(JSONWriter.compact(.array(status.queues.map(JSONValue.string)))), SQLiteValue(status.slots),
                SQLiteValue(status.startedAt.timeIntervalSince1970), SQLiteValue(now), SQLiteValue(JSONWriter.compact(status.activity)),
            ])
        }
    }

    public func workers(seenSince date: Date) throws(DeriveError) -> [WorkerStatus] {
        try read { connection throws(SQLiteError) in
            let rows = try connection.rows(AdminSQL.workers, [SQLiteValue(date.timeIntervalSince1970)], source: "workers")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try WorkerStatus(row: row) } }
        }
    }

    public func forgetWorker(_ id: String) throws(DeriveError) {
        try write { connection, _ throws(SQLiteError) in
            try connection.query("DELETE FROM workers WHERE id = ?", [SQLiteValue(id)])
        }
    }

    // MARK: Inspecting

    public func jobs(state: JobState?, queue: String?, limit: Int) throws(DeriveError) -> [JobSnapshot] {
        let sql = state.map { $0.isLive ? AdminSQL.liveJobsInState : AdminSQL.finishedJobs } ?? AdminSQL.liveJobs
        return try read { connection throws(SQLiteError) in
            try connection.rows(sql, [SQLiteValue(queue), SQLiteValue(limit), SQLiteValue(state?.rawValue)], source: "jobs").map(Self.snapshot)
        }
    }

    public func finishedJobs(_ filter: JobFilter, after cursor: JobCursor?, limit: Int) throws(DeriveError) -> JobPage {
        var conditions: [String] = [], values: [SQLiteValue] = []
        func narrow(_ condition: String, _ bound: [SQLiteValue]) {
            conditions.append(condition)
            values += bound
        }
        if let outcome = filter.outcome { narrow("outcome = ?", [SQLiteValue(outcome.rawValue)]) }
        if let queue = filter.queue { narrow("queue = ?", [SQLiteValue(queue)]) }
        if let code = filter.errorCode { narrow("json_extract(errors, '$[#-1].code') = ?", [SQLiteValue(code)]) }
        if let host = filter.sourceHost { narrow("derive_source_host(json_extract(payload, '$.source')) = ?", [SQLiteValue(host)]) }
        if let since = filter.finishedSince { narrow("finished_at >= ?", [SQLiteValue(since.timeIntervalSince1970)]) }
        if let text = filter.sourceContains {
            narrow("(instr(json_extract(payload, '$.source'), ?) > 0 OR json_extract(payload, '$.source') IN (SELECT source FROM original_names WHERE instr(name, ?) > 0))",
                   [SQLiteValue(text), SQLiteValue(text)])
        }
        if let cursor { narrow("(finished_at, id) < (?, ?)", [SQLiteValue(cursor.finishedAt.timeIntervalSince1970), SQLiteValue(Int(cursor.id))]) }
        let sql = "SELECT \(SQL.archivedColumns) FROM job_archive" + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY job_archive.finished_at DESC, job_archive.id DESC LIMIT ?"
        let jobs = try read { connection throws(SQLiteError) in
            try connection.rows(sql, values + [SQLiteValue(max(0, limit))], source: "job_archive").map(Self.snapshot)
        }
        return JobPage(jobs: jobs, limit: limit)
    }

    public func failureGroups(since date: Date) throws(DeriveError) -> [FailureGroup] {
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("""
                SELECT json_extract(errors, '$[#-1].code') AS code, count(*) AS jobs, max(finished_at) AS last_failed_at FROM job_archive
                WHERE outcome = 'failed' AND finished_at >= ? AND json_extract(errors, '$[#-1].code') IS NOT NULL
                GROUP BY 1 ORDER BY jobs DESC, code
                """, [SQLiteValue(date.timeIntervalSince1970)], source: "job_archive")
        }
        return try rows.map { row throws(DeriveError) in try FailureGroup(row: row) }
    }

    public func throughput(since date: Date, bucket seconds: Int) throws(DeriveError) -> [ThroughputBucket] {
        let width = max(1, seconds)
        return try ThroughputBucket.from(rows: try read { connection throws(SQLiteError) in
            try connection.rows("""
                SELECT CAST(finished_at / ?2 AS INTEGER) * ?2 AS bucket, outcome, count(*) AS jobs FROM job_archive
                WHERE finished_at >= ?1 GROUP BY 1, 2
                """, [SQLiteValue(date.timeIntervalSince1970), SQLiteValue(width)], source: "job_archive")
        })
    }

    public func finishedTotals(since date: Date, bucket seconds: Int, limit: Int) throws(DeriveError) -> [FinishedTotal] {
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("""
                SELECT CAST(finished_at / ?2 AS INTEGER) * ?2 AS bucket, queue, worker, outcome, count(*) AS jobs FROM job_archive
                WHERE finished_at >= ?1 GROUP BY 1, 2, 3, 4 ORDER BY 1 DESC, 2, 3, 4 LIMIT ?3
                """, [SQLiteValue(date.timeIntervalSince1970), SQLiteValue(max(1, seconds)), SQLiteValue(max(0, limit))], source: "job_archive")
        }
        return try rows.map { row throws(DeriveError) in try FinishedTotal(row: row) }
    }

    public func jobs(dedupeKey key: String, limit: Int) throws(DeriveError) -> [JobSnapshot] {
        try read { connection throws(SQLiteError) in
            try connection.rows("""
                SELECT * FROM (SELECT \(SQL.liveColumns) FROM jobs WHERE dedupe_key = ?1
                               UNION ALL
                               SELECT \(SQL.archivedColumns) FROM job_archive WHERE dedupe_key = ?1)
                ORDER BY id LIMIT ?2
                """, [SQLiteValue(key), SQLiteValue(max(0, limit))], source: "jobs").map(Self.snapshot)
        }
    }

    public func finishedCounts(since date: Date) throws(DeriveError) -> [JobState: Int] {
        try JobState.counts(rows: try read { connection throws(SQLiteError) in
            try connection.rows("SELECT outcome, count(*) AS jobs FROM job_archive WHERE finished_at >= ? GROUP BY outcome",
                                [SQLiteValue(date.timeIntervalSince1970)], source: "job_archive")
        })
    }
}

enum AdminSQL {
    /// ?1 the asset row as JSON, ?2 now.
    static let asset = """
        INSERT INTO assets (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation, colour_space,
                            icc_description, exif, has_location, perceptual_hash, faces, tags, context, created_at, updated_at)
        SELECT a ->> 'sha256', a ->> 'source_url', a ->> 'bytes', a ->> 'format', a ->> 'width', a ->> 'height', a ->> 'pages',
               a ->> 'has_alpha', a ->> 'orientation', a ->> 'colour_space', a ->> 'icc_description', json(a -> 'exif'),
               a ->> 'has_location', a ->> 'perceptual_hash', CASE WHEN json_type(a, '$.faces') = 'object' THEN json(a -> 'faces') END,
               CASE WHEN json_type(a, '$.tags') = 'array' THEN json(a -> 'tags') END,
               CASE WHEN json_type(a, '$.context') = 'object' THEN json(a -> 'context') END, ?2, ?2
        FROM (SELECT json(?1) AS a) WHERE true
        ON CONFLICT (sha256) DO UPDATE SET
            source_url = excluded.source_url, bytes = excluded.bytes, format = excluded.format, width = excluded.width,
            height = excluded.height, pages = excluded.pages, has_alpha = excluded.has_alpha, orientation = excluded.orientation,
            colour_space = excluded.colour_space, icc_description = excluded.icc_description, exif = excluded.exif,
            has_location = excluded.has_location, perceptual_hash = excluded.perceptual_hash,
            faces = coalesce(excluded.faces, assets.faces), tags = coalesce(excluded.tags, assets.tags),
            context = coalesce(excluded.context, assets.context), updated_at = excluded.updated_at
        """

    /// ?1 the derivative row as JSON, ?2 the asset's sha256, ?3 the job, ?4 now.
    static let derivative = """
        INSERT INTO derivatives (asset_id, job_id, output_name, breakpoint_width, chain, chain_hash, preset_name, preset_version,
                                 storage_key, url, format, width, height, bytes, sha256, quality, frames, has_alpha, blurhash,
                                 dominant_color, timings, created_at)
        SELECT (SELECT id FROM assets WHERE sha256 = ?2), ?3, d ->> 'output_name', d ->> 'breakpoint_width', json(d -> 'chain'),
               d ->> 'chain_hash', d ->> 'preset_name', d ->> 'preset_version', d ->> 'storage_key', d ->> 'url', d ->> 'format',
               d ->> 'width', d ->> 'height', d ->> 'bytes', d ->> 'sha256', d ->> 'quality', d ->> 'frames', d ->> 'has_alpha',
               d ->> 'blurhash', d ->> 'dominant_color', json(d -> 'timings'), ?4
        FROM (SELECT json(?1) AS d) WHERE true
        ON CONFLICT (asset_id, storage_key) DO UPDATE SET superseded_at = NULL,
            job_id = excluded.job_id, output_name = excluded.output_name, breakpoint_width = excluded.breakpoint_width,
            chain = excluded.chain, chain_hash = excluded.chain_hash, preset_name = excluded.preset_name,
            preset_version = excluded.preset_version, url = excluded.url, format = excluded.format, width = excluded.width,
            height = excluded.height, bytes = excluded.bytes, sha256 = excluded.sha256, quality = excluded.quality,
            frames = excluded.frames, has_alpha = excluded.has_alpha, blurhash = excluded.blurhash,
            dominant_color = excluded.dominant_color, timings = excluded.timings
        """

    /// One writer at a time: the next version needs no lock.
    static let savePreset = """
        INSERT INTO presets (name, version, outputs, created_at)
        SELECT ?1, COALESCE(max(version), 0) + 1, ?2, ?3 FROM presets WHERE name = ?1
        RETURNING version
        """
    static let presetColumns = "name, version, outputs, created_at, retired_at"
    static let latestPresets = """
        SELECT \(presetColumns) FROM presets p
        WHERE version = (SELECT max(version) FROM presets WHERE name = p.name) ORDER BY name
        """
    static let presetVersions = "SELECT \(presetColumns) FROM presets WHERE name = ? ORDER BY version DESC"

    static let reportWorker = """
        INSERT INTO workers (id, host, pid, queues, slots, started_at, seen_at, activity) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET queues = excluded.queues, slots = excluded.slots, seen_at = excluded.seen_at,
                                       activity = excluded.activity
        """
    static let workers = """
        SELECT id, host, pid, queues, slots, started_at, seen_at, activity FROM workers WHERE seen_at >= ? ORDER BY host, pid
        """

    static let liveJobs = """
        SELECT \(SQLiteJobStore.SQL.liveColumns) FROM jobs WHERE (?1 IS NULL OR queue = ?1) AND ?3 IS NULL ORDER BY id LIMIT ?2
        """
    static let liveJobsInState = """
        SELECT \(SQLiteJobStore.SQL.liveColumns) FROM jobs WHERE (?1 IS NULL OR queue = ?1) AND state = ?3 ORDER BY id LIMIT ?2
        """
    static let finishedJobs = """
        SELECT \(SQLiteJobStore.SQL.archivedColumns) FROM job_archive WHERE (?1 IS NULL OR queue = ?1) AND outcome = ?3
        ORDER BY finished_at DESC LIMIT ?2
        """
}
