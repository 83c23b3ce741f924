import DeriveLanguage
import DeriveJobs
import Foundation

/// `derive serve`'s records on SQLite. Each change is one write transaction, which holds the
/// file's one write lock: an upload's row and its eager job commit together, and a derivative
/// recorded at the same time as an overwrite lands either before it (and is deleted with the
/// replaced version's) or after it (and is refused for its old version).
extension SQLiteJobStore: ServedAssets {
    public func recordUpload(_ asset: ServedAsset, overwrite: Bool, eager: (job: NewJob, outputs: [EagerOutput])?, notifications: [OutboxNotification],
                             hold: Double) throws(DeriveError) -> RecordedUpload {
        let (existing, eagerJob, ids) = try write { connection, now throws(SQLiteError) -> (Bool, JobID?, [Int64]) in
            let (existing, eagerJob) = try Self.recordUpload(asset, overwrite: overwrite, eager: eager, on: connection, at: now)
            guard !existing else { return (true, nil, []) }
            var ids: [Int64] = []
            for notification in notifications {
                var held = notification
                if held.type == "eager" { held.jobID = eagerJob }
                ids.append(try Self.insert(held, dueAt: now + hold, on: connection, at: now))
            }
            return (false, eagerJob, ids)
        }
        guard let stored = try servedAsset(cloud: asset.cloud, publicID: asset.publicID) else {
            throw DeriveError(.databaseUnavailable, "the upload of \(Quoted(asset.publicID)) was recorded and is gone")
        }
        return RecordedUpload(asset: stored, existing: existing, eagerJob: eagerJob, notificationIDs: ids)
    }

