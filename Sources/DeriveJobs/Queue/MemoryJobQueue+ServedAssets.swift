import DeriveLanguage
import Foundation

/// A served asset's key in the memory queue.
struct ServedKey: Hashable {
    var cloud: String
    var publicID: String
}

/// `derive serve`'s records in memory: each call one critical section, as each of the SQL
/// stores' is one transaction. The faces are those the newest completion recorded for the
/// original's SHA-256, as the SQL stores read them from the `assets` row.
extension MemoryJobQueue: ServedAssets {
    public func recordUpload(_ asset: ServedAsset, overwrite: Bool, eager: (job: NewJob, outputs: [EagerOutput])?, notifications: [OutboxNotification],
                             hold: Double) throws(DeriveError) -> RecordedUpload {
        if let eager { try Self.validate(eager.job) }
        return try withState { state, now throws(DeriveError) -> RecordedUpload in
            let key = ServedKey(cloud: asset.cloud, publicID: asset.publicID)
            var stored = asset
            stored.derivatives = [:]
            stored.eagerJobs = []
            stored.notifications = []
            stored.faces = nil
            if let existing = state.served[key] {
                guard overwrite else { return RecordedUpload(asset: Self.reading(existing, in: state), existing: true, eagerJob: nil) }
                stored.version = max(asset.version, existing.version + 1)
            }
            var eagerJob: JobID?
            if let eager {
                for (source, name) in OriginalName.pairs([eager.job]) { state.originalNames[source, default: []].insert(name) }
                let id = state.enqueue(eager.job, at: now).id
                stored.eagerJobs = [EagerJob(jobID: id, outputs: eager.outputs)]
                eagerJob = id
            }
            state.served[key] = stored
            let ids = notifications.map { notification in
                state.lastOutboxID += 1
                var held = notification
                held.id = state.lastOutboxID
                held.attempts = 0
                held.nextAt = Date(timeIntervalSince1970: now + hold)
                if held.type == "eager" { held.jobID = eagerJob }
                state.outbox[held.id] = held
                state.heldOutbox.insert(held.id)
                return held.id
            }
            return RecordedUpload(asset: Self.reading(stored, in: state), existing: false, eagerJob: eagerJob, notificationIDs: ids)
        }
    }

    public func servedAsset(cloud: String, publicID: String) throws(DeriveError) -> ServedAsset? {
        try withState { state, _ in state.served[ServedKey(cloud: cloud, publicID: publicID)].map { Self.reading($0, in: state) } }
    }

    public func servedAssetGeneration(cloud: String) throws(DeriveError) -> Int64 {
        try withState { state, _ in state.servedGeneration }
    }

    @discardableResult
    public func recordDerivatives(_ derivatives: [ServedDerivative], cloud: String, publicID: String, version: Int) throws(DeriveError) -> Bool {
        try withState { state, _ in
            let key = ServedKey(cloud: cloud, publicID: publicID)
            guard var asset = state.served[key], asset.version == version else { return false }
            for derivative in derivatives { asset.derivatives[derivative.identity] = derivative }
            state.served[key] = asset
            return true
        }
    }

    public func recordNotification(_ notification: NotificationRecord, cloud: String, publicID: String) throws(DeriveError) {
        try withState { state, _ in
            var kept = notification
            kept.cloud = cloud
            kept.publicID = publicID
            state.notifications.append(kept)
        }
    }

    public func recentNotifications(limit: Int) throws(DeriveError) -> [NotificationRecord] {
        try withState { state, _ in Array(state.notifications.reversed().prefix(max(0, limit))) }
    }

    @discardableResult
    public func queueNotification(_ notification: OutboxNotification) throws(DeriveError) -> Int64 {
        try withState { state, now in
            state.lastOutboxID += 1
            var queued = notification
            queued.id = state.lastOutboxID
            queued.attempts = 0
            queued.nextAt = Date(timeIntervalSince1970: now)
            state.outbox[queued.id] = queued
            return queued.id
        }
    }

    public func releaseNotification(id: Int64, body: String?, hold: Double) throws(DeriveError) {
        try withState { state, now in
            guard state.outbox[id] != nil, state.heldOutbox.remove(id) != nil else { return }
            if let body { state.outbox[id]?.body = body }
            state.outbox[id]?.nextAt = Date(timeIntervalSince1970: now)
        }
    }

    public func claimNotifications(limit: Int, lease: Double) throws(DeriveError) -> [OutboxNotification] {
        try withState { state, now in
            let due = state.outbox.values.filter { $0.nextAt.timeIntervalSince1970 <= now }
                .sorted { ($0.nextAt, $0.id) < ($1.nextAt, $1.id) }.prefix(max(0, limit))
            return due.map { found in
                state.heldOutbox.remove(found.id)
                var claimed = found
                claimed.nextAt = Date(timeIntervalSince1970: now + lease)
                state.outbox[found.id] = claimed
                return found
            }
        }
    }

    public func rescheduleNotification(id: Int64, attempts: Int, at: Date) throws(DeriveError) {
        try withState { state, _ in
            state.outbox[id]?.attempts = attempts
            state.outbox[id]?.nextAt = at
        }
    }

    public func finishNotification(id: Int64, record: NotificationRecord) throws(DeriveError) {
        try withState { state, _ in
            guard state.outbox.removeValue(forKey: id) != nil else { return }
            state.notifications.append(record)
        }
    }

    /// The asset with its notifications and the faces recorded for its original.
    private static func reading(_ asset: ServedAsset, in state: State) -> ServedAsset {
        var read = asset
        read.notifications = state.notifications.filter { $0.cloud == asset.cloud && $0.publicID == asset.publicID }
        read.faces = state.records.last { $0.record.asset.sha256 == asset.sha256 && $0.record.asset.faces != nil }?.record.asset.faces
        return read
    }
}
