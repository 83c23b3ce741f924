import DeriveLanguage
import Foundation

/// What `derive serve` keeps of the assets uploaded through Cloudinary's API: one row per
/// public id (its version, original, tags, context and eager jobs), one row per derivative, one
/// row per notification sent. Rows, not a document per asset, so two processes recording
/// derivatives of one asset at once each add their own (Migrations/0012_served_assets.sql).
/// Every `derive serve` and `derive work` sharing the database sees them.
public protocol ServedAssets: Sendable {
    /// Records an upload and queues its eager job in one transaction, so that neither is kept
    /// without the other (a process killed in between leaves neither). When `asset.publicID`
    /// is already recorded and `overwrite` is false, nothing changes and the existing asset is
    /// returned with `existing` set; an overwrite takes a version above the replaced one's and
    /// forgets the replaced original's derivatives and eager jobs. `eager` names the outputs
    /// of `job` (each output's transformation, extension and identity).
    ///
    /// `notifications` go into the outbox in the same transaction, held: due `hold` seconds
    /// later, so that the process can answer first and then `releaseNotification` each with
    /// its final body. One whose process dies before releasing it is sent when the hold runs
    /// out (an upload's body then made from the asset's record). A notification of type
    /// `eager` waits for the eager job queued here. Their ids are in `notificationIDs`.
    func recordUpload(_ asset: ServedAsset, overwrite: Bool, eager: (job: NewJob, outputs: [EagerOutput])?, notifications: [OutboxNotification],
                      hold: Double) throws(DeriveError) -> RecordedUpload

    /// The asset with its derivatives, eager jobs and notifications, and the faces a job found
    /// in its original (nil until one looked); nil for a public id not recorded.
    func servedAsset(cloud: String, publicID: String) throws(DeriveError) -> ServedAsset?

    /// A number that moves on whenever something `derive serve` may have delivered for `cloud`
    /// changes (an asset overwritten, renamed or deleted, a derivative replaced or deleted),
    /// whichever process changed it: a server drops the responses it keeps in memory when it
    /// moves. 0 before the first change.
    func servedAssetGeneration(cloud: String) throws(DeriveError) -> Int64

    /// Adds (or replaces, by identity) derivatives of the asset's `version`; a version the
    /// asset no longer has (overwritten meanwhile) records nothing. Returns whether they were
    /// recorded. Concurrent callers each keep their own.
    @discardableResult
    func recordDerivatives(_ derivatives: [ServedDerivative], cloud: String, publicID: String, version: Int) throws(DeriveError) -> Bool

    /// Keeps a notification sent about an asset (kept when the asset is overwritten).
    func recordNotification(_ notification: NotificationRecord, cloud: String, publicID: String) throws(DeriveError)

    /// The newest notifications of every asset, newest first (the dashboard's webhooks page).
    func recentNotifications(limit: Int) throws(DeriveError) -> [NotificationRecord]

    /// Makes a notification held `hold` seconds with its upload due now, with `body` when
    /// given. A row no longer held (sent, or claimed by a sender once the hold ran out, the
    /// process having stalled past it) is left to that sender, so it is never sent twice.
    func releaseNotification(id: Int64, body: String?, hold: Double) throws(DeriveError)

    /// Puts a notification in the outbox, pending and due at once; returns its id.
    @discardableResult
    func queueNotification(_ notification: OutboxNotification) throws(DeriveError) -> Int64

    /// Takes up to `limit` pending notifications that are due, oldest due first, and moves each
    /// one's next attempt `lease` seconds on, so no other claimer takes it meanwhile (a sender
    /// that dies holding it leaves it due again when the lease runs out).
    func claimNotifications(limit: Int, lease: Double) throws(DeriveError) -> [OutboxNotification]

    /// Leaves a pending notification for a later attempt: `attempts` made so far, due at `at`.
    func rescheduleNotification(id: Int64, attempts: Int, at: Date) throws(DeriveError)

    /// Marks a notification done (sent or given up) and keeps its record, in one transaction.
    func finishNotification(id: Int64, record: NotificationRecord) throws(DeriveError)
}

/// A notification in `derive serve`'s outbox, kept until it is sent or given up, so one
/// pending when serve stops is sent by the next serve process.
public struct OutboxNotification: Sendable, Equatable {
    /// Assigned by the store (ignored by `queueNotification`).
    public var id: Int64
    public var cloud: String
    public var publicID: String
    /// The target, in full (it is what is posted to).
    public var url: String
    /// `upload` or `eager`.
    public var type: String
    /// The API key whose secret signs it (the secret is looked up when sending).
    public var keyName: String
    /// The JSON object to send, without `notification_type` and `timestamp`; nil for an
    /// `eager` one, whose body is made when its job ends.
    public var body: String?
    /// For an `eager` one: the job it waits for, and the base of the asset's URLs.
    public var jobID: JobID?
    public var base: String?
    public var attempts: Int
    public var nextAt: Date

