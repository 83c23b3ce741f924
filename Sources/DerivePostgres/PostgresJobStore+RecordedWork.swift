import DeriveLanguage
import DeriveJobs

extension PostgresJobStore: RecordedWork {
    public func recorded(sourceSHA256 sha256: String, outputs: [OutputIdentity]) throws(DeriveError) -> RecordedAsset? {
        let rows = try withConnection { connection throws(PostgresError) in
            let rows = try connection.query(Self.recordedSQL, [sha256, OutputIdentity.json(outputs)]).named("assets")
            return try PostgresError.decoding { () throws(DeriveError) in
                try rows.map { row throws(DeriveError) in (try row.json("asset"), try row.json("derivatives")) }
            }
        }
        guard let (asset, derivatives) = rows.first else { return nil }
        return try RecordedAsset(assetRow: asset, derivativeRows: derivatives)
    }

    /// The asset and its current rows for the outputs asked about, each as JSON with the
    /// table's column names.
    static let recordedSQL = """
        SELECT to_jsonb(a) AS asset, coalesce((
            SELECT jsonb_agg(to_jsonb(d)) FROM derive.derivatives d
            WHERE d.asset_id = a.id AND d.superseded_at IS NULL
              AND (d.output_name, d.chain_hash) IN (SELECT o.name, o.identity FROM jsonb_to_recordset($2::jsonb) AS o(name text, identity text))
        ), '[]'::jsonb) AS derivatives
        FROM derive.assets a WHERE a.sha256 = $1
        """
}
