import DeriveLanguage
import DeriveJobs
import Foundation

/// Pausing queues, deleting finished jobs and the names uploads were stored from: the
/// operator's controls over the queue.
extension SQLiteJobStore {
    public func originalNames(of sources: [String]) throws(DeriveError) -> [String: [String]] {
        guard !sources.isEmpty else { return [:] }
        let list = JSONWriter.compact(.array(sources.map(JSONValue.string)))
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("SELECT source, name FROM original_names WHERE source IN (SELECT value FROM json_each(?)) ORDER BY source, name",
                                [SQLiteValue(list)], source: "original_names")
        }
        var names: [String: [String]] = [:]
        for row in rows { names[try row.string("source"), default: []].append(try row.string("name")) }
        return names
    }

    public func pause(queue: String, by who: String) throws(DeriveError) -> Bool {
        try PausedQueue.validate(queue)
        return try write { connection, now throws(SQLiteError) in
            try connection.query("INSERT INTO paused_queues (queue, paused_at, paused_by) VALUES (?, ?, ?) ON CONFLICT (queue) DO NOTHING",
                                 [SQLiteValue(queue), SQLiteValue(now), SQLiteValue(PausedQueue.by(who))])
            return connection.changes > 0
        }
    }

    public func resume(queue: String) throws(DeriveError) -> Bool {
        try write { connection, _ throws(SQLiteError) in
            try connection.query("DELETE FROM paused_queues WHERE queue = ?", [SQLiteValue(queue)])
            return connection.changes > 0
        }
    }

    public func pausedQueues() throws(DeriveError) -> [PausedQueue] {
        try read { connection throws(SQLiteError) in
            let rows = try connection.rows("SELECT queue, paused_at, paused_by FROM paused_queues ORDER BY queue", source: "paused_queues")
            return try SQLiteError.decoding { () throws(DeriveError) in try rows.map { row throws(DeriveError) in try PausedQueue(row: row) } }
        }
    }

    public func deleteFinished(_ ids: [JobID]) throws(DeriveError) -> Set<JobID> {
        guard !ids.isEmpty else { return [] }
        let list = JSONWriter.compact(.array(ids.map { .int(Int($0)) }))
        return try write { connection, _ throws(SQLiteError) in
            let rows = try connection.rows("DELETE FROM job_archive WHERE id IN (SELECT value FROM json_each(?)) RETURNING id",
                                           [SQLiteValue(list)], source: "job_archive")
            return try SQLiteError.decoding { () throws(DeriveError) in Set(try rows.map { row throws(DeriveError) in try row.int64("id") }) }
        }
    }
}
