import DeriveLanguage
import DeriveJobs
import Foundation

extension PostgresJobStore: ScheduleStore, ReprocessStore {
    // MARK: Schedules

    public func saveSchedule(_ schedule: Schedule) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            try connection.query(ScheduleSQL.save, [schedule.name, schedule.cron, schedule.timeZone, JSONWriter.compact(schedule.action),
                                                    schedule.enabled ? "t" : "f", String(schedule.createdAt.timeIntervalSince1970)])
        }
    }

    public func schedules() throws(DeriveError) -> [Schedule] {
        try withConnection { connection throws(PostgresError) in
            let rows = try connection.query(ScheduleSQL.list).named("schedules")
            return try PostgresError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try Schedule(row: row) } }
        }
    }

    public func removeSchedule(_ name: String) throws(DeriveError) -> Bool {
        try withConnection { connection throws(PostgresError) in
            try connection.query("DELETE FROM derive.schedules WHERE name = $1 RETURNING 1", [name]).count > 0
        }
    }

    public func fire(_ name: String, at fireTime: Date, job: NewJob) throws(DeriveError) -> JobID? {
        let time = String(fireTime.timeIntervalSince1970.rounded(.down))
        return try withConnection { connection throws(PostgresError) in
            try connection.transaction { () throws(PostgresError) -> JobID? in
                guard try connection.query(ScheduleSQL.recordFire, [name, time]).count > 0 else { return nil }
                let record = JSONValue.object([
                    "ord": .int(0), "queue": .string(job.queue), "priority": .int(job.priority), "run_at": .null,
                    "max_attempts": .int(job.maxAttempts), "dedupe_key": job.dedupeKey.map(JSONValue.string) ?? .null, "payload": job.payload,
                ])
                let rows = try connection.query(SQL.submit, [JSONWriter.compact(.array([record]))])
                let id = try PostgresError.decoding { () throws(DeriveError) in
                    try rows.named("a submitted job").first.map { row throws(DeriveError) in try row.int64("id") }
                }
                try connection.query("UPDATE derive.schedule_fires SET job_id = $3 WHERE schedule = $1 AND fire_time = to_timestamp($2::double precision)",
                                     [name, time, id.map { String($0) }])
                return id
            }
        }
    }

    public func fires(_ name: String, limit: Int) throws(DeriveError) -> [ScheduleFire] {
        try withConnection { connection throws(PostgresError) in
            let rows = try connection.query(ScheduleSQL.fires, [name, String(limit)]).named("schedule_fires")
            return try PostgresError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try ScheduleFire(row: row) } }
        }
    }

    // MARK: Reprocessing

    public func reprocessCandidates(preset: String?, filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate] {
        let parameters: [String?] = [
            preset, String(cursor), filter.createdBefore.map { String($0.timeIntervalSince1970) },
            filter.createdAfter.map { String($0.timeIntervalSince1970) }, filter.stale ? "t" : "f", filter.missing ? "t" : "f", String(limit),
            filter.derived ? "t" : "f",
        ]
        return try withConnection { connection throws(PostgresError) in
            try connection.query(ScheduleSQL.reprocessCandidates, parameters).named("assets").map(Self.candidate)
        }
    }

    public func revalidationCandidates(filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate] {
        let parameters: [String?] = [
            String(cursor), filter.checkedBefore.map { String($0.timeIntervalSince1970) }, filter.createdBefore.map { String($0.timeIntervalSince1970) },
            filter.createdAfter.map { String($0.timeIntervalSince1970) }, String(limit),
        ]
        return try withConnection { connection throws(PostgresError) in
            try connection.query(ScheduleSQL.revalidationCandidates, parameters).named("sources").map(Self.candidate)
        }
    }

    static func candidate(_ row: DatabaseRow) throws(PostgresError) -> SourceCandidate {
        try PostgresError.decoding { () throws(DeriveError) in try SourceCandidate(row: row) }
    }

    public func source(_ url: String) throws(DeriveError) -> SourceState? {
        try withConnection { connection throws(PostgresError) in
            guard let row = try connection.query(ScheduleSQL.source, [url]).named("sources").first else { return nil }
            return try PostgresError.decoding { () throws(DeriveError) in try SourceState(row: row) }
        }
    }

    public func sourceUnchanged(_ url: String, etag: String?, lastModified: String?) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            try connection.query("""
                UPDATE derive.sources SET checked_at = now(), etag = COALESCE($2, etag), last_modified = COALESCE($3, last_modified)
                WHERE url = $1
                """, [url, etag, lastModified])
        }
    }

    public func derivationsOf(assetSHA256 sha: String) throws(DeriveError) -> (presets: [String], outputs: [JSONValue]) {
        try withConnection { connection throws(PostgresError) in
            let presetRows = try connection.query(ScheduleSQL.presetsOf, [sha]).named("derivatives")
            let outputRows = try connection.query(ScheduleSQL.chainsOf, [sha]).named("derivatives")
            let (presets, outputs) = try PostgresError.decoding { () throws(DeriveError) -> ([String], [JSONValue]) in
                (try presetRows.map { row throws(DeriveError) in try row.string("preset_name") },
                 try outputRows.map { row throws(DeriveError) in try row.json("chain") })
            }
            return (presets, outputs)
        }
    }

    public func staleness() throws(DeriveError) -> [PresetStaleness] {
        try withConnection { connection throws(PostgresError) in
            let rows = try connection.query(ScheduleSQL.staleness).named("presets")
            return try PostgresError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try PresetStaleness(row: row) } }
        }
    }

    public func supersededOutputs(limit: Int) throws(DeriveError) -> [SupersededOutput] {
        try withConnection { connection throws(PostgresError) in
            let rows = try connection.query("""
                SELECT id, storage_key FROM derive.derivatives WHERE superseded_at IS NOT NULL ORDER BY superseded_at LIMIT $1::integer
                """, [String(limit)]).named("derivatives")
            return try PostgresError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try SupersededOutput(row: row) } }
        }
    }

    public func deleteDerivatives(_ ids: [Int64]) throws(DeriveError) {
        guard !ids.isEmpty else { return }
        try withConnection { connection throws(PostgresError) in
            try connection.query("DELETE FROM derive.derivatives WHERE id = ANY ($1::bigint[]) AND superseded_at IS NOT NULL",
                                 ["{" + ids.map(String.init).joined(separator: ",") + "}"])
        }
    }
}

