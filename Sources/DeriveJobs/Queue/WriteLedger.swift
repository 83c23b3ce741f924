import DeriveLanguage
import Foundation

/// The write ledger: the keys runs were about to write to a store, kept until the job's
/// outputs are recorded. Content-addressed keys make most retries harmless (a retry writes the
/// same bytes under the same key), but a run that dies between writing and recording, when the
/// source changes before the retry, leaves objects under keys nothing will ever name. The
/// ledger is how those are found and removed, without ever removing an object that a row, or
/// a run still working, names. Migrations/0006_pending_writes.sql holds the table.
public protocol WriteLedger: Sendable {
    /// Notes that `job`'s current run is about to write `keys` to `store`. Called before the
    /// writes, so a run that dies halfway leaves its notes behind.
    func noteWrites(_ keys: [String], store: String, job: JobID) throws(DeriveError)

    /// Keys of `store` noted before `cutoff` by jobs that have finished and whose recording
    /// did not forget them: what a dead or failed run left. Up to `limit`.
    func unrecordedWrites(store: String, notedBefore cutoff: Date, limit: Int) throws(DeriveError) -> [String]

    /// Removes one key that `unrecordedWrites` returned: while no run can note the key, checks
    /// that no derivative row (a job's, or a served asset's or derivative's) and no unfinished
    /// job names it, and if none does, calls `delete`
    /// (which removes the object from the store) and forgets the key's notes. Returns whether
    /// the object was deleted; a key still in use keeps its object and loses only the notes
    /// of finished jobs.
    func removeUnrecordedWrite(_ key: String, store: String, delete: (String) throws(DeriveError) -> Void) throws(DeriveError) -> Bool
}

extension WriteLedger {
    /// Removes from `store` the objects that finished jobs wrote and never recorded, noted
    /// before `cutoff` (a run still writing is far younger), up to `limit` keys per call.
    /// A key that cannot be deleted now is reported in `failures` and tried at the next sweep.
    public func sweepUnrecordedWrites(in store: any AssetStore, olderThan cutoff: Date, limit: Int = 1000) throws(DeriveError) -> AbandonedWriteSweep {
        var sweep = AbandonedWriteSweep()
        for key in try unrecordedWrites(store: store.identity, notedBefore: cutoff, limit: limit) {
            do {
                let deleted = try removeUnrecordedWrite(key, store: store.identity) { key throws(DeriveError) in
                    try store.delete(try StorageKey(key))
                }
                if deleted { sweep.removed.append(key) }
            } catch {
                sweep.failures.append("\(key): \(error)")
            }
        }
        return sweep
    }
}
