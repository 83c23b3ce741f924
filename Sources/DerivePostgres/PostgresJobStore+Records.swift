import DeriveLanguage
import DeriveJobs

extension PostgresJobStore {
    /// Upserts the assets and derivatives of completed runs, inside the caller's transaction.
    /// One statement each for the whole batch; within it, one row per asset content and per
    /// stored key (a batch may hold the same source, or the same work, twice).
    static func write(_ completions: [Completion], on connection: PostgresConnection) throws(PostgresError) {
        var assets: [String: JSONValue] = [:]
        var derivatives: [String: JSONValue] = [:]
        var sources: [String: JSONValue] = [:]
        var replaced: [JSONValue] = []
        var recorded: [JSONValue] = []
        for completion in completions {
            guard let record = completion.record else { continue }
            for derivative in record.derivatives {
                recorded.append(.object(["job_id": .int(Int(completion.run.id)), "storage_key": .string(derivative.storageKey)]))
            }
            assets[record.asset.sha256] = record.asset.row
            if let source = record.source {
                sources[source.url] = .object(["url": .string(source.url), "sha256": .string(record.asset.sha256),
                                               "etag": source.etag.map(JSONValue.string) ?? .null,
                                               "last_modified": source.lastModified.map(JSONValue.string) ?? .null])
            }
            for (preset, version) in record.presetVersions {
                replaced.append(.object(["sha256": .string(record.asset.sha256), "preset": .string(preset), "version": .int(version),
                                         "keys": .array(record.derivatives.map { .string($0.storageKey) })]))
            }
            for derivative in record.derivatives {
                guard case .object(var members) = derivative.row else { continue }
                members.append(JSONMember(key: "asset_sha256", value: .string(record.asset.sha256)))
                members.append(JSONMember(key: "job_id", value: .int(Int(completion.run.id))))
                derivatives[record.asset.sha256 + "\n" + derivative.storageKey] = .object(members)
            }
        }
        guard !assets.isEmpty else { return }
        // What is recorded is no longer pending (WriteLedger).
        try connection.query(RecordSQL.forgetRecorded, [JSONWriter.compact(.array(recorded))])
        try connection.query(RecordSQL.assets, [JSONWriter.compact(.array(Array(assets.values)))])
        if !derivatives.isEmpty {
            try connection.query(RecordSQL.derivatives, [JSONWriter.compact(.array(Array(derivatives.values)))])
        }
        if !replaced.isEmpty {
            try connection.query(RecordSQL.supersede, [JSONWriter.compact(.array(replaced))])
        }
        if !sources.isEmpty {
            try connection.query(RecordSQL.sources, [JSONWriter.compact(.array(Array(sources.values)))])
        }
    }
}

enum RecordSQL {
    static let forgetRecorded = """
        DELETE FROM derive.pending_writes p
        USING jsonb_to_recordset($1::jsonb) AS r(job_id bigint, storage_key text)
        WHERE p.job_id = r.job_id AND p.storage_key = r.storage_key
        """

    static let assets = """
        INSERT INTO derive.assets (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation, colour_space,
                                   icc_description, exif, has_location, perceptual_hash, faces, tags, context)
        SELECT sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation, colour_space,
               icc_description, exif, has_location, perceptual_hash, faces, tags, context
        FROM jsonb_populate_recordset(NULL::derive.assets, $1::jsonb)
        ON CONFLICT (sha256) DO UPDATE SET
            source_url = EXCLUDED.source_url, bytes = EXCLUDED.bytes, format = EXCLUDED.format, width = EXCLUDED.width,
            height = EXCLUDED.height, pages = EXCLUDED.pages, has_alpha = EXCLUDED.has_alpha, orientation = EXCLUDED.orientation,
            colour_space = EXCLUDED.colour_space, icc_description = EXCLUDED.icc_description, exif = EXCLUDED.exif,
            has_location = EXCLUDED.has_location, perceptual_hash = EXCLUDED.perceptual_hash,
            faces = coalesce(EXCLUDED.faces, derive.assets.faces), tags = coalesce(EXCLUDED.tags, derive.assets.tags),
            context = coalesce(EXCLUDED.context, derive.assets.context), updated_at = now()
        """

