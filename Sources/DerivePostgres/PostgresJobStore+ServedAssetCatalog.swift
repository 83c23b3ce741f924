import DeriveLanguage
import DeriveJobs
import Foundation

/// The management calls on PostgreSQL (Migrations/0015_served_asset_listing.sql). A listing is
/// one statement on an index range: public ids in code-point order (`COLLATE "C"`, so a prefix
/// is a range and the order is SQLite's), creation times as the index keeps them, tags and
/// context through GIN indexes. A change locks the rows it changes (`FOR UPDATE`) and writes
/// them back in one transaction, so two changes to one asset never lose each other's.
extension PostgresJobStore: ServedAssetCatalog {
    static let listedColumns = """
        cloud, public_id, version, format, bytes, width, height, tags, context, original_key, original_sha256, eager,
        extract(epoch FROM created_at) AS created_at, NULL AS faces
        """

    /// The conditions (with their parameters, `$1`…) that select `query`'s assets: its cloud and
    /// filter, not its page.
    static func selection(_ query: ServedAssetQuery) -> (conditions: [String], parameters: [String?]) {
        var conditions = ["cloud = $1"]
        var parameters: [String?] = [query.cloud]
        func parameter(_ value: String?) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        switch query.filter {
        case .all: break
        case .prefix(let prefix):
            let escaped = prefix.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            conditions.append("public_id COLLATE \"C\" LIKE \(parameter(escaped + "%"))")
        case .publicIDs(let ids):
            conditions.append("public_id IN (SELECT jsonb_array_elements_text(\(parameter(JSONWriter.compact(.array(ids.map(JSONValue.string)))))::jsonb))")
        case .tag(let tag):
            conditions.append("tags @> jsonb_build_array(\(parameter(tag))::text)")
        case .context(let key, let value):
            if let value {
                conditions.append("context @> jsonb_build_object(\(parameter(key))::text, \(parameter(value))::text)")
            } else {
                conditions.append("context ? \(parameter(key))::text")
            }
        case .search(let expression):
            let compiled = SearchSQL.compile(expression, dialect: .postgres, offset: parameters.count)
            conditions.append(compiled.sql)
            parameters += compiled.parameters.map { parameter in
                switch parameter {
                case .text(let text): text
                case .number(let number): String(number)
                }
            }
        }
        return (conditions, parameters)
    }

