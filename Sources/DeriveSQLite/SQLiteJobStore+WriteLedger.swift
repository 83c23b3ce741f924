import DeriveLanguage
import DeriveJobs
import Foundation

/// The write ledger on SQLite. Every write transaction holds the file's one write lock, so a
/// run cannot note (and then write) a key between the sweep's check and its delete: the
/// sweep checks, deletes from the store and forgets the notes in one transaction.
extension SQLiteJobStore: WriteLedger {
    public func noteWrites(_ keys: [String], store: String, job: JobID) throws(DeriveError) {
        guard !keys.isEmpty else { return }
        try write { connection, now throws(SQLiteError) in
            try connection.query("""
                INSERT INTO pending_writes (store, storage_key, job_id, noted_at)
                SELECT ?, value, ?, ? FROM json_each(?) WHERE true
                ON CONFLICT (store, storage_key, job_id) DO UPDATE SET noted_at = excluded.noted_at
                """, [SQLiteValue(store), SQLiteValue(Int(job)), SQLiteValue(now), SQLiteValue(JSONWriter.compact(.array(keys.map(JSONValue.string))))])
        }
    }

    public func unrecordedWrites(store: String, notedBefore cutoff: Date, limit: Int) throws(DeriveError) -> [String] {
        try read { connection throws(SQLiteError) in
            let rows = try connection.rows("""
                SELECT DISTINCT p.storage_key FROM pending_writes p
                WHERE p.store = ? AND p.noted_at < ? AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = p.job_id)
                LIMIT ?
                """, [SQLiteValue(store), SQLiteValue(cutoff.timeIntervalSince1970), SQLiteValue(limit)], source: "pending_writes")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try row.string("storage_key") } }
        }
    }

    public func removeUnrecordedWrite(_ key: String, store: String, delete: (String) throws(DeriveError) -> Void) throws(DeriveError) -> Bool {
        var storeError: DeriveError?
        do {
            return try write { connection, _ throws(SQLiteError) in
                let uses = try connection.rows("""
                    SELECT EXISTS (SELECT 1 FROM derivatives WHERE storage_key = ?2)
                           OR EXISTS (SELECT 1 FROM served_assets WHERE original_key = ?2)
                           OR EXISTS (SELECT 1 FROM served_derivatives WHERE storage_key = ?2) AS recorded,
                           EXISTS (SELECT 1 FROM pending_writes p JOIN jobs j ON j.id = p.job_id WHERE p.store = ?1 AND p.storage_key = ?2)
                           AS running
                    """, [SQLiteValue(store), SQLiteValue(key)], source: "pending_writes")
                let (recorded, running) = try SQLiteError.decoding { () throws(DeriveError) in
                    try uses.first.map { row throws(DeriveError) in (try row.bool("recorded"), try row.bool("running")) } ?? (false, false)
                }
                let forget = """
                    DELETE FROM pending_writes
                    WHERE store = ? AND storage_key = ? AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = pending_writes.job_id)
                    """
                guard !recorded, !running else {
                    if !running { try connection.query(forget, [SQLiteValue(store), SQLiteValue(key)]) }
                    return false
                }
                do throws(DeriveError) { try delete(key) } catch {
                    storeError = error
                    throw SQLiteError(code: SQLITE_MISUSE_CODE, message: "the store refused the delete")
                }
                try connection.query(forget, [SQLiteValue(store), SQLiteValue(key)])
                return true
            }
        } catch {
            throw storeError ?? error
        }
    }
}
