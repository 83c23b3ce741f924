import DeriveLanguage
import DeriveJobs
import Foundation

/// The management calls on SQLite. A listing is one read; each change one write transaction
/// (the file's one write lock), read, changed in Swift and written back, so two changes to one
/// asset's tags never lose each other's.
extension SQLiteJobStore: ServedAssetCatalog {
    /// The creation time in whole microseconds, as cursors carry it.
    private static let createdMicros = "CAST(round(created_at * 1000000) AS INTEGER)"

    /// The conditions (with their parameters) that select `query`'s assets: its cloud and
    /// filter, not its page.
    static func selection(_ query: ServedAssetQuery) -> (conditions: [String], parameters: [DatabaseValue]) {
        var conditions = ["cloud = ?"]
        var parameters: [DatabaseValue] = [.text(query.cloud)]
        switch query.filter {
        case .all: break
        case .prefix(let prefix):
            conditions.append("public_id >= ? AND substr(public_id, 1, length(?)) = ?")
            parameters += [.text(prefix), .text(prefix), .text(prefix)]
        case .publicIDs(let ids):
            conditions.append("public_id IN (SELECT value FROM json_each(?))")
            parameters.append(.text(JSONWriter.compact(.array(ids.map(JSONValue.string)))))
        case .tag(let tag):
            conditions.append("EXISTS (SELECT 1 FROM json_each(served_assets.tags) WHERE value = ?)")
            parameters.append(.text(tag))
        case .context(let key, let value):
            conditions.append("EXISTS (SELECT 1 FROM json_each(served_assets.context) WHERE key = ? AND (? IS NULL OR value = ?))")
            parameters += [.text(key), value.map(DatabaseValue.text) ?? .null, value.map(DatabaseValue.text) ?? .null]
        case .search(let expression):
            // Numbered parameters (?N) from here on: the compiled condition reuses some.
            let compiled = SearchSQL.compile(expression, dialect: .sqlite, offset: parameters.count)
            conditions.append(compiled.sql)
            parameters += compiled.parameters.map { parameter in
                switch parameter {
                case .text(let text): .text(text)
                case .number(let number): .real(number)
                }
            }
        }
        return (conditions, parameters)
    }