    /// The same work lands on the same key: a re-run updates its row rather than adding one.
    static let derivatives = """
        INSERT INTO derive.derivatives (asset_id, job_id, output_name, breakpoint_width, chain, chain_hash, preset_name, preset_version,
                                        storage_key, url, format, width, height, bytes, sha256, quality, frames, has_alpha, blurhash,
                                        dominant_color, timings)
        SELECT a.id, d.job_id, d.output_name, d.breakpoint_width, d.chain, d.chain_hash, d.preset_name, d.preset_version,
               d.storage_key, d.url, d.format, d.width, d.height, d.bytes, d.sha256, d.quality, d.frames, d.has_alpha, d.blurhash,
               d.dominant_color, d.timings
        FROM jsonb_to_recordset($1::jsonb) AS d(asset_sha256 text, job_id bigint, output_name text, breakpoint_width integer,
                                                chain jsonb, chain_hash text, preset_name text, preset_version integer,
                                                storage_key text, url text, format text, width integer, height integer, bytes bigint,
                                                sha256 text, quality integer, frames integer, has_alpha boolean, blurhash text,
                                                dominant_color text, timings jsonb)
        JOIN derive.assets a ON a.sha256 = d.asset_sha256
        ON CONFLICT (asset_id, storage_key) DO UPDATE SET
            job_id = EXCLUDED.job_id, output_name = EXCLUDED.output_name, breakpoint_width = EXCLUDED.breakpoint_width,
            chain = EXCLUDED.chain, chain_hash = EXCLUDED.chain_hash, preset_name = EXCLUDED.preset_name,
            preset_version = EXCLUDED.preset_version, url = EXCLUDED.url, format = EXCLUDED.format, width = EXCLUDED.width,
            height = EXCLUDED.height, bytes = EXCLUDED.bytes, sha256 = EXCLUDED.sha256, quality = EXCLUDED.quality,
            frames = EXCLUDED.frames, has_alpha = EXCLUDED.has_alpha, blurhash = EXCLUDED.blurhash,
            dominant_color = EXCLUDED.dominant_color, timings = EXCLUDED.timings, superseded_at = NULL
        """

    /// Outputs of an older version of a preset, for an asset that now has the newer one's,
    /// under other keys, are superseded.
    static let supersede = """
        UPDATE derive.derivatives d SET superseded_at = now()
        FROM jsonb_to_recordset($1::jsonb) AS r(sha256 text, preset text, version integer, keys text[]), derive.assets a
        WHERE a.sha256 = r.sha256 AND d.asset_id = a.id AND d.preset_name = r.preset AND d.preset_version < r.version
          AND d.superseded_at IS NULL AND NOT (d.storage_key = ANY (r.keys))
        """

    /// A source URL now holds this asset; when it held another, its version goes up.
    static let sources = """
        INSERT INTO derive.sources (url, asset_id, etag, last_modified)
        SELECT s.url, a.id, s.etag, s.last_modified
        FROM jsonb_to_recordset($1::jsonb) AS s(url text, sha256 text, etag text, last_modified text)
        JOIN derive.assets a ON a.sha256 = s.sha256
        ON CONFLICT (url) DO UPDATE SET
            version = derive.sources.version + CASE WHEN derive.sources.asset_id <> EXCLUDED.asset_id THEN 1 ELSE 0 END,
            changed_at = CASE WHEN derive.sources.asset_id <> EXCLUDED.asset_id THEN now() ELSE derive.sources.changed_at END,
            asset_id = EXCLUDED.asset_id, etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified, checked_at = now()
        """
}
