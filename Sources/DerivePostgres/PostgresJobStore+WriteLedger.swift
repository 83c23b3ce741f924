import DeriveLanguage
import DeriveJobs
import Foundation

/// The write ledger on PostgreSQL. A key's notes and its removal take turns on a transaction
/// advisory lock on the store and key: a run noting the key holds it shared, the sweep
/// exclusively across its check and the store's delete, so a run cannot note (and then
/// write) a key between the sweep's check and its delete.
extension PostgresJobStore: WriteLedger {
    /// The note is the one database call in the middle of a job's run. A pooled connection the
    /// server dropped while it sat idle fails on its first use, and the job would fail with it
    /// (found by `aWorkerSurvivesItsDatabaseConnectionsDropping`: one job of 40 retried after the
    /// worker had gone idle); the note is an idempotent upsert, so it is sent once more, on the
    /// fresh connection the pool then opens, before the failure counts.
    public func noteWrites(_ keys: [String], store: String, job: JobID) throws(DeriveError) {
        guard !keys.isEmpty else { return }
        let list = JSONWriter.compact(.array(keys.map(JSONValue.string)))
        do {
            try withConnection { connection throws(PostgresError) in
                try connection.query(LedgerSQL.note, [store, list, String(job)])
            }
        } catch where error.code == .databaseUnavailable && error.isRetryable {
            try withConnection { connection throws(PostgresError) in
                try connection.query(LedgerSQL.note, [store, list, String(job)])
            }
        }
    }

    public func unrecordedWrites(store: String, notedBefore cutoff: Date, limit: Int) throws(DeriveError) -> [String] {
        try withConnection { connection throws(PostgresError) in
            let rows = try connection.query(LedgerSQL.unrecorded, [store, String(cutoff.timeIntervalSince1970), String(limit)]).named("pending_writes")
            return try PostgresError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try row.string("storage_key") } }
        }
    }

    public func removeUnrecordedWrite(_ key: String, store: String, delete: (String) throws(DeriveError) -> Void) throws(DeriveError) -> Bool {
        var storeError: DeriveError?
        do {
            return try withConnection { connection throws(PostgresError) in
                try connection.transaction { () throws(PostgresError) in
                    try connection.query(LedgerSQL.lockExclusive, [store, key])
                    let uses = try connection.query(LedgerSQL.uses, [store, key]).named("pending_writes")
                    let (recorded, running) = try PostgresError.decoding { () throws(DeriveError) in
                        try uses.first.map { row throws(DeriveError) in (try row.bool("recorded"), try row.bool("running")) } ?? (false, false)
                    }
                    guard !recorded, !running else {
                        if !running { try connection.query(LedgerSQL.forget, [store, key]) }
                        return false
                    }
                    do throws(DeriveError) { try delete(key) } catch {
                        storeError = error
                        throw PostgresError(sqlState: nil, message: "the store refused the delete")
                    }
                    try connection.query(LedgerSQL.forget, [store, key])
                    return true
                }
            }
        } catch {
            throw storeError ?? error
        }
    }
}

enum LedgerSQL {
    static let lockExclusive = "SELECT pg_advisory_xact_lock(hashtextextended($1 || E'\\n' || $2, 0))"
    static let lockShared = "SELECT pg_advisory_xact_lock_shared(hashtextextended($1 || E'\\n' || $2, 0))"
    /// One statement, on the hot path of every job: the shared locks (held to the end of the
    /// statement's transaction) are taken before any row is inserted, as the insert's
    /// condition reads their count.
    static let note = """
        WITH keys AS (SELECT key FROM jsonb_array_elements_text($2::jsonb) AS key),
             locked AS (SELECT count(pg_advisory_xact_lock_shared(hashtextextended($1 || E'\\n' || key, 0))) AS n FROM keys)
        INSERT INTO derive.pending_writes (store, storage_key, job_id)
        SELECT $1, key, $3::bigint FROM keys WHERE (SELECT n FROM locked) = (SELECT count(*) FROM keys)
        ON CONFLICT (store, storage_key, job_id) DO UPDATE SET noted_at = now()
        """
    /// Notes of finished jobs only: a job still in the queue may yet record the key.
    static let unrecorded = """
        SELECT DISTINCT p.storage_key FROM derive.pending_writes p
        WHERE p.store = $1 AND p.noted_at < to_timestamp($2::double precision)
          AND NOT EXISTS (SELECT 1 FROM derive.jobs j WHERE j.id = p.job_id)
        LIMIT $3::int
        """
    static let uses = """
        SELECT EXISTS (SELECT 1 FROM derive.derivatives WHERE storage_key = $2)
               OR EXISTS (SELECT 1 FROM derive.served_assets WHERE original_key = $2)
               OR EXISTS (SELECT 1 FROM derive.served_derivatives WHERE storage_key = $2) AS recorded,
               EXISTS (SELECT 1 FROM derive.pending_writes p JOIN derive.jobs j ON j.id = p.job_id WHERE p.store = $1 AND p.storage_key = $2)
               AS running
        """
    /// The notes of finished jobs (a running job's note stays: it may still write).
    static let forget = """
        DELETE FROM derive.pending_writes p
        WHERE p.store = $1 AND p.storage_key = $2 AND NOT EXISTS (SELECT 1 FROM derive.jobs j WHERE j.id = p.job_id)
        """
}
