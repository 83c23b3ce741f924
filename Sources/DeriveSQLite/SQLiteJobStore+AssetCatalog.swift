import DeriveLanguage
import DeriveJobs

extension SQLiteJobStore: AssetCatalog {
    public func recentAssets(before cursor: Int64?, limit: Int, outputsPerAsset: Int) throws(DeriveError) -> AssetPage {
        guard limit > 0 else { return AssetPage(assets: [], next: nil) }
        let (sql, values) = Self.recentAssetsQuery(before: cursor, limit: limit, outputsPerAsset: outputsPerAsset)
        let rows = try read { connection throws(SQLiteError) in try connection.rows(sql, values, source: "assets") }
        return try AssetPage(rows: rows, limit: limit)
    }

    public func asset(id: Int64) throws(DeriveError) -> AssetDetail? {
        let (asset, derivatives, sources) = try read { connection throws(SQLiteError) in
            let asset = try connection.rows(CatalogSQL.asset, [SQLiteValue(id)], source: "assets").first
            guard let asset else { return (nil as DatabaseRow?, [DatabaseRow](), [DatabaseRow]()) }
            return (asset, try connection.rows(CatalogSQL.derivativesOfAsset, [SQLiteValue(id)], source: "derivatives"),
                    try connection.rows(CatalogSQL.sourcesOfAsset, [SQLiteValue(id)], source: "sources"))
        }
        guard let asset else { return nil }
        return try AssetDetail(row: asset, derivatives: try derivatives.map { row throws(DeriveError) in try CatalogDerivative(row: row) },
                               sources: try sources.map { row throws(DeriveError) in try SourceRevalidation(row: row) })
    }

    public func assetID(sha256: String) throws(DeriveError) -> Int64? {
        let row = try read { connection throws(SQLiteError) in
            try connection.rows("SELECT id FROM assets WHERE sha256 = ?", [SQLiteValue(sha256)], source: "assets").first
        }
        return try row.map { row throws(DeriveError) in try row.int64("id") }
    }

    public func derivative(id: Int64) throws(DeriveError) -> CatalogDerivative? {
        let row = try read { connection throws(SQLiteError) in
            try connection.rows(CatalogSQL.derivative, [SQLiteValue(id)], source: "derivatives").first
        }
        return try row.map { row throws(DeriveError) in try CatalogDerivative(row: row) }
    }

    /// The statement `recentAssets` runs: a page of assets by rowid, newest first, and for each
    /// its narrowest current outputs from `derivatives_asset_current`. `AssetPage(rows:limit:)`
    /// orders what comes back. Public for the plan checks.
    public static func recentAssetsQuery(before cursor: Int64?, limit: Int, outputsPerAsset: Int) -> (sql: String, values: [DatabaseValue]) {
        var values = [SQLiteValue(max(0, limit)), SQLiteValue(max(0, outputsPerAsset))]
        var condition = ""
        if let cursor {
            values.append(SQLiteValue(cursor))
            condition = "WHERE id < ?3"
        }
        let sql = """
            SELECT a.id AS asset_id, a.sha256 AS asset_sha256, a.source_url AS asset_source_url, a.format AS asset_format,
                   a.width AS asset_width, a.height AS asset_height, a.created_at AS asset_created_at,
                   (SELECT count(*) FROM derivatives c WHERE c.asset_id = a.id AND c.superseded_at IS NULL) AS output_count,
                   \(CatalogSQL.derivativeColumns)
            FROM (SELECT id, sha256, source_url, format, width, height, created_at FROM assets \(condition) ORDER BY id DESC LIMIT ?1) a
            LEFT JOIN derivatives d ON d.id IN (SELECT x.id FROM derivatives x WHERE x.asset_id = a.id AND x.superseded_at IS NULL
                                                ORDER BY x.width, x.id LIMIT ?2)
            """
        return (sql, values)
    }
}

/// What the asset catalog reads, by the indexes PostgreSQL's have (SQLiteSchema, version 8);
/// public for the plan checks.
public enum CatalogSQL {
    /// A `CatalogDerivative`'s columns from a derivatives row `d` (NULL where `d` is).
    static let derivativeColumns = """
        d.id, d.asset_id, d.job_id, CASE WHEN d.id IS NOT NULL THEN \(SQLiteJobStore.derivativeObject("d")) END AS record,
        d.created_at, d.superseded_at, (SELECT max(p.version) FROM presets p WHERE p.name = d.preset_name) AS current_preset_version
        """

    public static let asset = """
        SELECT a.id, \(SQLiteJobStore.assetObject("a")) AS record, a.created_at, a.updated_at FROM assets a WHERE a.id = ?1
        """

    public static let derivativesOfAsset = """
        SELECT \(derivativeColumns) FROM derivatives d WHERE d.asset_id = ?1 ORDER BY d.created_at DESC, d.id DESC
        """

    public static let sourcesOfAsset = """
        SELECT url, version, etag, last_modified, checked_at, changed_at FROM sources WHERE asset_id = ?1 ORDER BY url
        """

    public static let derivative = """
        SELECT \(derivativeColumns) FROM derivatives d WHERE d.id = ?1
        """
}
