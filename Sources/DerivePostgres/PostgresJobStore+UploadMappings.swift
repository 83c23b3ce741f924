import DeriveJobs
import DeriveLanguage

/// Folders compare byte by byte (`COLLATE "C"`), as SQLite and Swift compare them, so a
/// listing's pages follow the same order on every store whatever the database's collation.
extension PostgresJobStore: UploadMappings {
    public func uploadMappings(cloud: String, after: String?, limit: Int) throws(DeriveError) -> [UploadMapping] {
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query("""
                SELECT folder, template FROM derive.upload_mappings WHERE cloud = $1 AND folder COLLATE "C" > $2
                ORDER BY folder COLLATE "C" LIMIT $3
                """, [cloud, after ?? "", String(max(0, limit))]).named("upload_mappings")
        }
        return try rows.map { row throws(DeriveError) in UploadMapping(folder: try row.string("folder"), template: try row.string("template")) }
    }

    public func uploadMapping(cloud: String, folder: String) throws(DeriveError) -> UploadMapping? {
        let row = try withConnection { connection throws(PostgresError) in
            try connection.query("SELECT folder, template FROM derive.upload_mappings WHERE cloud = $1 AND folder = $2", [cloud, folder])
                .named("upload_mappings").first
        }
        guard let row else { return nil }
        return UploadMapping(folder: try row.string("folder"), template: try row.string("template"))
    }

    public func createUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool {
        try withConnection { connection throws(PostgresError) in
            try connection.query("""
                INSERT INTO derive.upload_mappings (cloud, folder, template) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING folder
                """, [cloud, mapping.folder, mapping.template]).count == 1
        }
    }

    public func updateUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool {
        try withConnection { connection throws(PostgresError) in
            try connection.query("UPDATE derive.upload_mappings SET template = $3 WHERE cloud = $1 AND folder = $2 RETURNING folder",
                                 [cloud, mapping.folder, mapping.template]).count == 1
        }
    }

    public func deleteUploadMapping(cloud: String, folder: String) throws(DeriveError) -> Bool {
        try withConnection { connection throws(PostgresError) in
            try connection.query("DELETE FROM derive.upload_mappings WHERE cloud = $1 AND folder = $2 RETURNING folder", [cloud, folder]).count == 1
        }
    }
}
