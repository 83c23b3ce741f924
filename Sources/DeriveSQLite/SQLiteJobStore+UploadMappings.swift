import DeriveJobs
import DeriveLanguage

extension SQLiteJobStore: UploadMappings {
    public func uploadMappings(cloud: String, after: String?, limit: Int) throws(DeriveError) -> [UploadMapping] {
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("SELECT folder, template FROM upload_mappings WHERE cloud = ? AND folder > ? ORDER BY folder LIMIT ?",
                                [SQLiteValue(cloud), SQLiteValue(after ?? ""), SQLiteValue(max(0, limit))], source: "upload_mappings")
        }
        return try rows.map { row throws(DeriveError) in UploadMapping(folder: try row.string("folder"), template: try row.string("template")) }
    }

    public func uploadMapping(cloud: String, folder: String) throws(DeriveError) -> UploadMapping? {
        let row = try read { connection throws(SQLiteError) in
            try connection.rows("SELECT folder, template FROM upload_mappings WHERE cloud = ? AND folder = ?",
                                [SQLiteValue(cloud), SQLiteValue(folder)], source: "upload_mappings").first
        }
        guard let row else { return nil }
        return UploadMapping(folder: try row.string("folder"), template: try row.string("template"))
    }

    public func createUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool {
        try write { connection, now throws(SQLiteError) in
            try connection.query("INSERT INTO upload_mappings (cloud, folder, template, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                                 [SQLiteValue(cloud), SQLiteValue(mapping.folder), SQLiteValue(mapping.template), SQLiteValue(now)])
            return connection.changes == 1
        }
    }

    public func updateUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool {
        try write { connection, _ throws(SQLiteError) in
            try connection.query("UPDATE upload_mappings SET template = ? WHERE cloud = ? AND folder = ?",
                                 [SQLiteValue(mapping.template), SQLiteValue(cloud), SQLiteValue(mapping.folder)])
            return connection.changes == 1
        }
    }

    public func deleteUploadMapping(cloud: String, folder: String) throws(DeriveError) -> Bool {
        try write { connection, _ throws(SQLiteError) in
            try connection.query("DELETE FROM upload_mappings WHERE cloud = ? AND folder = ?", [SQLiteValue(cloud), SQLiteValue(folder)])
            return connection.changes == 1
        }
    }
}
