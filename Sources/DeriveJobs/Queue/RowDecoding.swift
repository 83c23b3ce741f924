import DeriveLanguage
import Foundation

// What each row of the queue's tables becomes, decoded by column name once for both stores:
// PostgreSQL and SQLite differ in their SQL text (which returns these names, times as Unix
// seconds and JSON as text), not in how they read what it returns.

extension ClaimedJob {
    /// Columns: id, attempt, queue, priority, max_attempts, payload, run_at, lease_expires_at, created_at.
    public init(row: DatabaseRow, owner: String) throws(DeriveError) {
        self.init(run: JobRun(id: try row.int64("id"), attempt: try row.int("attempt"), owner: owner), queue: try row.string("queue"),
                  priority: try row.int("priority"), maxAttempts: try row.int("max_attempts"), payload: try row.json("payload"),
                  runAt: try row.date("run_at"), leaseExpiresAt: try row.date("lease_expires_at"), createdAt: try row.date("created_at"))
    }
}

extension JobSnapshot {
    /// Columns: id, queue, state, priority, attempt, max_attempts, run_at, lease_owner, dedupe_key,
    /// cancel_requested, payload, errors, result, created_at, finished_at, lease_expires_at,
    /// started_at, worker (live jobs and archived ones alike; what one of them lacks is NULL).
    public init(row: DatabaseRow) throws(DeriveError) {
        guard case .array(let errors) = try row.json("errors") else {
            throw DeriveError(.internalError, "\(row.source).errors is not a JSON array", retryable: false)
        }
        self.init(id: try row.int64("id"), queue: try row.string("queue"), state: try row.value("state", as: JobState.self),
                  priority: try row.int("priority"), attempt: try row.int("attempt"), maxAttempts: try row.int("max_attempts"),
                  runAt: try row.optionalDate("run_at"), leaseOwner: try row.optionalString("lease_owner"),
                  dedupeKey: try row.optionalString("dedupe_key"), cancelRequested: try row.bool("cancel_requested"),
                  payload: try row.json("payload"), errors: errors, result: try row.optionalJSON("result"),
                  createdAt: try row.date("created_at"), finishedAt: try row.optionalDate("finished_at"),
                  leaseExpiresAt: try row.optionalDate("lease_expires_at"), startedAt: try row.optionalDate("started_at"),
                  worker: try row.optionalString("worker"))
    }
}

extension EndedRun {
    /// Columns: id, attempt, max_attempts, lease_losses, cancel_requested.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(id: try row.int64("id"), attempt: try row.int("attempt"), maxAttempts: try row.int("max_attempts"),
                  leaseLosses: try row.int("lease_losses"), cancelRequested: try row.bool("cancel_requested"))
    }
}

extension ExpiredLease {
    /// Columns: those of `EndedRun`, lease_owner, lease_expires_at, and seen_at (the owner's
    /// last status report, NULL when the workers table has no row for it).
    public init(row: DatabaseRow) throws(DeriveError) {
        let seenAt = try row.isNull("seen_at") ? nil : try row.double("seen_at")
        let expiresAt = try row.isNull("lease_expires_at") ? nil : try row.double("lease_expires_at")
        self.init(run: try EndedRun(row: row), owner: try row.optionalString("lease_owner"),
                  worker: WorkerSighting(seenAt: seenAt, leaseExpiresAt: expiresAt))
    }
}

extension QueueCounts {
    /// Rows of: queue, state, jobs, oldest_available (NULL unless available), retrying; one
    /// row per queue and state, summed into one `QueueCounts` per queue, by name.
    public static func from(rows: [DatabaseRow]) throws(DeriveError) -> [QueueCounts] {
        var byQueue: [String: QueueCounts] = [:]
        for row in rows {
            let queue = try row.string("queue")
            byQueue[queue, default: QueueCounts(queue: queue, states: [:], oldestAvailable: nil)]
                .states[try row.value("state", as: JobState.self)] = try row.int("jobs")
            if let oldest = try row.optionalDate("oldest_available") { byQueue[queue]?.oldestAvailable = oldest }
            byQueue[queue]?.retrying += try row.optionalInt("retrying") ?? 0
        }
        return byQueue.values.sorted { $0.queue < $1.queue }
    }
}

extension StoredPreset {
    /// Columns: name, version, outputs, created_at, retired_at.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(name: try row.string("name"), version: try row.int("version"), outputs: try row.json("outputs"),
                  createdAt: try row.date("created_at"), retiredAt: try row.optionalDate("retired_at"))
    }
}

extension WorkerStatus {
    /// Columns: id, host, pid, queues (a JSON array), slots, started_at, seen_at, activity.
    public init(row: DatabaseRow) throws(DeriveError) {
        guard case .array(let names) = try row.json("queues") else {
            throw DeriveError(.internalError, "\(row.source).queues is not a JSON array", retryable: false)
        }
        self.init(id: try row.string("id"), host: try row.string("host"), pid: try row.int("pid"),
                  queues: names.compactMap { if case .string(let name) = $0 { name } else { nil } }, slots: try row.int("slots"),
                  startedAt: try row.date("started_at"), seenAt: try row.date("seen_at"), running: [], finished: [:], stopping: false)
        setActivity(try row.json("activity"))
    }
}

extension Schedule {
    /// Columns: name, cron, time_zone, action, enabled, created_at.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(name: try row.string("name"), cron: try row.string("cron"), timeZone: try row.string("time_zone"),
                  action: try row.json("action"), enabled: try row.bool("enabled"), createdAt: try row.date("created_at"))
    }
}

extension ScheduleFire {
    /// Columns: fire_time, fired_at, job_id.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(fireTime: try row.date("fire_time"), firedAt: try row.date("fired_at"), jobID: try row.optionalInt("job_id").map { JobID($0) })
    }
}