    /// The upload's rows and its eager job, inside the caller's transaction: whether the public
    /// id was taken (and kept), and the eager job.
    private static func recordUpload(_ asset: ServedAsset, overwrite: Bool, eager: (job: NewJob, outputs: [EagerOutput])?, on connection: SQLiteConnection,
                                     at now: Double) throws(SQLiteError) -> (Bool, JobID?) {
        let key = [SQLiteValue(asset.cloud), SQLiteValue(asset.publicID)]
        let values = key + [SQLiteValue(asset.version), SQLiteValue(asset.format), SQLiteValue(asset.bytes), SQLiteValue(asset.width),
                            SQLiteValue(asset.height), SQLiteValue(asset.tagsJSON), SQLiteValue(asset.contextJSON), SQLiteValue(asset.originalKey),
                            SQLiteValue(asset.sha256), SQLiteValue(asset.createdAt)]
        try connection.query("""
            INSERT INTO served_assets (cloud, public_id, version, format, bytes, width, height, tags, context, original_key, original_sha256,
                                       created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (cloud, public_id) DO NOTHING
            """, values)
        if connection.changes == 0 {
            guard overwrite else { return (true, nil) }
            try connection.query("""
                UPDATE served_assets SET version = max(?3, version + 1), format = ?4, bytes = ?5, width = ?6, height = ?7, tags = ?8,
                       context = ?9, original_key = ?10, original_sha256 = ?11, created_at = ?12, eager = '[]'
                WHERE cloud = ?1 AND public_id = ?2
                """, values)
            try connection.query("DELETE FROM served_derivatives WHERE cloud = ? AND public_id = ?", key)
        }
        guard let eager else { return (false, nil) }
        // The queue's own insert (and the file's name, as `submit` notes it), inside this transaction.
        for (source, name) in OriginalName.pairs([eager.job]) {
            try connection.query("INSERT INTO original_names (source, name, noted_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                                 [SQLiteValue(source), SQLiteValue(name), SQLiteValue(now)])
        }
        let id = try Self.insert(eager.job, at: now, on: connection).id
        try connection.query("UPDATE served_assets SET eager = ?3 WHERE cloud = ?1 AND public_id = ?2",
                             key + [SQLiteValue(JSONWriter.compact(.array([EagerJob(jobID: id, outputs: eager.outputs).json])))])
        return (false, id)
    }

    public func servedAssetGeneration(cloud: String) throws(DeriveError) -> Int64 {
        let row = try read { connection throws(SQLiteError) -> DatabaseRow? in
            try connection.rows("SELECT generation FROM served_asset_generation WHERE cloud = ?", [SQLiteValue(cloud)], source: "served_asset_generation").first
        }
        return try row?.int64("generation") ?? 0
    }

    public func servedAsset(cloud: String, publicID: String) throws(DeriveError) -> ServedAsset? {
        let key = [SQLiteValue(cloud), SQLiteValue(publicID)]
        let found = try read { connection throws(SQLiteError) -> (DatabaseRow, [DatabaseRow], [DatabaseRow])? in
            guard let row = try connection.rows("""
                SELECT s.cloud, s.public_id, s.version, s.format, s.bytes, s.width, s.height, s.tags, s.context, s.original_key, s.original_sha256,
                       s.eager, s.created_at, a.faces
                FROM served_assets s LEFT JOIN assets a ON a.sha256 = s.original_sha256
                WHERE s.cloud = ? AND s.public_id = ?
                """, key, source: "served_assets").first else { return nil }
            let derivatives = try connection.rows("""
                SELECT d.identity, d.transformation, d.format, d.storage_key, d.width, d.height, d.bytes, d.sha256, d.job_id
                FROM served_derivatives d JOIN served_assets s ON s.cloud = d.cloud AND s.public_id = d.public_id AND s.version = d.version
                WHERE d.cloud = ? AND d.public_id = ?
                ORDER BY d.identity
                """, key, source: "served_derivatives")
            let notifications = try connection.rows("""
                SELECT \(Self.notificationColumns) FROM served_notifications WHERE cloud = ? AND public_id = ? ORDER BY id
                """, key, source: "served_notifications")
            return (row, derivatives, notifications)
        }
        guard let (row, derivatives, notifications) = found else { return nil }
        var asset = try ServedAsset(row: row)
        for row in derivatives {
            let derivative = try ServedDerivative(row: row)
            asset.derivatives[derivative.identity] = derivative
        }
        asset.notifications = try notifications.map { row throws(DeriveError) in try NotificationRecord(row: row) }
        return asset
    }

    @discardableResult
    public func recordDerivatives(_ derivatives: [ServedDerivative], cloud: String, publicID: String, version: Int) throws(DeriveError) -> Bool {
        guard !derivatives.isEmpty else { return true }
        return try write { connection, now throws(SQLiteError) -> Bool in
            let current = try connection.query("SELECT version FROM served_assets WHERE cloud = ? AND public_id = ?",
                                               [SQLiteValue(cloud), SQLiteValue(publicID)]).first?.first?.int
            guard current == version else { return false }
            for derivative in derivatives {
                try connection.query("""
                    INSERT INTO served_derivatives (cloud, public_id, version, identity, transformation, format, storage_key, width, height, bytes,
                                                    sha256, job_id, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (cloud, public_id, identity) DO UPDATE
                        SET version = excluded.version, transformation = excluded.transformation, format = excluded.format,
                            storage_key = excluded.storage_key, width = excluded.width, height = excluded.height, bytes = excluded.bytes,
                            sha256 = excluded.sha256, job_id = excluded.job_id, created_at = excluded.created_at
                    """, [SQLiteValue(cloud), SQLiteValue(publicID), SQLiteValue(version), SQLiteValue(derivative.identity),
                          SQLiteValue(derivative.transformation), SQLiteValue(derivative.format), SQLiteValue(derivative.key),
                          SQLiteValue(derivative.width), SQLiteValue(derivative.height), SQLiteValue(derivative.bytes),
                          SQLiteValue(derivative.sha256), SQLiteValue(derivative.jobID), SQLiteValue(now)])
            }
            return true
        }
    }

    public func recordNotification(_ notification: NotificationRecord, cloud: String, publicID: String) throws(DeriveError) {
        try write { connection, _ throws(SQLiteError) in
            try connection.query("""
                INSERT INTO served_notifications (cloud, public_id, url, type, status, attempts, error, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [SQLiteValue(cloud), SQLiteValue(publicID), SQLiteValue(notification.url), SQLiteValue(notification.type),
                      notification.status.map { SQLiteValue($0) } ?? .null, SQLiteValue(notification.attempts), SQLiteValue(notification.error),
                      SQLiteValue(notification.sentAt)])
        }
    }

    public func recentNotifications(limit: Int) throws(DeriveError) -> [NotificationRecord] {
        let rows = try read { connection throws(SQLiteError) in
            try connection.rows("SELECT \(Self.notificationColumns) FROM served_notifications ORDER BY id DESC LIMIT ?", [SQLiteValue(max(0, limit))],
                                source: "served_notifications")
        }
        return try rows.map { row throws(DeriveError) in try NotificationRecord(row: row) }
    }

    static let notificationColumns = "cloud, public_id, url, type, status, attempts, error, sent_at"

    // MARK: Outbox

    @discardableResult
    public func queueNotification(_ notification: OutboxNotification) throws(DeriveError) -> Int64 {
        try write { connection, now throws(SQLiteError) -> Int64 in try Self.insert(notification, dueAt: now, on: connection, at: now) }
    }

    /// An outbox row, pending and due at `dueAt`; its id.
    private static func insert(_ notification: OutboxNotification, dueAt: Double, on connection: SQLiteConnection, at now: Double) throws(SQLiteError) -> Int64 {
        let rows = try connection.query("""
            INSERT INTO served_outbox (cloud, public_id, url, type, key_name, body, job_id, base, attempts, next_at, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) RETURNING id
            """, [SQLiteValue(notification.cloud), SQLiteValue(notification.publicID), SQLiteValue(notification.url),
                  SQLiteValue(notification.type), SQLiteValue(notification.keyName), SQLiteValue(notification.body),
                  notification.jobID.map { SQLiteValue($0) } ?? .null, SQLiteValue(notification.base), SQLiteValue(dueAt), SQLiteValue(now)])
        if case .integer(let id)? = rows.first?.first { return id }
        return 0
    }

    public func releaseNotification(id: Int64, body: String?, hold: Double) throws(DeriveError) {
        // Still held: due when its hold runs out, as written (a claim moves it at least a
        // lease past that, a reschedule past an attempt).
        try write { connection, now throws(SQLiteError) in
            _ = try connection.query("""
                UPDATE served_outbox SET body = coalesce(?, body), next_at = ?
                WHERE id = ? AND state = 'pending' AND attempts = 0 AND next_at <= created_at + ? + 0.001
                """, [SQLiteValue(body), SQLiteValue(now), SQLiteValue(id), SQLiteValue(hold)])
        }
    }

    public func claimNotifications(limit: Int, lease: Double) throws(DeriveError) -> [OutboxNotification] {
        // One write transaction: a second claimer waits for it, then finds the rows leased.
        let rows = try write { connection, now throws(SQLiteError) -> [DatabaseRow] in
            try connection.rows("""
                UPDATE served_outbox SET next_at = ? WHERE id IN (
                    SELECT id FROM served_outbox WHERE state = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?)
                RETURNING \(OutboxNotification.columns), ? AS next_at
                """, [SQLiteValue(now + lease), SQLiteValue(now), SQLiteValue(max(0, limit)), SQLiteValue(now)], source: "served_outbox")
        }
        return try rows.map { row throws(DeriveError) in try OutboxNotification(row: row) }.sorted { $0.id < $1.id }
    }

    public func rescheduleNotification(id: Int64, attempts: Int, at: Date) throws(DeriveError) {
        try write { connection, _ throws(SQLiteError) in
            _ = try connection.query("UPDATE served_outbox SET attempts = ?, next_at = ? WHERE id = ? AND state = 'pending'",
                                     [SQLiteValue(attempts), SQLiteValue(at), SQLiteValue(id)])
        }
    }

    public func finishNotification(id: Int64, record: NotificationRecord) throws(DeriveError) {
        try write { connection, _ throws(SQLiteError) in
            let done = try connection.query("UPDATE served_outbox SET state = 'done', attempts = ? WHERE id = ? AND state = 'pending' RETURNING id",
                                            [SQLiteValue(record.attempts), SQLiteValue(id)])
            guard !done.isEmpty else { return }
            _ = try connection.query("""
                INSERT INTO served_notifications (cloud, public_id, url, type, status, attempts, error, sent_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [SQLiteValue(record.cloud), SQLiteValue(record.publicID), SQLiteValue(record.url), SQLiteValue(record.type),
                      record.status.map { SQLiteValue($0) } ?? .null, SQLiteValue(record.attempts), SQLiteValue(record.error),
                      SQLiteValue(record.sentAt)])
        }
    }
}
