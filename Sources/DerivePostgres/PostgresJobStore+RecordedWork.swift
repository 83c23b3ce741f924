import DeriveCore

extension PostgresJobStore: RecordedWork {
    public func recorded(sourceSHA256 sha256: String, outputs: [OutputIdentity]) throws(DeriveError) -> RecordedAsset? {
        let wanted = JSONValue.array(outputs.map { .object(["name": .string($0.name), "identity": .string($0.identity)]) })
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query(Self.recordedSQL, [sha256, JSONWriter.compact(wanted)]).rows.map { row throws(PostgresError) in
                (try Fields(row).json(0), try Fields(row).json(1))
            }
        }
        guard let (asset, derivatives) = rows.first else { return nil }
        guard case .array(let list) = derivatives else {
            throw DeriveError(.internalError, "derivatives of asset \(sha256.prefix(16)) did not come back as a list", retryable: false)
        }
        var records: [DerivativeRecord] = []
        for derivative in list { records.append(try DerivativeRecord(row: derivative)) }
        return RecordedAsset(asset: try AssetRecord(row: asset), derivatives: records)
    }

    /// The asset and its current rows for the outputs asked about, each as JSON with the
    /// table's column names.
    static let recordedSQL = """
        SELECT to_jsonb(a), coalesce((
            SELECT jsonb_agg(to_jsonb(d)) FROM derive.derivatives d
            WHERE d.asset_id = a.id AND d.superseded_at IS NULL
              AND (d.output_name, d.chain_hash) IN (SELECT o.name, o.identity FROM jsonb_to_recordset($2::jsonb) AS o(name text, identity text))
        ), '[]'::jsonb)
        FROM derive.assets a WHERE a.sha256 = $1
        """
}
