import DeriveLanguage
import DeriveJobs
import Foundation

extension SQLiteJobStore: ScheduleStore, ReprocessStore {
    // MARK: Schedules

    public func saveSchedule(_ schedule: Schedule) throws(DeriveError) {
        try write { connection, now throws(SQLiteError) in
            try connection.query(ScheduleSQL.save, [
                SQLiteValue(schedule.name), SQLiteValue(schedule.cron), SQLiteValue(schedule.timeZone),
                SQLiteValue(JSONWriter.compact(schedule.action)), SQLiteValue(schedule.enabled ? 1 : 0),
                SQLiteValue(schedule.createdAt.timeIntervalSince1970), SQLiteValue(now),
            ])
        }
    }

    public func schedules() throws(DeriveError) -> [Schedule] {
        try read { connection throws(SQLiteError) in
            let rows = try connection.rows("SELECT name, cron, timezone AS time_zone, action, enabled, created_at FROM schedules ORDER BY name",
                                           source: "schedules")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try Schedule(row: row) } }
        }
    }

    public func removeSchedule(_ name: String) throws(DeriveError) -> Bool {
        try write { connection, _ throws(SQLiteError) in
            try connection.query("DELETE FROM schedule_fires WHERE schedule = ?", [SQLiteValue(name)])
            try connection.query("DELETE FROM schedules WHERE name = ?", [SQLiteValue(name)])
            return connection.changes > 0
        }
    }

    public func fire(_ name: String, at fireTime: Date, job: NewJob) throws(DeriveError) -> JobID? {
        let time = fireTime.timeIntervalSince1970.rounded(.down)
        return try write { connection, now throws(SQLiteError) -> JobID? in
            try connection.query("INSERT INTO schedule_fires (schedule, fire_time, fired_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                                 [SQLiteValue(name), SQLiteValue(time), SQLiteValue(now)])
            guard connection.changes > 0 else { return nil }
            let id = try Self.insert(job, at: now, on: connection).id
            try connection.query("UPDATE schedule_fires SET job_id = ? WHERE schedule = ? AND fire_time = ?",
                                 [SQLiteValue(Int(id)), SQLiteValue(name), SQLiteValue(time)])
            return id
        }
    }

    public func fires(_ name: String, limit: Int) throws(DeriveError) -> [ScheduleFire] {
        try read { connection throws(SQLiteError) in
            let rows = try connection.rows("SELECT fire_time, fired_at, job_id FROM schedule_fires WHERE schedule = ? ORDER BY fire_time DESC LIMIT ?",
                                           [SQLiteValue(name), SQLiteValue(limit)], source: "schedule_fires")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try ScheduleFire(row: row) } }
        }
    }

    // MARK: Reprocessing

    public func reprocessCandidates(preset: String?, filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate] {
        try read { connection throws(SQLiteError) in
            try connection.rows(ScheduleSQL.reprocessCandidates, [
                SQLiteValue(preset), SQLiteValue(Int(cursor)), filter.createdBefore.map { SQLiteValue($0.timeIntervalSince1970) } ?? .null,
                filter.createdAfter.map { SQLiteValue($0.timeIntervalSince1970) } ?? .null, SQLiteValue(filter.stale ? 1 : 0),
                SQLiteValue(filter.missing ? 1 : 0), SQLiteValue(limit), SQLiteValue(filter.derived ? 1 : 0),
            ], source: "assets").map(Self.candidate)
        }
    }

    public func revalidationCandidates(filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate] {
        try read { connection throws(SQLiteError) in
            try connection.rows(ScheduleSQL.revalidationCandidates, [
                SQLiteValue(Int(cursor)), filter.checkedBefore.map { SQLiteValue($0.timeIntervalSince1970) } ?? .null,
                filter.createdBefore.map { SQLiteValue($0.timeIntervalSince1970) } ?? .null,
                filter.createdAfter.map { SQLiteValue($0.timeIntervalSince1970) } ?? .null, SQLiteValue(limit),
            ], source: "sources").map(Self.candidate)
        }
    }

    static func candidate(_ row: DatabaseRow) throws(SQLiteError) -> SourceCandidate {
        try SQLiteError.decoding { () throws(DeriveError) in try SourceCandidate(row: row) }
    }

    public func source(_ url: String) throws(DeriveError) -> SourceState? {
        try read { connection throws(SQLiteError) in
            guard let row = try connection.rows(ScheduleSQL.source, [SQLiteValue(url)], source: "sources").first else { return nil }
            return try SQLiteError.decoding { () throws(DeriveError) in try SourceState(row: row) }
        }
    }

    public func sourceUnchanged(_ url: String, etag: String?, lastModified: String?) throws(DeriveError) {
        try write { connection, now throws(SQLiteError) in
            try connection.query("""
                UPDATE sources SET checked_at = ?2, etag = COALESCE(?3, etag), last_modified = COALESCE(?4, last_modified) WHERE url = ?1
                """, [SQLiteValue(url), SQLiteValue(now), SQLiteValue(etag), SQLiteValue(lastModified)])
        }
    }

    public func derivationsOf(assetSHA256 sha: String) throws(DeriveError) -> (presets: [String], outputs: [JSONValue]) {
        try read { connection throws(SQLiteError) in
            let presets = try connection.rows(ScheduleSQL.presetsOf, [SQLiteValue(sha)], source: "derivatives")
            let outputs = try connection.rows(ScheduleSQL.chainsOf, [SQLiteValue(sha)], source: "derivatives")
            return try SQLiteError.decoding { () throws(DeriveError) -> ([String], [JSONValue]) in
                var names: [String] = []
                for row in presets { if let name = try row.optionalString("preset_name") { names.append(name) } }
                return (names, try outputs.map { row throws(DeriveError) in try row.json("chain") })
            }
        }
    }

    public func staleness() throws(DeriveError) -> [PresetStaleness] {
        try read { connection throws(SQLiteError) in
            let rows = try connection.rows(ScheduleSQL.staleness, source: "presets")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try PresetStaleness(row: row) } }
        }
    }

    public func supersededOutputs(limit: Int) throws(DeriveError) -> [SupersededOutput] {
        try read { connection throws(SQLiteError) in
            let rows = try connection.rows("SELECT id, storage_key FROM derivatives WHERE superseded_at IS NOT NULL ORDER BY superseded_at LIMIT ?",
                                           [SQLiteValue(limit)], source: "derivatives")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try SupersededOutput(row: row) } }
        }
    }

    public func deleteDerivatives(_ ids: [Int64]) throws(DeriveError) {
        guard !ids.isEmpty else { return }
        try write { connection, _ throws(SQLiteError) in
            try connection.query("DELETE FROM derivatives WHERE superseded_at IS NOT NULL AND id IN (SELECT value FROM json_each(?))",
                                 [SQLiteValue(JSONWriter.compact(.array(ids.map { .int(Int($0)) })))])
        }
    }
}

