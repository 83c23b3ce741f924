import DeriveLanguage
import DeriveJobs

extension SQLiteJobStore: RecordedWork {
    public func recorded(sourceSHA256 sha256: String, outputs: [OutputIdentity]) throws(DeriveError) -> RecordedAsset? {
        let rows = try read { connection throws(SQLiteError) in
            let rows = try connection.rows(Self.recordedSQL, [SQLiteValue(sha256), SQLiteValue(OutputIdentity.json(outputs))], source: "assets")
            return try SQLiteError.decoding { () throws(DeriveError) in
                try rows.map { row throws(DeriveError) in (try row.json("asset"), try row.json("derivatives")) }
            }
        }
        guard let (asset, derivatives) = rows.first else { return nil }
        return try RecordedAsset(assetRow: asset, derivativeRows: derivatives)
    }

    /// The asset and its current rows for the outputs asked about, each as JSON with the
    /// table's column names (booleans as SQLite's 0 and 1).
    static let recordedSQL = """
        SELECT \(assetObject("a")) AS asset,
               (SELECT json_group_array(\(derivativeObject("d")))
                FROM derivatives d
                WHERE d.asset_id = a.id AND d.superseded_at IS NULL
                  AND EXISTS (SELECT 1 FROM json_each(?2) o
                              WHERE o.value ->> 'name' = d.output_name AND o.value ->> 'identity' = d.chain_hash)) AS derivatives
        FROM assets a WHERE a.sha256 = ?1
        """

    /// The assets row `alias` as a JSON object with the table's column names (what
    /// `AssetRecord(row:)` reads), as PostgreSQL's `to_jsonb` gives it.
    static func assetObject(_ alias: String) -> String {
        let a = alias
        return """
            json_object('sha256', \(a).sha256, 'source_url', \(a).source_url, 'bytes', \(a).bytes, 'format', \(a).format,
                        'width', \(a).width, 'height', \(a).height, 'pages', \(a).pages, 'has_alpha', \(a).has_alpha,
                        'orientation', \(a).orientation, 'colour_space', \(a).colour_space, 'icc_description', \(a).icc_description,
                        'exif', json(\(a).exif), 'has_location', \(a).has_location, 'perceptual_hash', \(a).perceptual_hash,
                        'faces', json(\(a).faces), 'tags', json(\(a).tags), 'context', json(\(a).context))
            """
    }

    /// The derivatives row `alias` as a JSON object with the table's column names (what
    /// `DerivativeRecord(row:)` reads).
    static func derivativeObject(_ alias: String) -> String {
        let d = alias
        return """
            json_object('output_name', \(d).output_name, 'breakpoint_width', \(d).breakpoint_width, 'chain', json(\(d).chain),
                        'chain_hash', \(d).chain_hash, 'preset_name', \(d).preset_name, 'preset_version', \(d).preset_version,
                        'storage_key', \(d).storage_key, 'url', \(d).url, 'format', \(d).format, 'width', \(d).width,
                        'height', \(d).height, 'bytes', \(d).bytes, 'sha256', \(d).sha256, 'quality', \(d).quality,
                        'frames', \(d).frames, 'has_alpha', \(d).has_alpha, 'blurhash', \(d).blurhash,
                        'dominant_color', \(d).dominant_color, 'timings', json(\(d).timings))
            """
    }
}