    public func countServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> [String: Int] {
        let (conditions, parameters) = Self.selection(query)
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query("""
                SELECT format, count(*) AS n FROM derive.served_assets WHERE \(conditions.joined(separator: " AND ")) GROUP BY format
                """, parameters).named("served_assets")
        }
        var counts: [String: Int] = [:]
        for row in rows { counts[try row.string("format")] = try row.int("n") }
        return counts
    }

    public func listServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> ServedAssetPage {
        var (conditions, parameters) = Self.selection(query)
        func parameter(_ value: String?) -> String {
            parameters.append(value)
            return "$\(parameters.count)"
        }
        let direction = query.ascending ? "ASC" : "DESC", comparison = query.ascending ? ">" : "<"
        let orderBy: String
        switch query.order {
        case .publicID:
            orderBy = "public_id COLLATE \"C\" \(direction)"
            if let after = query.after { conditions.append("public_id COLLATE \"C\" \(comparison) \(parameter(after.publicID))") }
        case .createdAt:
            // The table's column, named in full: a bare `created_at` in ORDER BY is the output column
            // of that name (the epoch seconds), which no index has, and 1,000,000 rows were sorted.
            orderBy = "served_assets.created_at \(direction), public_id COLLATE \"C\" \(direction)"
            if let after = query.after {
                // Whole microseconds, added to the epoch exactly (no floating point on the way).
                conditions.append("""
                    (created_at, public_id COLLATE "C") \(comparison) \
                    (timestamptz 'epoch' + \(parameter(String(after.createdAt)))::bigint * interval '1 microsecond', \(parameter(after.publicID)))
                    """)
            }
        }
        let limit = parameter(String(query.limit + 1))
        let sql = """
            SELECT \(Self.listedColumns) FROM derive.served_assets
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(orderBy) LIMIT \(limit)
            """
        let rows = try withConnection { connection throws(PostgresError) in try connection.query(sql, parameters).named("served_assets") }
        return ServedAssetPage(reading: try rows.map { row throws(DeriveError) in try ServedAsset(row: row) }, query: query)
    }

    /// Locks each asset's row and writes the changed column back, in one transaction.
    /// Rows are locked in code-point order of their ids, so two changes over overlapping sets
    /// cannot deadlock.
    public func change(_ change: AssetChange, cloud: String, publicIDs: [String]) throws(DeriveError) -> [String] {
        let ids = JSONWriter.compact(.array(publicIDs.map(JSONValue.string)))
        let found = try withConnection { connection throws(PostgresError) -> Set<String> in
            try connection.transaction { () throws(PostgresError) -> Set<String> in
                let rows = try connection.query("""
                    SELECT \(Self.listedColumns) FROM derive.served_assets
                    WHERE cloud = $1 AND public_id IN (SELECT jsonb_array_elements_text($2::jsonb))
                    ORDER BY public_id COLLATE "C" FOR UPDATE
                    """, [cloud, ids]).named("served_assets")
                var found: Set<String> = []
                for row in rows {
                    let asset = try PostgresError.decoding { () throws(DeriveError) in try ServedAsset(row: row) }
                    try connection.query("UPDATE derive.served_assets SET \(change.column) = $3::jsonb WHERE cloud = $1 AND public_id = $2",
                                         [cloud, asset.publicID, change.storedValue(changing: asset)])
                    found.insert(asset.publicID)
                }
                return found
            }
        }
        return publicIDs.filter(found.contains)
    }

    public func deleteServedAssets(cloud: String, publicIDs: [String], scope: ServedDeletionScope, store: String) throws(DeriveError) -> ServedDeletion {
        try withConnection { connection throws(PostgresError) -> ServedDeletion in
            try connection.transaction { () throws(PostgresError) -> ServedDeletion in
                try Self.deleteServedAssets(cloud: cloud, publicIDs: publicIDs, scope: scope, store: store, on: connection)
            }
        }
    }

    /// The deletion inside the caller's transaction (a rename over an existing id deletes it first).
    static func deleteServedAssets(cloud: String, publicIDs: [String], scope: ServedDeletionScope, store: String,
                                   on connection: PostgresConnection) throws(PostgresError) -> ServedDeletion {
        let ids = JSONWriter.compact(.array(publicIDs.map(JSONValue.string)))
        // Locked in code-point order (as `change` locks), so overlapping calls cannot deadlock.
        let assets = try connection.query("""
            SELECT public_id, original_key, eager FROM derive.served_assets
            WHERE cloud = $1 AND public_id IN (SELECT jsonb_array_elements_text($2::jsonb))
            ORDER BY public_id COLLATE "C" FOR UPDATE
            """, [cloud, ids]).named("served_assets")
        let derivatives = try connection.query("""
            SELECT public_id, identity, storage_key, job_id FROM derive.served_derivatives
            WHERE cloud = $1 AND public_id IN (SELECT jsonb_array_elements_text($2::jsonb))
            """, [cloud, ids]).named("served_derivatives")
        var plan = try PostgresError.decoding { () throws(DeriveError) in
            try ServedDeletionPlan(publicIDs: publicIDs, assets: assets, derivatives: derivatives, scope: scope)
        }
        guard !plan.deletion.found.isEmpty else { return plan.deletion }
        switch scope {
        case .whole:
            // The derivatives go with them (ON DELETE CASCADE).
            try connection.query("""
                DELETE FROM derive.served_assets WHERE cloud = $1 AND public_id IN (SELECT jsonb_array_elements_text($2::jsonb))
                """, [cloud, JSONWriter.compact(.array(plan.deletion.found.map(JSONValue.string)))])
        case .derivatives:
            try connection.query("""
                DELETE FROM derive.served_derivatives d USING jsonb_to_recordset($2::jsonb) AS x(public_id text, identity text)
                WHERE d.cloud = $1 AND d.public_id = x.public_id AND d.identity = x.identity
                """, [cloud, plan.derivativesJSON])
            for (id, eager) in plan.keptEager {
                try connection.query("UPDATE derive.served_assets SET eager = $3::jsonb WHERE cloud = $1 AND public_id = $2", [cloud, id, eager])
            }
        }
        // The job rows the served rows were recorded from, and every row of eager jobs that go whole.
        let jobRows = try connection.query("""
            WITH gone AS (
                DELETE FROM derive.derivatives d USING jsonb_to_recordset($1::jsonb) AS x(job_id bigint, storage_key text)
                WHERE d.job_id = x.job_id AND d.storage_key = x.storage_key
                RETURNING d.storage_key
            ), eager AS (
                DELETE FROM derive.derivatives WHERE job_id IN (SELECT jsonb_array_elements_text($2::jsonb)::bigint)
                RETURNING storage_key
            )
            SELECT storage_key FROM gone UNION SELECT storage_key FROM eager
            """, [plan.jobRowsJSON, JSONWriter.compact(.array(plan.eagerJobs.map { .int(Int($0)) }))]).named("derivatives")
        for row in jobRows {
            plan.deletion.keys.append(try PostgresError.decoding { () throws(DeriveError) in try row.string("storage_key") })
        }
        plan.deletion.keys = Array(Set(plan.deletion.keys)).sorted()
        // Noted as a finished job's unrecorded writes: released after the commit, or swept if this process dies first.
        try connection.query("""
            INSERT INTO derive.pending_writes (store, storage_key, job_id)
            SELECT $1, key, $3::bigint FROM jsonb_array_elements_text($2::jsonb) AS key
            ON CONFLICT (store, storage_key, job_id) DO UPDATE SET noted_at = now()
            """, [store, JSONWriter.compact(.array(plan.deletion.keys.map(JSONValue.string))), String(ServedDeletionPlan.ledgerJob)])
        return plan.deletion
    }

    public func renameServedAsset(cloud: String, from: String, to: String, overwrite: Bool, store: String) throws(DeriveError) -> ServedRename {
        try withConnection { connection throws(PostgresError) -> ServedRename in
            try connection.transaction { () throws(PostgresError) -> ServedRename in
                // Both rows locked in code-point order, as every change locks them.
                let locked = try connection.query("""
                    SELECT public_id FROM derive.served_assets WHERE cloud = $1 AND public_id IN ($2, $3)
                    ORDER BY public_id COLLATE "C" FOR UPDATE
                    """, [cloud, from, to]).named("served_assets")
                let ids = Set(try PostgresError.decoding { () throws(DeriveError) in try locked.map { row throws(DeriveError) in try row.string("public_id") } })
                guard ids.contains(from) else { return .notFound }
                guard from != to else { return .renamed(replaced: ServedDeletion()) }
                var replaced = ServedDeletion()
                if ids.contains(to) {
                    guard overwrite else { return .targetExists }
                    replaced = try Self.deleteServedAssets(cloud: cloud, publicIDs: [to], scope: .whole, store: store, on: connection)
                }
                // A copy under the new id, the derivatives and notification records moved to it, the old row deleted
                // (which moves the generation number: every server drops what it delivered under the old id).
                try connection.query("""
                    INSERT INTO derive.served_assets (cloud, public_id, version, format, bytes, width, height, tags, context, original_key,
                                                      original_sha256, eager, created_at)
                    SELECT cloud, $3, version, format, bytes, width, height, tags, context, original_key, original_sha256, eager, created_at
                    FROM derive.served_assets WHERE cloud = $1 AND public_id = $2
                    """, [cloud, from, to])
                try connection.query("UPDATE derive.served_derivatives SET public_id = $3 WHERE cloud = $1 AND public_id = $2", [cloud, from, to])
                try connection.query("UPDATE derive.served_notifications SET public_id = $3 WHERE cloud = $1 AND public_id = $2", [cloud, from, to])
                try connection.query("DELETE FROM derive.served_assets WHERE cloud = $1 AND public_id = $2", [cloud, from])
                return .renamed(replaced: replaced)
            }
        }
    }

    public func addEagerJob(cloud: String, publicID: String, version: Int, job: NewJob, outputs: [EagerOutput]) throws(DeriveError) -> JobID? {
        try withConnection { connection throws(PostgresError) -> JobID? in
            try connection.transaction { () throws(PostgresError) -> JobID? in
                let rows = try connection.query("""
                    SELECT eager FROM derive.served_assets WHERE cloud = $1 AND public_id = $2 AND version = $3::bigint FOR UPDATE
                    """, [cloud, publicID, String(version)]).named("served_assets")
                guard let row = rows.first else { return nil }
                var jobs: [EagerJob] = []
                try PostgresError.decoding { () throws(DeriveError) in
                    if case .array(let items) = try row.json("eager") { for item in items { jobs.append(try EagerJob(json: item)) } }
                }
                let record = JSONValue.array([.object([
                    "ord": .int(0), "queue": .string(job.queue), "priority": .int(job.priority),
                    "run_at": job.runAt.map { .decimal($0.timeIntervalSince1970) } ?? .null, "max_attempts": .int(job.maxAttempts),
                    "dedupe_key": job.dedupeKey.map(JSONValue.string) ?? .null, "payload": job.payload,
                ])])
                let submitted = try connection.query(SQL.submit, [JSONWriter.compact(record)]).named("a submitted job")
                let id = try PostgresError.decoding { () throws(DeriveError) -> JobID in
                    guard let row = submitted.first else { throw DeriveError(.databaseUnavailable, "the eager job was not queued") }
                    return try row.int64("id")
                }
                jobs.append(EagerJob(jobID: id, outputs: outputs))
                try connection.query(ServedSQL.setEager, [cloud, publicID, JSONWriter.compact(.array(jobs.map(\.json)))])
                return id
            }
        }
    }

    public func servedUsage(cloud: String) throws(DeriveError) -> ServedUsage {
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query("""
                SELECT (SELECT count(*) FROM derive.served_assets WHERE cloud = $1) AS assets,
                       (SELECT coalesce(sum(bytes), 0) FROM derive.served_assets WHERE cloud = $1) AS asset_bytes,
                       (SELECT count(*) FROM derive.served_derivatives WHERE cloud = $1) AS derivatives,
                       (SELECT coalesce(sum(bytes), 0) FROM derive.served_derivatives WHERE cloud = $1) AS derivative_bytes
                """, [cloud]).named("served_assets")
        }
        guard let row = rows.first else { return ServedUsage(assets: 0, assetBytes: 0, derivatives: 0, derivativeBytes: 0) }
        return ServedUsage(assets: try row.int("assets"), assetBytes: try row.int("asset_bytes"), derivatives: try row.int("derivatives"),
                           derivativeBytes: try row.int("derivative_bytes"))
    }

    public func releaseServedObject(_ key: String, store: String, delete: (String) throws(DeriveError) -> Void) throws(DeriveError) -> Bool {
        try removeUnrecordedWrite(key, store: store, delete: delete)
    }

    /// A transaction holding the key's ledger lock shared, as a run noting a write holds it.
    public func holdingServedObject(_ key: String, store: String, _ body: () throws(DeriveError) -> Void) throws(DeriveError) {
        var bodyError: DeriveError?
        do {
            try withConnection { connection throws(PostgresError) in
                try connection.transaction { () throws(PostgresError) in
                    try connection.query(LedgerSQL.lockShared, [store, key])
                    do throws(DeriveError) { try body() } catch {
                        bodyError = error
                        throw PostgresError(sqlState: nil, message: "the store refused the write")
                    }
                }
            }
        } catch {
            throw bodyError ?? error
        }
    }

    public func servedTags(cloud: String, prefix: String?, limit: Int, after: String?) throws(DeriveError) -> (tags: [String], next: String?) {
        let limit = max(1, limit)
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query("""
                SELECT DISTINCT t COLLATE "C" AS tag FROM derive.served_assets s, jsonb_array_elements_text(s.tags) t
                WHERE s.cloud = $1 AND ($2::text IS NULL OR starts_with(t, $2::text)) AND ($3::text IS NULL OR t COLLATE "C" > $3::text)
                ORDER BY 1 LIMIT $4
                """, [cloud, prefix, after, String(limit + 1)]).named("served_assets")
        }
        let tags = try rows.map { row throws(DeriveError) in try row.string("tag") }
        let page = Array(tags.prefix(limit))
        return (page, tags.count > limit ? page.last : nil)
    }
}
