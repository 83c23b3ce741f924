import DeriveLanguage
import DeriveJobs
import Foundation

/// `derive serve`'s records on PostgreSQL (Migrations/0012_served_assets.sql). An upload's row
/// and its eager job are one transaction; a derivative is recorded under a share lock on its
/// asset's row, so an overwrite (which locks the row, moves its version and deletes the older
/// derivatives) cannot interleave with it and leave a derivative of the replaced original.
extension PostgresJobStore: ServedAssets {
    public func recordUpload(_ asset: ServedAsset, overwrite: Bool, eager: (job: NewJob, outputs: [EagerOutput])?, notifications: [OutboxNotification],
                             hold: Double) throws(DeriveError) -> RecordedUpload {
        // The file's name, as `submit` notes it (an index for the jobs search, outside the transaction there too).
        if let eager { try recordOriginalNames([eager.job]) }
        let (existing, eagerJob, ids) = try withConnection { connection throws(PostgresError) -> (Bool, JobID?, [Int64]) in
            try connection.transaction { () throws(PostgresError) -> (Bool, JobID?, [Int64]) in
                let (existing, eagerJob) = try Self.recordUpload(asset, overwrite: overwrite, eager: eager, on: connection)
                guard !existing else { return (true, nil, []) }
                var ids: [Int64] = []
                for notification in notifications {
                    var held = notification
                    if held.type == "eager" { held.jobID = eagerJob }
                    ids.append(try Self.insert(held, after: hold, on: connection))
                }
                return (false, eagerJob, ids)
            }
        }
        guard let stored = try servedAsset(cloud: asset.cloud, publicID: asset.publicID) else {
            throw DeriveError(.databaseUnavailable, "the upload of \(Quoted(asset.publicID)) was recorded and is gone")
        }
        return RecordedUpload(asset: stored, existing: existing, eagerJob: eagerJob, notificationIDs: ids)
    }

    /// The upload's rows and its eager job, inside the caller's transaction: whether the public
    /// id was taken (and kept), and the eager job.
    private static func recordUpload(_ asset: ServedAsset, overwrite: Bool, eager: (job: NewJob, outputs: [EagerOutput])?,
                                     on connection: PostgresConnection) throws(PostgresError) -> (Bool, JobID?) {
        let key: [String?] = [asset.cloud, asset.publicID]
        let values: [String?] = key + [String(asset.version), asset.format, String(asset.bytes), String(asset.width), String(asset.height),
                                       asset.tagsJSON, asset.contextJSON, asset.originalKey, asset.sha256,
                                       String(asset.createdAt.timeIntervalSince1970)]
        let inserted = try connection.query(ServedSQL.insert, values)
        if inserted.rows.isEmpty {
            // Taken: locked until this transaction ends, then kept or replaced.
            _ = try connection.query(ServedSQL.lock, key)
            guard overwrite else { return (true, nil) }
            try connection.query(ServedSQL.replace, values)
            try connection.query(ServedSQL.forgetDerivatives, key)
        }
        guard let eager else { return (false, nil) }
        let record = JSONValue.array([.object([
            "ord": .int(0), "queue": .string(eager.job.queue), "priority": .int(eager.job.priority),
            "run_at": eager.job.runAt.map { .decimal($0.timeIntervalSince1970) } ?? .null, "max_attempts": .int(eager.job.maxAttempts),
            "dedupe_key": eager.job.dedupeKey.map(JSONValue.string) ?? .null, "payload": eager.job.payload,
        ])])
        let rows = try connection.query(SQL.submit, [JSONWriter.compact(record)]).named("a submitted job")
        let id = try PostgresError.decoding { () throws(DeriveError) -> JobID in
            guard let row = rows.first else { throw DeriveError(.databaseUnavailable, "the eager job was not queued") }
            return try row.int64("id")
        }
        let jobs = JSONWriter.compact(.array([EagerJob(jobID: id, outputs: eager.outputs).json]))
        try connection.query(ServedSQL.setEager, key + [jobs])
        return (false, id)
    }

    public func servedAssetGeneration(cloud: String) throws(DeriveError) -> Int64 {
        let row = try withConnection { connection throws(PostgresError) -> DatabaseRow? in
            try connection.query("SELECT generation FROM derive.served_asset_generation WHERE cloud = $1", [cloud]).named("served_asset_generation").first
        }
        return try row?.int64("generation") ?? 0
    }

    public func servedAsset(cloud: String, publicID: String) throws(DeriveError) -> ServedAsset? {
        let found = try withConnection { connection throws(PostgresError) -> (DatabaseRow, [DatabaseRow], [DatabaseRow])? in
            guard let row = try connection.query(ServedSQL.asset, [cloud, publicID]).named("served_assets").first else { return nil }
            return (row, try connection.query(ServedSQL.derivatives, [cloud, publicID]).named("served_derivatives"),
                    try connection.query(ServedSQL.notifications, [cloud, publicID]).named("served_notifications"))
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
        // One row per identity (the statement may not touch a row twice): the last one given.
        let unique = Dictionary(derivatives.map { ($0.identity, $0) }, uniquingKeysWith: { $1 }).values.sorted { $0.identity < $1.identity }
        let records = JSONValue.array(unique.map { derivative in
            .object([
                "identity": .string(derivative.identity), "transformation": .string(derivative.transformation), "format": .string(derivative.format),
                "storage_key": .string(derivative.key), "width": .int(derivative.width), "height": .int(derivative.height),
                "bytes": .int(derivative.bytes), "sha256": .string(derivative.sha256), "job_id": .int(Int(derivative.jobID)),
            ])
        })
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query(ServedSQL.recordDerivatives, [cloud, publicID, String(version), JSONWriter.compact(records)])
        }
        return !rows.rows.isEmpty
    }