extension SourceCandidate {
    /// Columns: position, source, asset_sha256, asset_tags, asset_context (the asset's JSON).
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(position: try row.int64("position"), source: try row.string("source"), assetSHA256: try row.optionalString("asset_sha256"),
                  asset: try AssetFacts(row: row))
    }
}

extension AssetFacts {
    /// The asset's `tags` and `context` selected as `asset_tags` and `asset_context` (JSON text).
    init(row: DatabaseRow) throws(DeriveError) {
        let record = RecordRow(.object(["tags": try row.optionalJSON("asset_tags") ?? .null,
                                        "context": try row.optionalJSON("asset_context") ?? .null]), table: "assets")
        self.init(tags: try AssetRecord.tags(record.optional("tags"), row: record) ?? [],
                  context: try AssetRecord.context(record.optional("context"), row: record) ?? [:])
    }

    /// The job document's `tags` and `context` members (none when empty).
    var documentMembers: [JSONMember] {
        var members: [JSONMember] = []
        if !tags.isEmpty { members.append(JSONMember(key: "tags", value: .array(tags.map(JSONValue.string)))) }
        if !context.isEmpty { members.append(JSONMember(key: "context", value: contextJSON)) }
        return members
    }
}

extension SourceState {
    /// Columns: url, asset_sha256, version, etag, last_modified, checked_at.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(url: try row.string("url"), assetSHA256: try row.string("asset_sha256"), version: try row.int("version"),
                  etag: try row.optionalString("etag"), lastModified: try row.optionalString("last_modified"),
                  checkedAt: try row.date("checked_at"))
        asset = try AssetFacts(row: row)
    }
}

extension PresetStaleness {
    /// Columns: preset, current_version, assets, stale.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(preset: try row.string("preset"), currentVersion: try row.int("current_version"), assets: try row.int("assets"),
                  stale: try row.int("stale"))
    }
}

extension SupersededOutput {
    /// Columns: id, storage_key.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(id: try row.int64("id"), storageKey: try row.string("storage_key"))
    }
}

extension JobState {
    /// Rows of: outcome, jobs (finished jobs by outcome).
    public static func counts(rows: [DatabaseRow]) throws(DeriveError) -> [JobState: Int] {
        var counts: [JobState: Int] = [:]
        for row in rows { counts[try row.value("outcome", as: JobState.self)] = try row.int("jobs") }
        return counts
    }
}

// MARK: The asset catalog

extension CatalogDerivative {
    /// Columns: id, asset_id, job_id, record (the row as JSON with the table's column names, as
    /// `DerivativeRecord(row:)` reads it), created_at, superseded_at, current_preset_version.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(id: try row.int64("id"), assetID: try row.int64("asset_id"), jobID: try row.int64("job_id"),
                  record: try DerivativeRecord(row: try row.json("record")), createdAt: try row.date("created_at"),
                  supersededAt: try row.optionalDate("superseded_at"), currentPresetVersion: try row.optionalInt("current_preset_version"))
    }
}

extension AssetPage {
    /// Rows of one asset each with one of its outputs: the asset's columns asset_id,
    /// asset_sha256, asset_source_url, asset_format, asset_width, asset_height, asset_created_at
    /// and output_count, beside a `CatalogDerivative`'s columns (id NULL for an asset with no
    /// current output). Ordered here, newest asset first and narrowest output first, so that the
    /// statement needs no sort; `next` is the oldest asset's id when the page is full.
    public init(rows: [DatabaseRow], limit: Int) throws(DeriveError) {
        var assets: [Int64: AssetSummary] = [:]
        for row in rows {
            let id = try row.int64("asset_id")
            if assets[id] == nil {
                assets[id] = AssetSummary(id: id, sha256: try row.string("asset_sha256"), sourceURL: try row.string("asset_source_url"),
                                          format: try row.string("asset_format"), width: try row.int("asset_width"),
                                          height: try row.int("asset_height"), createdAt: try row.date("asset_created_at"),
                                          outputCount: try row.int("output_count"), outputs: [])
            }
            if try !row.isNull("id") { assets[id]?.outputs.append(try CatalogDerivative(row: row)) }
        }
        let page = assets.values.sorted { $0.id > $1.id }.map { asset in
            var asset = asset
            asset.outputs.sort { ($0.record.width, $0.id) < ($1.record.width, $1.id) }
            return asset
        }
        self.init(assets: page, next: limit > 0 && page.count == limit ? page.last?.id : nil)
    }
}

extension AssetDetail {
    /// Columns: id, record (the asset row as JSON with the table's column names, as
    /// `AssetRecord(row:)` reads it), created_at, updated_at.
    public init(row: DatabaseRow, derivatives: [CatalogDerivative], sources: [SourceRevalidation]) throws(DeriveError) {
        self.init(id: try row.int64("id"), record: try AssetRecord(row: try row.json("record")), createdAt: try row.date("created_at"),
                  updatedAt: try row.date("updated_at"), derivatives: derivatives, sources: sources)
    }
}

extension SourceRevalidation {
    /// Columns: url, version, etag, last_modified, checked_at, changed_at.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(url: try row.string("url"), version: try row.int("version"), etag: try row.optionalString("etag"),
                  lastModified: try row.optionalString("last_modified"), checkedAt: try row.date("checked_at"),
                  changedAt: try row.date("changed_at"))
    }
}

extension PausedQueue {
    /// Columns: queue, paused_at (Unix seconds), paused_by.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(queue: try row.string("queue"), pausedAt: try row.date("paused_at"), pausedBy: try row.string("paused_by"))
    }
}