    public init(id: Int64 = 0, cloud: String, publicID: String, url: String, type: String, keyName: String, body: String?, jobID: JobID?,
                base: String?, attempts: Int = 0, nextAt: Date = Date(timeIntervalSince1970: 0)) {
        self.id = id
        self.cloud = cloud
        self.publicID = publicID
        self.url = url
        self.type = type
        self.keyName = keyName
        self.body = body
        self.jobID = jobID
        self.base = base
        self.attempts = attempts
        self.nextAt = nextAt
    }
}

extension OutboxNotification {
    /// The columns `derive serve`'s stores read an outbox row from.
    public static let columns = "id, cloud, public_id, url, type, key_name, body, job_id, base, attempts"

    /// An outbox row (`columns` and `next_at`).
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(id: try row.int64("id"), cloud: try row.string("cloud"), publicID: try row.string("public_id"), url: try row.string("url"),
                  type: try row.string("type"), keyName: try row.string("key_name"), body: try row.optionalString("body"),
                  jobID: try row.optionalInt("job_id").map(JobID.init), base: try row.optionalString("base"), attempts: try row.int("attempts"),
                  nextAt: try row.date("next_at"))
    }
}

/// An uploaded asset as the Cloudinary API knows it: its public id, version and original, and
/// the derivatives made of it so far, each under the canonical identity of its transformation
/// (so `w_100,c_fill` and `c_fill,w_100` are one derivative).
public struct ServedAsset: Sendable, Equatable {
    public var cloud: String
    public var publicID: String
    public var version: Int
    public var format: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    /// The original's SHA-256 and its key in the store.
    public var sha256: String
    public var originalKey: String
    public var createdAt: Date
    public var tags: [String]
    public var context: [String: String]
    /// By identity.
    public var derivatives: [String: ServedDerivative]
    /// Jobs of this version's eager outputs, with the transformation each output is.
    public var eagerJobs: [EagerJob]
    /// Notifications sent about it, oldest first.
    public var notifications: [NotificationRecord]
    /// What a job's face detection found in the original (the `assets` row of its SHA-256);
    /// nil until a job looked.
    public var faces: FaceFindings?

    public init(cloud: String, publicID: String, version: Int, format: String, width: Int, height: Int, bytes: Int, sha256: String,
                originalKey: String, createdAt: Date, tags: [String] = [], context: [String: String] = [:],
                derivatives: [String: ServedDerivative] = [:], eagerJobs: [EagerJob] = [], notifications: [NotificationRecord] = [],
                faces: FaceFindings? = nil) {
        self.cloud = cloud
        self.publicID = publicID
        self.version = version
        self.format = format
        self.width = width
        self.height = height
        self.bytes = bytes
        self.sha256 = sha256
        self.originalKey = originalKey
        self.createdAt = createdAt
        self.tags = tags
        self.context = context
        self.derivatives = derivatives
        self.eagerJobs = eagerJobs
        self.notifications = notifications
        self.faces = faces
    }
}

public struct ServedDerivative: Sendable, Equatable {
    /// The canonical form's hash (what makes two spellings one derivative).
    public var identity: String
    /// The transformation as the client wrote it (the URL's path segment or the eager string).
    public var transformation: String
    public var format: String
    public var key: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    public var sha256: String
    public var jobID: JobID

    public init(identity: String, transformation: String, format: String, key: String, width: Int, height: Int, bytes: Int, sha256: String,
                jobID: JobID) {
        self.identity = identity
        self.transformation = transformation
        self.format = format
        self.key = key
        self.width = width
        self.height = height
        self.bytes = bytes
        self.sha256 = sha256
        self.jobID = jobID
    }
}

public struct EagerJob: Sendable, Equatable {
    public var jobID: JobID
    /// Each output's transformation and extension, in the job's output order.
    public var outputs: [EagerOutput]

    public init(jobID: JobID, outputs: [EagerOutput]) {
        self.jobID = jobID
        self.outputs = outputs
    }

    /// `{"job_id": 7, "outputs": [{"transformation": ..., "format": ..., "identity": ...}]}`.
    public var json: JSONValue {
        .object(["job_id": .int(Int(jobID)), "outputs": .array(outputs.map { output in
            .object(["transformation": .string(output.transformation), "format": .string(output.format), "identity": .string(output.identity)])
        })])
    }

    public init(json: JSONValue) throws(DeriveError) {
        guard case .number(let id)? = json["job_id"], let jobID = id.intValue, case .array(let items)? = json["outputs"] else {
            throw DeriveError(.internalError, "a served asset's eager job is not {job_id, outputs}", retryable: false)
        }
        var outputs: [EagerOutput] = []
        for item in items {
            guard case .string(let transformation)? = item["transformation"], case .string(let format)? = item["format"],
                  case .string(let identity)? = item["identity"] else {
                throw DeriveError(.internalError, "a served asset's eager output is not {transformation, format, identity}", retryable: false)
            }
            outputs.append(EagerOutput(transformation: transformation, format: format, identity: identity))
        }
        self.init(jobID: JobID(jobID), outputs: outputs)
    }
}