enum ScheduleSQL {
    /// Replacing a schedule restarts it: `created_at` is when it took effect.
    static let save = """
        INSERT INTO derive.schedules (name, cron, timezone, action, enabled, created_at, updated_at)
        VALUES ($1, $2, $3, $4::jsonb, $5::boolean, to_timestamp($6::double precision), now())
        ON CONFLICT (name) DO UPDATE SET cron = EXCLUDED.cron, timezone = EXCLUDED.timezone, action = EXCLUDED.action,
                                         enabled = EXCLUDED.enabled, created_at = EXCLUDED.created_at, updated_at = now()
        """
    static let list = """
        SELECT name, cron, timezone AS time_zone, action, enabled, extract(epoch FROM created_at) AS created_at FROM derive.schedules ORDER BY name
        """
    static let recordFire = """
        INSERT INTO derive.schedule_fires (schedule, fire_time) VALUES ($1, to_timestamp($2::double precision))
        ON CONFLICT DO NOTHING RETURNING 1
        """
    static let fires = """
        SELECT extract(epoch FROM fire_time) AS fire_time, extract(epoch FROM fired_at) AS fired_at, job_id FROM derive.schedule_fires
        WHERE schedule = $1 ORDER BY fire_time DESC LIMIT $2::integer
        """

    /// $1 preset, $2 cursor, $3 created before, $4 created after, $5 stale, $6 missing, $7 limit, $8 derived.
    /// The source is the URL that last held the asset, or the one it was first recorded with.
    static let reprocessCandidates = """
        WITH current AS (
            SELECT version, outputs FROM derive.presets WHERE name = $1::text AND retired_at IS NULL ORDER BY version DESC LIMIT 1
        )
        SELECT a.id AS position,
               COALESCE((SELECT s.url FROM derive.sources s WHERE s.asset_id = a.id ORDER BY s.checked_at DESC LIMIT 1), a.source_url) AS source,
               a.sha256 AS asset_sha256, a.tags::text AS asset_tags, a.context::text AS asset_context
        FROM derive.assets a
        WHERE a.id > $2::bigint
          AND ($3::double precision IS NULL OR a.created_at < to_timestamp($3::double precision))
          AND ($4::double precision IS NULL OR a.created_at > to_timestamp($4::double precision))
          AND ((NOT $5::boolean AND NOT $6::boolean)
               OR ($5::boolean AND (SELECT max(d.preset_version) FROM derive.derivatives d
                                    WHERE d.asset_id = a.id AND d.preset_name = $1::text AND d.superseded_at IS NULL)
                                   < (SELECT version FROM current))
               OR ($6::boolean AND EXISTS (
                       SELECT 1 FROM current c, jsonb_array_elements(c.outputs) o
                       WHERE NOT EXISTS (SELECT 1 FROM derive.derivatives d
                                         WHERE d.asset_id = a.id AND d.preset_name = $1::text AND d.output_name = o ->> 'name'
                                           AND d.preset_version = c.version AND d.superseded_at IS NULL))))
          AND (NOT $8::boolean OR EXISTS (SELECT 1 FROM derive.derivatives d
                                          WHERE d.asset_id = a.id AND d.preset_name = $1::text AND d.superseded_at IS NULL))
        ORDER BY a.id
        LIMIT $7::integer
        """

