import DeriveLanguage
import DeriveJobs
import Foundation

/// Pausing queues, deleting finished jobs and the names uploads were stored from: the
/// operator's controls over the queue. A pause is a row of `derive.paused_queues`, which
/// `derive.claim` reads (migration 0010), so it holds for every worker on every machine from
/// their next claim.
extension PostgresJobStore {
    public func originalNames(of sources: [String]) throws(DeriveError) -> [String: [String]] {
        guard !sources.isEmpty else { return [:] }
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query("SELECT source, name FROM derive.original_names WHERE source = ANY($1::text[]) ORDER BY source, name",
                                 [PostgresArray.literal(sources)]).named("derive.original_names")
        }
        var names: [String: [String]] = [:]
        for row in rows { names[try row.string("source"), default: []].append(try row.string("name")) }
        return names
    }

    /// Records the names uploads were stored from, before their jobs go in (a name without its
    /// job, if the submit then fails, names an original that is stored all the same).
    func recordOriginalNames(_ jobs: [NewJob]) throws(DeriveError) {
        let pairs = OriginalName.pairs(jobs)
        guard !pairs.isEmpty else { return }
        let records = JSONValue.array(pairs.map { .object(["source": .string($0.source), "name": .string($0.name)]) })
        try withConnection { connection throws(PostgresError) in
            try connection.query("""
                INSERT INTO derive.original_names (source, name)
                SELECT source, name FROM jsonb_to_recordset($1::jsonb) AS r(source text, name text) ON CONFLICT DO NOTHING
                """, [JSONWriter.compact(records)])
        }
    }

    public func pause(queue: String, by who: String) throws(DeriveError) -> Bool {
        try PausedQueue.validate(queue)
        return try withConnection { connection throws(PostgresError) in
            let rows = try connection.query("""
                INSERT INTO derive.paused_queues (queue, paused_by) VALUES ($1, $2) ON CONFLICT (queue) DO NOTHING RETURNING queue
                """, [queue, PausedQueue.by(who)])
            return !rows.rows.isEmpty
        }
    }

    public func resume(queue: String) throws(DeriveError) -> Bool {
        try withConnection { connection throws(PostgresError) in
            !(try connection.query("DELETE FROM derive.paused_queues WHERE queue = $1 RETURNING queue", [queue]).rows.isEmpty)
        }
    }

    public func pausedQueues() throws(DeriveError) -> [PausedQueue] {
        try withConnection { connection throws(PostgresError) in
            let rows = try connection.query("""
                SELECT queue, extract(epoch FROM paused_at)::double precision AS paused_at, paused_by FROM derive.paused_queues ORDER BY queue
                """).named("derive.paused_queues")
            return try PostgresError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try PausedQueue(row: row) } }
        }
    }

    public func deleteFinished(_ ids: [JobID]) throws(DeriveError) -> Set<JobID> {
        guard !ids.isEmpty else { return [] }
        return try withConnection { connection throws(PostgresError) in
            try Self.ids(try connection.query("DELETE FROM derive.job_archive WHERE id = ANY($1::bigint[]) RETURNING id",
                                              ["{" + ids.map(String.init).joined(separator: ",") + "}"]))
        }
    }
}
