import DeriveCore

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
        SELECT json_object('sha256', sha256, 'source_url', source_url, 'bytes', bytes, 'format', format, 'width', width,
                           'height', height, 'pages', pages, 'has_alpha', has_alpha, 'orientation', orientation,
                           'colour_space', colour_space, 'icc_description', icc_description, 'exif', json(exif),
                           'has_location', has_location, 'perceptual_hash', perceptual_hash) AS asset,
               (SELECT json_group_array(json_object(
                           'output_name', d.output_name, 'breakpoint_width', d.breakpoint_width, 'chain', json(d.chain),
                           'chain_hash', d.chain_hash, 'preset_name', d.preset_name, 'preset_version', d.preset_version,
                           'storage_key', d.storage_key, 'url', d.url, 'format', d.format, 'width', d.width, 'height', d.height,
                           'bytes', d.bytes, 'sha256', d.sha256, 'quality', d.quality, 'frames', d.frames, 'has_alpha', d.has_alpha,
                           'blurhash', d.blurhash, 'dominant_color', d.dominant_color, 'timings', json(d.timings)))
                FROM derivatives d
                WHERE d.asset_id = a.id AND d.superseded_at IS NULL
                  AND EXISTS (SELECT 1 FROM json_each(?2) o
                              WHERE o.value ->> 'name' = d.output_name AND o.value ->> 'identity' = d.chain_hash)) AS derivatives
        FROM assets a WHERE a.sha256 = ?1
        """
}