public struct EagerOutput: Sendable, Equatable {
    public var transformation: String
    public var format: String
    public var identity: String

    public init(transformation: String, format: String, identity: String) {
        self.transformation = transformation
        self.format = format
        self.identity = identity
    }
}

/// A notification sent (or given up on) about an asset.
public struct NotificationRecord: Sendable, Equatable {
    public var cloud: String
    public var publicID: String
    /// The target, its credentials and query redacted.
    public var url: String
    /// `upload` or `eager`.
    public var type: String
    /// The last answer's HTTP status; nil when none came (refused, unreachable).
    public var status: Int?
    public var attempts: Int
    public var error: String?
    /// When the last attempt ended.
    public var sentAt: Date

    public init(cloud: String, publicID: String, url: String, type: String, status: Int?, attempts: Int, error: String?, sentAt: Date) {
        self.cloud = cloud
        self.publicID = publicID
        self.url = url
        self.type = type
        self.status = status
        self.attempts = attempts
        self.error = error
        self.sentAt = sentAt
    }

    /// Whether the target answered 2xx.
    public var delivered: Bool { status.map { (200..<300).contains($0) } ?? false }
}

/// What `recordUpload` did.
public struct RecordedUpload: Sendable, Equatable {
    /// The asset as recorded (its version may be above the one asked for), or the existing one.
    public var asset: ServedAsset
    /// The public id was taken and `overwrite` was false: nothing was recorded or queued.
    public var existing: Bool
    /// The eager job queued with it.
    public var eagerJob: JobID?
    /// The outbox rows written with it, in the order the notifications were given (none when
    /// `existing`).
    public var notificationIDs: [Int64]

    public init(asset: ServedAsset, existing: Bool, eagerJob: JobID?, notificationIDs: [Int64] = []) {
        self.asset = asset
        self.existing = existing
        self.eagerJob = eagerJob
        self.notificationIDs = notificationIDs
    }
}

extension ServedAssets {
    /// An upload with no notification to send.
    public func recordUpload(_ asset: ServedAsset, overwrite: Bool, eager: (job: NewJob, outputs: [EagerOutput])?) throws(DeriveError) -> RecordedUpload {
        try recordUpload(asset, overwrite: overwrite, eager: eager, notifications: [], hold: 0)
    }
}

extension ServedAsset {
    /// The row's `tags` and `context` columns as stored: a JSON array and a JSON object.
    public var tagsJSON: String { JSONWriter.compact(.array(tags.map(JSONValue.string))) }
    public var contextJSON: String {
        JSONWriter.compact(.object(context.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) }))
    }
    public var eagerJSON: String { JSONWriter.compact(.array(eagerJobs.map(\.json))) }

    /// An asset from its row (`cloud, public_id, version, format, width, height, bytes,
    /// original_sha256, original_key, created_at, tags, context, eager`, and `faces` when a job
    /// looked), before its derivatives and notifications are added.
    public init(row: DatabaseRow) throws(DeriveError) {
        var tags: [String] = []
        if case .array(let items) = try row.json("tags") {
            for item in items { if case .string(let tag) = item { tags.append(tag) } }
        }
        var context: [String: String] = [:]
        if case .object(let members) = try row.json("context") {
            for member in members { if case .string(let value) = member.value { context[member.key] = value } }
        }
        var eager: [EagerJob] = []
        if case .array(let items) = try row.json("eager") {
            for item in items { eager.append(try EagerJob(json: item)) }
        }
        self.init(cloud: try row.string("cloud"), publicID: try row.string("public_id"), version: try row.int("version"),
                  format: try row.string("format"), width: try row.int("width"), height: try row.int("height"), bytes: try row.int("bytes"),
                  sha256: try row.string("original_sha256"), originalKey: try row.string("original_key"), createdAt: try row.date("created_at"),
                  tags: tags, context: context, eagerJobs: eager,
                  faces: try row.optionalJSON("faces").map { json throws(DeriveError) in try FaceFindings(json: json) })
    }
}

extension ServedDerivative {
    /// A derivative from its row (`identity, transformation, format, storage_key, width,
    /// height, bytes, sha256, job_id`).
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(identity: try row.string("identity"), transformation: try row.string("transformation"), format: try row.string("format"),
                  key: try row.string("storage_key"), width: try row.int("width"), height: try row.int("height"), bytes: try row.int("bytes"),
                  sha256: try row.string("sha256"), jobID: try row.int64("job_id"))
    }
}

extension NotificationRecord {
    /// A notification from its row (`cloud, public_id, url, type, status, attempts, error, sent_at`).
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(cloud: try row.string("cloud"), publicID: try row.string("public_id"), url: try row.string("url"), type: try row.string("type"),
                  status: try row.optionalInt("status"), attempts: try row.int("attempts"), error: try row.optionalString("error"),
                  sentAt: try row.date("sent_at"))
    }
}