    /// $1 cursor, $2 checked before, $3 created before, $4 created after, $5 limit.
    static let revalidationCandidates = """
        SELECT s.id AS position, s.url AS source, a.sha256 AS asset_sha256, a.tags::text AS asset_tags, a.context::text AS asset_context
        FROM derive.sources s JOIN derive.assets a ON a.id = s.asset_id
        WHERE s.id > $1::bigint
          AND ($2::double precision IS NULL OR s.checked_at < to_timestamp($2::double precision))
          AND ($3::double precision IS NULL OR a.created_at < to_timestamp($3::double precision))
          AND ($4::double precision IS NULL OR a.created_at > to_timestamp($4::double precision))
        ORDER BY s.id
        LIMIT $5::integer
        """
    static let source = """
        SELECT s.url, a.sha256 AS asset_sha256, s.version, s.etag, s.last_modified, extract(epoch FROM s.checked_at) AS checked_at,
               a.tags::text AS asset_tags, a.context::text AS asset_context
        FROM derive.sources s JOIN derive.assets a ON a.id = s.asset_id WHERE s.url = $1
        """
    static let presetsOf = """
        SELECT DISTINCT d.preset_name FROM derive.derivatives d JOIN derive.assets a ON a.id = d.asset_id
        WHERE a.sha256 = $1 AND d.preset_name IS NOT NULL AND d.superseded_at IS NULL ORDER BY 1
        """
    static let chainsOf = """
        SELECT DISTINCT ON (d.output_name) d.chain FROM derive.derivatives d JOIN derive.assets a ON a.id = d.asset_id
        WHERE a.sha256 = $1 AND d.preset_name IS NULL AND d.superseded_at IS NULL ORDER BY d.output_name, d.id DESC
        """
    /// Per preset: assets with current outputs of it, and those whose newest are older than
    /// its current version.
    static let staleness = """
        WITH current AS (
            SELECT DISTINCT ON (name) name, version FROM derive.presets WHERE retired_at IS NULL ORDER BY name, version DESC
        ), latest AS (
            SELECT asset_id, preset_name, max(preset_version) AS version FROM derive.derivatives
            WHERE preset_name IS NOT NULL AND superseded_at IS NULL GROUP BY asset_id, preset_name
        )
        SELECT c.name AS preset, c.version AS current_version, count(l.asset_id) AS assets,
               count(l.asset_id) FILTER (WHERE l.version < c.version) AS stale
        FROM current c LEFT JOIN latest l ON l.preset_name = c.name
        GROUP BY c.name, c.version ORDER BY c.name
        """
}