enum ScheduleSQL {
    static let save = """
        INSERT INTO schedules (name, cron, timezone, action, enabled, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
        ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, timezone = excluded.timezone, action = excluded.action,
                                         enabled = excluded.enabled, created_at = excluded.created_at, updated_at = excluded.updated_at
        """

    /// ?1 now, ?2 asset sha256, ?3 preset, ?4 its new version, ?5 the new keys (JSON array).
    static let supersede = """
        UPDATE derivatives SET superseded_at = ?1
        WHERE asset_id = (SELECT id FROM assets WHERE sha256 = ?2) AND preset_name = ?3 AND preset_version < ?4
          AND superseded_at IS NULL AND storage_key NOT IN (SELECT value FROM json_each(?5))
        """

    /// ?1 url, ?2 asset sha256, ?3 etag, ?4 last modified, ?5 now.
    static let recordSource = """
        INSERT INTO sources (url, asset_id, etag, last_modified, checked_at, changed_at)
        SELECT ?1, id, ?3, ?4, ?5, ?5 FROM assets WHERE sha256 = ?2
        ON CONFLICT (url) DO UPDATE SET
            version = version + CASE WHEN asset_id <> excluded.asset_id THEN 1 ELSE 0 END,
            changed_at = CASE WHEN asset_id <> excluded.asset_id THEN excluded.changed_at ELSE changed_at END,
            asset_id = excluded.asset_id, etag = excluded.etag, last_modified = excluded.last_modified, checked_at = excluded.checked_at
        """