    public func recordNotification(_ notification: NotificationRecord, cloud: String, publicID: String) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            try connection.query(ServedSQL.recordNotification, [cloud, publicID, notification.url, notification.type, notification.status.map(String.init),
                                                                String(notification.attempts), notification.error,
                                                                String(notification.sentAt.timeIntervalSince1970)])
        }
    }

    public func recentNotifications(limit: Int) throws(DeriveError) -> [NotificationRecord] {
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query(ServedSQL.recentNotifications, [String(max(0, limit))]).named("served_notifications")
        }
        return try rows.map { row throws(DeriveError) in try NotificationRecord(row: row) }
    }

    // MARK: Outbox

    @discardableResult
    public func queueNotification(_ notification: OutboxNotification) throws(DeriveError) -> Int64 {
        try withConnection { connection throws(PostgresError) in try Self.insert(notification, after: 0, on: connection) }
    }

    /// An outbox row, pending and due `after` seconds from now; its id.
    private static func insert(_ notification: OutboxNotification, after: Double, on connection: PostgresConnection) throws(PostgresError) -> Int64 {
        let rows = try connection.query(ServedSQL.queueNotification, [notification.cloud, notification.publicID, notification.url, notification.type,
                                                                      notification.keyName, notification.body, notification.jobID.map { String($0) },
                                                                      notification.base, String(after)]).named("served_outbox")
        return try PostgresError.decoding { () throws(DeriveError) -> Int64 in try rows.first?.int64("id") ?? 0 }
    }

    public func releaseNotification(id: Int64, body: String?, hold: Double) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            _ = try connection.query(ServedSQL.releaseNotification, [String(id), body, String(hold)])
        }
    }

    public func claimNotifications(limit: Int, lease: Double) throws(DeriveError) -> [OutboxNotification] {
        let rows = try withConnection { connection throws(PostgresError) in
            try connection.query(ServedSQL.claimNotifications, [String(max(0, limit)), String(lease)]).named("served_outbox")
        }
        return try rows.map { row throws(DeriveError) in try OutboxNotification(row: row) }.sorted { $0.id < $1.id }
    }

    public func rescheduleNotification(id: Int64, attempts: Int, at: Date) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            _ = try connection.query(ServedSQL.rescheduleNotification, [String(id), String(attempts), String(at.timeIntervalSince1970)])
        }
    }

    public func finishNotification(id: Int64, record: NotificationRecord) throws(DeriveError) {
        try withConnection { connection throws(PostgresError) in
            _ = try connection.query(ServedSQL.finishNotification, [String(id), record.cloud, record.publicID, record.url, record.type,
                                                                    record.status.map(String.init), String(record.attempts), record.error,
                                                                    String(record.sentAt.timeIntervalSince1970)])
        }
    }
}

