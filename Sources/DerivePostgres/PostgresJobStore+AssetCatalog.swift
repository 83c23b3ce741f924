import DeriveLanguage
import DeriveJobs

extension PostgresJobStore: AssetCatalog {
    public func recentAssets(before cursor: Int64?, limit: Int, outputsPerAsset: Int) throws(DeriveError) -> AssetPage {
        guard limit > 0 else { return AssetPage(assets: [], next: nil) }
        let (sql, values) = Self.recentAssetsQuery(before: cursor, limit: limit, outputsPerAsset: outputsPerAsset)
        let rows = try withConnection { connection throws(PostgresError) in try connection.query(sql, values).named("assets") }
        return try AssetPage(rows: rows, limit: limit)
    }

    public func asset(id: Int64) throws(DeriveError) -> AssetDetail? {
        let (asset, derivatives, sources) = try withConnection { connection throws(PostgresError) in
            let asset = try connection.query(CatalogSQL.asset, [String(id)]).named("assets").first
            guard let asset else { return (nil as DatabaseRow?, [DatabaseRow](), [DatabaseRow]()) }
            return (asset, try connection.query(CatalogSQL.derivativesOfAsset, [String(id)]).named("derivatives"),
                    try connection.query(CatalogSQL.sourcesOfAsset, [String(id)]).named("sources"))
        }
        guard let asset else { return nil }
        return try AssetDetail(row: asset, derivatives: try derivatives.map { row throws(DeriveError) in try CatalogDerivative(row: row) },
                               sources: try sources.map { row throws(DeriveError) in try SourceRevalidation(row: row) })
    }

    public func assetID(sha256: String) throws(DeriveError) -> Int64? {
        let row = try withConnection { connection throws(PostgresError) in
            try connection.query("SELECT id FROM derive.assets WHERE sha256 = $1", [sha256]).named("assets").first
        }
        return try row.map { row throws(DeriveError) in try row.int64("id") }
    }

    public func derivative(id: Int64) throws(DeriveError) -> CatalogDerivative? {
        let row = try withConnection { connection throws(PostgresError) in
            try connection.query(CatalogSQL.derivative, [String(id)]).named("derivatives").first
        }
        return try row.map { row throws(DeriveError) in try CatalogDerivative(row: row) }
    }

    /// The statement `recentAssets` runs: a page of assets by their primary key, newest first,
    /// and for each its narrowest current outputs from `derivatives_asset_current`
    /// (Migrations/0008). `AssetPage(rows:limit:)` orders what comes back. Public for the plan checks.
    public static func recentAssetsQuery(before cursor: Int64?, limit: Int, outputsPerAsset: Int) -> (sql: String, values: [String?]) {
        var values: [String?] = [String(max(0, limit)), String(max(0, outputsPerAsset))]
        var condition = ""
        if let cursor {
            values.append(String(cursor))
            condition = "WHERE id < $3::bigint"
        }
        let sql = """
            SELECT a.id AS asset_id, a.sha256 AS asset_sha256, a.source_url AS asset_source_url, a.format AS asset_format,
                   a.width AS asset_width, a.height AS asset_height, extract(epoch FROM a.created_at) AS asset_created_at,
                   (SELECT count(*) FROM derive.derivatives c WHERE c.asset_id = a.id AND c.superseded_at IS NULL) AS output_count,
                   \(CatalogSQL.derivativeColumns)
            FROM (SELECT id, sha256, source_url, format, width, height, created_at FROM derive.assets \(condition)
                  ORDER BY id DESC LIMIT $1::integer) a
            LEFT JOIN LATERAL (SELECT * FROM derive.derivatives x WHERE x.asset_id = a.id AND x.superseded_at IS NULL
                               ORDER BY x.width, x.id LIMIT $2::integer) d ON true
            """
        return (sql, values)
    }
}

/// What the asset catalog reads; public for the plan checks.
public enum CatalogSQL {
    /// A `CatalogDerivative`'s columns from a derivatives row `d`: the row itself as JSON, its
    /// times as Unix seconds and its preset's newest version (retired or not).
    static let derivativeColumns = """
        d.id, d.asset_id, d.job_id, to_jsonb(d) AS record, extract(epoch FROM d.created_at) AS created_at,
        extract(epoch FROM d.superseded_at) AS superseded_at,
        (SELECT max(p.version) FROM derive.presets p WHERE p.name = d.preset_name) AS current_preset_version
        """

    /// $1 asset id.
    public static let asset = """
        SELECT a.id, to_jsonb(a) AS record, extract(epoch FROM a.created_at) AS created_at, extract(epoch FROM a.updated_at) AS updated_at
        FROM derive.assets a WHERE a.id = $1::bigint
        """

    /// $1 asset id. Every derivative, superseded ones too, newest first (`derivatives_asset_created`).
    public static let derivativesOfAsset = """
        SELECT \(derivativeColumns) FROM derive.derivatives d WHERE d.asset_id = $1::bigint ORDER BY d.created_at DESC, d.id DESC
        """

    /// $1 asset id. The sources whose last content is the asset, by URL (`sources_asset_url`).
    public static let sourcesOfAsset = """
        SELECT url, version, etag, last_modified, extract(epoch FROM checked_at) AS checked_at, extract(epoch FROM changed_at) AS changed_at
        FROM derive.sources WHERE asset_id = $1::bigint ORDER BY url
        """

    /// $1 derivative id.
    public static let derivative = """
        SELECT \(derivativeColumns) FROM derive.derivatives d WHERE d.id = $1::bigint
        """
}