    /// ?1 preset, ?2 cursor, ?3 created before, ?4 created after, ?5 stale, ?6 missing, ?7 limit, ?8 derived.
    static let reprocessCandidates = """
        WITH current AS (
            SELECT version, outputs FROM presets WHERE name = ?1 AND retired_at IS NULL ORDER BY version DESC LIMIT 1
        )
        SELECT a.id AS position, COALESCE((SELECT s.url FROM sources s WHERE s.asset_id = a.id ORDER BY s.checked_at DESC LIMIT 1), a.source_url) AS source,
               a.sha256 AS asset_sha256, a.tags AS asset_tags, a.context AS asset_context
        FROM assets a
        WHERE a.id > ?2
          AND (?3 IS NULL OR a.created_at < ?3)
          AND (?4 IS NULL OR a.created_at > ?4)
          AND ((NOT ?5 AND NOT ?6)
               OR (?5 AND (SELECT max(d.preset_version) FROM derivatives d
                           WHERE d.asset_id = a.id AND d.preset_name = ?1 AND d.superseded_at IS NULL) < (SELECT version FROM current))
               OR (?6 AND EXISTS (
                       SELECT 1 FROM current c, json_each(c.outputs) o
                       WHERE NOT EXISTS (SELECT 1 FROM derivatives d
                                         WHERE d.asset_id = a.id AND d.preset_name = ?1 AND d.output_name = o.value ->> 'name'
                                           AND d.preset_version = c.version AND d.superseded_at IS NULL))))
          AND (NOT ?8 OR EXISTS (SELECT 1 FROM derivatives d WHERE d.asset_id = a.id AND d.preset_name = ?1 AND d.superseded_at IS NULL))
        ORDER BY a.id
        LIMIT ?7
        """

    /// ?1 cursor, ?2 checked before, ?3 created before, ?4 created after, ?5 limit.
    static let revalidationCandidates = """
        SELECT s.id AS position, s.url AS source, a.sha256 AS asset_sha256, a.tags AS asset_tags, a.context AS asset_context
        FROM sources s JOIN assets a ON a.id = s.asset_id
        WHERE s.id > ?1 AND (?2 IS NULL OR s.checked_at < ?2) AND (?3 IS NULL OR a.created_at < ?3) AND (?4 IS NULL OR a.created_at > ?4)
        ORDER BY s.id LIMIT ?5
        """
    static let source = """
        SELECT s.url, a.sha256 AS asset_sha256, s.version, s.etag, s.last_modified, s.checked_at, a.tags AS asset_tags, a.context AS asset_context
        FROM sources s JOIN assets a ON a.id = s.asset_id
        WHERE s.url = ?
        """
    static let presetsOf = """
        SELECT DISTINCT d.preset_name FROM derivatives d JOIN assets a ON a.id = d.asset_id
        WHERE a.sha256 = ? AND d.preset_name IS NOT NULL AND d.superseded_at IS NULL ORDER BY 1
        """
    static let chainsOf = """
        SELECT d.chain FROM derivatives d JOIN assets a ON a.id = d.asset_id
        WHERE a.sha256 = ?1 AND d.preset_name IS NULL AND d.superseded_at IS NULL
          AND d.id = (SELECT max(e.id) FROM derivatives e WHERE e.asset_id = d.asset_id AND e.output_name = d.output_name
                      AND e.preset_name IS NULL AND e.superseded_at IS NULL)
        ORDER BY d.output_name
        """
    static let staleness = """
        WITH current AS (
            SELECT name, max(version) AS version FROM presets p
            WHERE retired_at IS NULL AND version = (SELECT max(version) FROM presets WHERE name = p.name) GROUP BY name
        ), latest AS (
            SELECT asset_id, preset_name, max(preset_version) AS version FROM derivatives
            WHERE preset_name IS NOT NULL AND superseded_at IS NULL GROUP BY asset_id, preset_name
        )
        SELECT c.name AS preset, c.version AS current_version, count(l.asset_id) AS assets, count(CASE WHEN l.version < c.version THEN 1 END) AS stale
        FROM current c LEFT JOIN latest l ON l.preset_name = c.name
        GROUP BY c.name, c.version ORDER BY c.name
        """
}