enum ServedSQL {
    /// $1 cloud, $2 public id, $3 version ... $12 created_at (Unix seconds). No row back: taken.
    static let insert = """
        INSERT INTO derive.served_assets (cloud, public_id, version, format, bytes, width, height, tags, context, original_key, original_sha256,
                                          created_at)
        VALUES ($1, $2, $3::bigint, $4, $5::bigint, $6::integer, $7::integer, $8::jsonb, $9::jsonb, $10, $11, to_timestamp($12::double precision))
        ON CONFLICT (cloud, public_id) DO NOTHING
        RETURNING version
        """
    static let lock = "SELECT version FROM derive.served_assets WHERE cloud = $1 AND public_id = $2 FOR UPDATE"
    /// The same parameters as `insert`; the version moves above the replaced one's.
    static let replace = """
        UPDATE derive.served_assets SET version = greatest($3::bigint, version + 1), format = $4, bytes = $5::bigint, width = $6::integer,
               height = $7::integer, tags = $8::jsonb, context = $9::jsonb, original_key = $10, original_sha256 = $11,
               created_at = to_timestamp($12::double precision), eager = '[]'
        WHERE cloud = $1 AND public_id = $2
        """
    static let forgetDerivatives = "DELETE FROM derive.served_derivatives WHERE cloud = $1 AND public_id = $2"
    static let setEager = "UPDATE derive.served_assets SET eager = $3::jsonb WHERE cloud = $1 AND public_id = $2"
    /// The asset with the faces recorded for its original (`assets.faces`, Migrations/0005).
    static let asset = """
        SELECT s.cloud, s.public_id, s.version, s.format, s.bytes, s.width, s.height, s.tags, s.context, s.original_key, s.original_sha256,
               s.eager, extract(epoch FROM s.created_at) AS created_at, a.faces
        FROM derive.served_assets s LEFT JOIN derive.assets a ON a.sha256 = s.original_sha256
        WHERE s.cloud = $1 AND s.public_id = $2
        """
    /// The current version's derivatives.
    static let derivatives = """
        SELECT d.identity, d.transformation, d.format, d.storage_key, d.width, d.height, d.bytes, d.sha256, d.job_id
        FROM derive.served_derivatives d JOIN derive.served_assets s ON s.cloud = d.cloud AND s.public_id = d.public_id AND s.version = d.version
        WHERE d.cloud = $1 AND d.public_id = $2
        ORDER BY d.identity
        """
    static let notificationColumns = "cloud, public_id, url, type, status, attempts, error, extract(epoch FROM sent_at) AS sent_at"
    static let notifications = """
        SELECT \(notificationColumns) FROM derive.served_notifications WHERE cloud = $1 AND public_id = $2 ORDER BY id
        """
    static let recentNotifications = "SELECT \(notificationColumns) FROM derive.served_notifications ORDER BY id DESC LIMIT $1::integer"
    /// $9: seconds until it is due (0 at once; an upload's notifications are held until it has answered).
    static let queueNotification = """
        INSERT INTO derive.served_outbox (cloud, public_id, url, type, key_name, body, job_id, base, next_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7::bigint, $8, now() + make_interval(secs => $9::double precision)) RETURNING id
        """
    /// $1 id, $2 the body (NULL keeps the row's), $3 the hold: due now, if still held (due when
    /// its hold runs out, as written in the upload's transaction, whose now() both columns took;
    /// a claim moves it at least a lease past that, a reschedule past an attempt).
    static let releaseNotification = """
        UPDATE derive.served_outbox SET body = coalesce($2, body), next_at = now()
        WHERE id = $1::bigint AND state = 'pending' AND attempts = 0
          AND next_at <= created_at + make_interval(secs => $3::double precision + 0.001)
        """
    /// $1 how many, $2 the lease in seconds: due rows, each moved on by the lease.
    static let claimNotifications = """
        WITH due AS (
            SELECT id FROM derive.served_outbox WHERE state = 'pending' AND next_at <= now()
            ORDER BY next_at, id LIMIT $1::integer FOR UPDATE SKIP LOCKED
        )
        UPDATE derive.served_outbox o SET next_at = now() + make_interval(secs => $2::double precision)
        FROM due WHERE o.id = due.id
        RETURNING o.id, o.cloud, o.public_id, o.url, o.type, o.key_name, o.body, o.job_id, o.base, o.attempts,
                  extract(epoch FROM now()) AS next_at
        """
    static let rescheduleNotification = """
        UPDATE derive.served_outbox SET attempts = $2::integer, next_at = to_timestamp($3::double precision)
        WHERE id = $1::bigint AND state = 'pending'
        """
    /// Done and recorded in one statement; a row already done records nothing.
    static let finishNotification = """
        WITH done AS (
            UPDATE derive.served_outbox SET state = 'done', attempts = $7::integer WHERE id = $1::bigint AND state = 'pending' RETURNING id
        )
        INSERT INTO derive.served_notifications (cloud, public_id, url, type, status, attempts, error, sent_at)
        SELECT $2, $3, $4, $5, $6::integer, $7::integer, $8, to_timestamp($9::double precision) FROM done
        """
    static let recordNotification = """
        INSERT INTO derive.served_notifications (cloud, public_id, url, type, status, attempts, error, sent_at)
        VALUES ($1, $2, $3, $4, $5::integer, $6::integer, $7, to_timestamp($8::double precision))
        """
    /// $1 cloud, $2 public id, $3 version, $4 the derivatives as a JSON array. Only while the
    /// asset has that version: the share lock waits for an overwrite in progress and then sees
    /// its new version. A row back per derivative recorded.
    static let recordDerivatives = """
        INSERT INTO derive.served_derivatives (cloud, public_id, version, identity, transformation, format, storage_key, width, height, bytes,
                                               sha256, job_id)
        SELECT $1, $2, $3::bigint, d.identity, d.transformation, d.format, d.storage_key, d.width, d.height, d.bytes, d.sha256, d.job_id
        FROM jsonb_to_recordset($4::jsonb) AS d(identity text, transformation text, format text, storage_key text, width integer, height integer,
                                               bytes bigint, sha256 text, job_id bigint)
        WHERE EXISTS (SELECT 1 FROM derive.served_assets s WHERE s.cloud = $1 AND s.public_id = $2 AND s.version = $3::bigint FOR SHARE)
        ON CONFLICT (cloud, public_id, identity) DO UPDATE
            SET version = excluded.version, transformation = excluded.transformation, format = excluded.format,
                storage_key = excluded.storage_key, width = excluded.width, height = excluded.height, bytes = excluded.bytes,
                sha256 = excluded.sha256, job_id = excluded.job_id, created_at = now()
        RETURNING identity
        """
}