    public func countServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> [String: Int] {
        let (conditions, parameters) = Self.selection(query)
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("SELECT format, count(*) AS n FROM served_assets WHERE \(conditions.joined(separator: " AND ")) GROUP BY format",
                                parameters, source: "served_assets")
        }
        var counts: [String: Int] = [:]
        for row in rows { counts[try row.string("format")] = try row.int("n") }
        return counts
    }

    public func listServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> ServedAssetPage {
        var (conditions, parameters) = Self.selection(query)
        let direction = query.ascending ? "ASC" : "DESC", comparison = query.ascending ? ">" : "<"
        let orderBy: String
        switch query.order {
        case .publicID:
            orderBy = "public_id \(direction)"
            if let after = query.after {
                conditions.append("public_id \(comparison) ?")
                parameters.append(.text(after.publicID))
            }
        case .createdAt:
            orderBy = "\(Self.createdMicros) \(direction), public_id \(direction)"
            if let after = query.after {
                conditions.append("(\(Self.createdMicros), public_id) \(comparison) (?, ?)")
                parameters += [.integer(after.createdAt), .text(after.publicID)]
            }
        }
        parameters.append(.integer(Int64(query.limit + 1)))
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("""
                SELECT cloud, public_id, version, format, bytes, width, height, tags, context, original_key, original_sha256, eager, created_at,
                       NULL AS faces
                FROM served_assets WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(orderBy) LIMIT ?
                """, parameters, source: "served_assets")
        }
        return ServedAssetPage(reading: try rows.map { row throws(DeriveError) in try ServedAsset(row: row) }, query: query)
    }

    /// Reads each asset and writes the changed column back, in one transaction.
    public func change(_ change: AssetChange, cloud: String, publicIDs: [String]) throws(DeriveError) -> [String] {
        try write { connection, _ throws(SQLiteError) -> [String] in
            var found: [String] = []
            for id in publicIDs {
                guard let row = try connection.rows("""
                    SELECT cloud, public_id, version, format, bytes, width, height, tags, context, original_key, original_sha256, eager, created_at,
                           NULL AS faces
                    FROM served_assets WHERE cloud = ? AND public_id = ?
                    """, [.text(cloud), .text(id)], source: "served_assets").first else { continue }
                let asset = try SQLiteError.decoding { () throws(DeriveError) in try ServedAsset(row: row) }
                try connection.query("UPDATE served_assets SET \(change.column) = ? WHERE cloud = ? AND public_id = ?",
                                     [SQLiteValue(change.storedValue(changing: asset)), SQLiteValue(cloud), SQLiteValue(id)])
                found.append(id)
            }
            return found
        }
    }

    public func deleteServedAssets(cloud: String, publicIDs: [String], scope: ServedDeletionScope, store: String) throws(DeriveError) -> ServedDeletion {
        try write { connection, now throws(SQLiteError) -> ServedDeletion in
            try Self.deleteServedAssets(cloud: cloud, publicIDs: publicIDs, scope: scope, store: store, on: connection, at: now)
        }
    }

    /// The deletion inside the caller's transaction (a rename over an existing id deletes it first).
    static func deleteServedAssets(cloud: String, publicIDs: [String], scope: ServedDeletionScope, store: String, on connection: SQLiteConnection,
                                   at now: Double) throws(SQLiteError) -> ServedDeletion {
        let ids = SQLiteValue.text(JSONWriter.compact(.array(publicIDs.map(JSONValue.string))))
        let assets = try connection.rows("""
            SELECT public_id, original_key, eager FROM served_assets WHERE cloud = ? AND public_id IN (SELECT value FROM json_each(?))
            """, [.text(cloud), ids], source: "served_assets")
        let derivatives = try connection.rows("""
            SELECT public_id, identity, storage_key, job_id FROM served_derivatives
            WHERE cloud = ? AND public_id IN (SELECT value FROM json_each(?))
            """, [.text(cloud), ids], source: "served_derivatives")
        var plan = try SQLiteError.decoding { () throws(DeriveError) in
            try ServedDeletionPlan(publicIDs: publicIDs, assets: assets, derivatives: derivatives, scope: scope)
        }
        guard !plan.deletion.found.isEmpty else { return plan.deletion }
        // The derivatives explicitly: the cascade holds only where foreign keys are enforced.
        try connection.query("""
            DELETE FROM served_derivatives WHERE cloud = ?1
              AND (public_id, identity) IN (SELECT json_extract(value, '$.public_id'), json_extract(value, '$.identity') FROM json_each(?2))
            """, [.text(cloud), .text(plan.derivativesJSON)])
        switch scope {
        case .whole:
            try connection.query("DELETE FROM served_assets WHERE cloud = ? AND public_id IN (SELECT value FROM json_each(?))",
                                 [.text(cloud), .text(JSONWriter.compact(.array(plan.deletion.found.map(JSONValue.string))))])
        case .derivatives:
            for (id, eager) in plan.keptEager {
                try connection.query("UPDATE served_assets SET eager = ? WHERE cloud = ? AND public_id = ?", [.text(eager), .text(cloud), .text(id)])
            }
        }
        // The job rows the served rows were recorded from, and every row of eager jobs that go whole.
        let jobRows = try connection.rows("""
            DELETE FROM derivatives
            WHERE (job_id, storage_key) IN (SELECT json_extract(value, '$.job_id'), json_extract(value, '$.storage_key') FROM json_each(?))
            RETURNING storage_key
            """, [.text(plan.jobRowsJSON)], source: "derivatives") + connection.rows("""
            DELETE FROM derivatives WHERE job_id IN (SELECT value FROM json_each(?)) RETURNING storage_key
            """, [.text(JSONWriter.compact(.array(plan.eagerJobs.map { .int(Int($0)) })))], source: "derivatives")
        for row in jobRows { plan.deletion.keys.append(try SQLiteError.decoding { () throws(DeriveError) in try row.string("storage_key") }) }
        plan.deletion.keys = Array(Set(plan.deletion.keys)).sorted()
        // Noted as a finished job's unrecorded writes: released after the commit, or swept if this process dies first.
        try connection.query("""
            INSERT INTO pending_writes (store, storage_key, job_id, noted_at)
            SELECT ?, value, ?, ? FROM json_each(?) WHERE true
            ON CONFLICT (store, storage_key, job_id) DO UPDATE SET noted_at = excluded.noted_at
            """, [.text(store), .integer(ServedDeletionPlan.ledgerJob), .real(now),
                  .text(JSONWriter.compact(.array(plan.deletion.keys.map(JSONValue.string))))])
        return plan.deletion
    }

    public func renameServedAsset(cloud: String, from: String, to: String, overwrite: Bool, store: String) throws(DeriveError) -> ServedRename {
        try write { connection, now throws(SQLiteError) -> ServedRename in
            let found = try connection.query("SELECT public_id FROM served_assets WHERE cloud = ? AND public_id IN (?, ?)",
                                             [.text(cloud), .text(from), .text(to)])
            let ids = Set(found.compactMap { row -> String? in if case .text(let id)? = row.first { return id }; return nil })
            guard ids.contains(from) else { return .notFound }
            guard from != to else { return .renamed(replaced: ServedDeletion()) }
            var replaced = ServedDeletion()
            if ids.contains(to) {
                guard overwrite else { return .targetExists }
                replaced = try Self.deleteServedAssets(cloud: cloud, publicIDs: [to], scope: .whole, store: store, on: connection, at: now)
            }
            // A copy under the new id, the derivatives and notification records moved to it, the old row deleted
            // (which moves the generation number: every server drops what it delivered under the old id).
            try connection.query("""
                INSERT INTO served_assets (cloud, public_id, version, format, bytes, width, height, tags, context, original_key,
                                           original_sha256, eager, created_at)
                SELECT cloud, ?3, version, format, bytes, width, height, tags, context, original_key, original_sha256, eager, created_at
                FROM served_assets WHERE cloud = ?1 AND public_id = ?2
                """, [.text(cloud), .text(from), .text(to)])
            try connection.query("UPDATE served_derivatives SET public_id = ?3 WHERE cloud = ?1 AND public_id = ?2", [.text(cloud), .text(from), .text(to)])
            try connection.query("UPDATE served_notifications SET public_id = ?3 WHERE cloud = ?1 AND public_id = ?2", [.text(cloud), .text(from), .text(to)])
            try connection.query("DELETE FROM served_assets WHERE cloud = ? AND public_id = ?", [.text(cloud), .text(from)])
            return .renamed(replaced: replaced)
        }
    }

    public func addEagerJob(cloud: String, publicID: String, version: Int, job: NewJob, outputs: [EagerOutput]) throws(DeriveError) -> JobID? {
        try write { connection, now throws(SQLiteError) -> JobID? in
            let rows = try connection.rows("SELECT eager FROM served_assets WHERE cloud = ? AND public_id = ? AND version = ?",
                                           [.text(cloud), .text(publicID), .integer(Int64(version))], source: "served_assets")
            guard let row = rows.first else { return nil }
            var jobs: [EagerJob] = []
            try SQLiteError.decoding { () throws(DeriveError) in
                if case .array(let items) = try row.json("eager") { for item in items { jobs.append(try EagerJob(json: item)) } }
            }
            let id = try Self.insert(job, at: now, on: connection).id
            jobs.append(EagerJob(jobID: id, outputs: outputs))
            try connection.query("UPDATE served_assets SET eager = ? WHERE cloud = ? AND public_id = ?",
                                 [.text(JSONWriter.compact(.array(jobs.map(\.json)))), .text(cloud), .text(publicID)])
            return id
        }
    }

    public func servedUsage(cloud: String) throws(DeriveError) -> ServedUsage {
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("""
                SELECT (SELECT count(*) FROM served_assets WHERE cloud = ?1) AS assets,
                       (SELECT coalesce(sum(bytes), 0) FROM served_assets WHERE cloud = ?1) AS asset_bytes,
                       (SELECT count(*) FROM served_derivatives WHERE cloud = ?1) AS derivatives,
                       (SELECT coalesce(sum(bytes), 0) FROM served_derivatives WHERE cloud = ?1) AS derivative_bytes
                """, [.text(cloud)], source: "served_assets")
        }
        guard let row = rows.first else { return ServedUsage(assets: 0, assetBytes: 0, derivatives: 0, derivativeBytes: 0) }
        return ServedUsage(assets: try row.int("assets"), assetBytes: try row.int("asset_bytes"), derivatives: try row.int("derivatives"),
                           derivativeBytes: try row.int("derivative_bytes"))
    }

    public func releaseServedObject(_ key: String, store: String, delete: (String) throws(DeriveError) -> Void) throws(DeriveError) -> Bool {
        try removeUnrecordedWrite(key, store: store, delete: delete)
    }

    /// A write transaction: the file's one write lock keeps every release out meanwhile.
    public func holdingServedObject(_ key: String, store: String, _ body: () throws(DeriveError) -> Void) throws(DeriveError) {
        var bodyError: DeriveError?
        do {
            try write { _, _ throws(SQLiteError) in
                do throws(DeriveError) { try body() } catch {
                    bodyError = error
                    throw SQLiteError(code: SQLITE_MISUSE_CODE, message: "the store refused the write")
                }
            }
        } catch {
            throw bodyError ?? error
        }
    }

    public func servedTags(cloud: String, prefix: String?, limit: Int, after: String?) throws(DeriveError) -> (tags: [String], next: String?) {
        let limit = max(1, limit)
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("""
                SELECT DISTINCT t.value AS tag FROM served_assets s, json_each(s.tags) t
                WHERE s.cloud = ? AND (?2 IS NULL OR substr(t.value, 1, length(?2)) = ?2) AND (?3 IS NULL OR t.value > ?3)
                ORDER BY t.value LIMIT ?4
                """, [.text(cloud), prefix.map(DatabaseValue.text) ?? .null, after.map(DatabaseValue.text) ?? .null, .integer(Int64(limit + 1))],
                source: "served_assets")
        }
        let tags = try rows.map { row throws(DeriveError) in try row.string("tag") }
        let page = Array(tags.prefix(limit))
        return (page, tags.count > limit ? page.last : nil)
    }
}
