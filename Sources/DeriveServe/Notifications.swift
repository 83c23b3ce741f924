import DeriveDigest
import DeriveJobs
import DeriveLanguage
import Foundation

/// Notifications go through a durable outbox (`ServedAssets.queueNotification`): a row is
/// written when the upload is recorded, and one loop per serve process (`runOutbox`) claims
/// due rows under a lease, sends them, reschedules them with the backoff and records them when
/// sent or given up. A notification pending when serve stops is sent by the next serve process.
extension CloudinaryService {
    /// Delays between attempts: a notification is tried up to six times over about a minute.
    static let notificationBackoff: [Double] = [0, 1, 3, 7, 15, 30]
    /// How long a claimed notification is kept from other serve processes: longer than one
    /// attempt (the sender's timeout), so two processes never send one row at once.
    static let outboxLease: Double = 120
    /// How soon an `eager` notification looks at its live job again: a tenth of the job's age,
    /// between a quarter second and five seconds, so a long job's wait costs a claim and a
    /// reschedule every five seconds, not four a second.
    static func eagerPoll(jobAge: Double) -> Double { min(5, max(0.25, jobAge / 10)) }
    /// How long an upload's notifications are held for the request to answer: its longest
    /// wait for an eager job, and a lease.
    var notificationHold: Double { settings.wait + Self.outboxLease }

    /// Makes a notification held with its upload due now, with its body when given.
    func releaseNotification(_ id: Int64, body: String?) async {
        let hold = notificationHold
        do {
            try await Self.offPool { [database] () throws(DeriveError) in try database.releaseNotification(id: id, body: body, hold: hold) }
        } catch {
            // Still held: sent when the hold runs out, its body made from the asset's record.
            logger.warning("a notification could not be released", metadata: ["id": "\(id)", "error": "\(error)"])
        }
    }

    /// The outbox loop: claims due notifications and sends them until cancelled. Started with
    /// the server; what a stopped process left pending is due again when its lease runs out.
    func runOutbox() async {
        guard let sender = webhooks else { return }
        while !Task.isCancelled {
            var claimed: [OutboxNotification] = []
            do {
                claimed = try await Self.offPool { [database] () throws(DeriveError) -> [OutboxNotification] in
                    try database.claimNotifications(limit: 16, lease: Self.outboxLease)
                }
            } catch {
                logger.warning("the notification outbox could not be read", metadata: ["error": "\(error)"])
            }
            await withTaskGroup(of: Void.self) { group in
                for notification in claimed {
                    group.addTask { await self.deliver(notification, sender: sender) }
                }
            }
            if claimed.isEmpty { try? await Task.sleep(for: .milliseconds(250)) }
        }
    }

    /// One claimed notification: waits for its eager job, makes its body, makes one attempt,
    /// and reschedules it or records it.
    func deliver(_ notification: OutboxNotification, sender: any WebhookSender) async {
        var record = NotificationRecord(cloud: notification.cloud, publicID: notification.publicID, url: Redacted.url(notification.url),
                                        type: notification.type, status: nil, attempts: notification.attempts, error: nil, sentAt: Date())
        do {
            let members: String
            if let body = notification.body {
                members = body
            } else if notification.type == "upload" {
                // Held with its upload and never released: the process stopped before answering.
                guard let made = try await uploadBody(notification) else {
                    record.error = "the asset was gone before its notification was made"
                    return try await finish(notification, record)
                }
                members = made
            } else {
                switch try await eagerBody(notification) {
                case .waiting(let jobAge):
                    // The job is still live: look again later, no attempt counted.
                    try await Self.offPool { [database] () throws(DeriveError) in
                        try database.rescheduleNotification(id: notification.id, attempts: notification.attempts,
                                                            at: Date().addingTimeInterval(Self.eagerPoll(jobAge: jobAge)))
                    }
                    return
                case .ready(let made):
                    members = made
                }
            }
            guard let secret = settings.credentials[notification.keyName] else {
                record.error = "the API key \(Quoted(notification.keyName)) that signed the upload is no longer configured"
                return try await finish(notification, record)
            }
            let timestamp = Int(Date().timeIntervalSince1970)
            let text = Self.notificationText(members, type: notification.type, timestamp: timestamp)
            let headers = ["Content-Type": "application/json", "X-Cld-Timestamp": String(timestamp),
                           "X-Cld-Signature": CloudinarySigning.notificationSignature(body: text, timestamp: timestamp, secret: secret, algorithm: .sha1)]
            record.attempts += 1
            var refused = false
            do {
                let status = try await Self.offPool { () throws(DeriveError) -> Int in try sender.post(notification.url, body: Array(text.utf8), headers: headers) }
                record.status = status
            } catch {
                record.error = error.detail
                // A target the address rules refuse stays refused.
                refused = error.code == .sourceRefused
            }
            record.sentAt = Date()
            if !record.delivered, !refused, record.attempts < Self.notificationBackoff.count {
                let at = Date().addingTimeInterval(Self.notificationBackoff[record.attempts])
                try await Self.offPool { [database, record] () throws(DeriveError) in
                    try database.rescheduleNotification(id: notification.id, attempts: record.attempts, at: at)
                }
                return
            }
            if !record.delivered {
                logger.warning("a notification was not delivered", metadata: ["url": "\(record.url)", "type": "\(record.type)", "attempts": "\(record.attempts)",
                                                                             "error": "\(record.error ?? record.status.map { "HTTP \($0)" } ?? "")"])
            }
            try await finish(notification, record)
        } catch {
            // Left claimed: due again when the lease runs out.
            logger.warning("a notification could not be updated", metadata: ["url": "\(record.url)", "error": "\(error)"])
        }
    }

    private func finish(_ notification: OutboxNotification, _ record: NotificationRecord) async throws(DeriveError) {
        try await Self.offPool { [database] () throws(DeriveError) in try database.finishNotification(id: notification.id, record: record) }
    }

    /// The body sent: `notification_type` first, the members, then `timestamp` (`members` is
    /// a compact JSON object).
    static func notificationText(_ members: String, type: String, timestamp: Int) -> String {
        let inner = members.hasPrefix("{") && members.hasSuffix("}") ? String(members.dropFirst().dropLast()) : ""
        let parts = ["\"notification_type\":" + JSONWriter.compact(.string(type))] + (inner.isEmpty ? [] : [inner])
            + ["\"timestamp\":" + JSONWriter.compact(.string(String(timestamp)))]
        return "{" + parts.joined(separator: ",") + "}"
    }

    /// An upload notification's members made from the asset's record (what the upload's
    /// answer would have said, without `original_filename` and with the eager outputs made so
    /// far); nil when the asset is gone.
    func uploadBody(_ notification: OutboxNotification) async throws(DeriveError) -> String? {
        let publicID = notification.publicID
        guard let recorded = try await Self.offPool({ [records] () throws(DeriveError) -> ServedAsset? in try records.get(publicID) }) else { return nil }
        let asset = try await Self.offPool { [self] () throws(DeriveError) -> ServedAsset in try reconciled(recorded) }
        let eager = asset.eagerJobs.first.map { job in job.outputs.map { ($0.transformation, $0.format, $0.identity) } }
        var members = Self.assetJSON(asset, base: notification.base ?? "", cloud: settings.cloudName, eager: eager)
        let secret = settings.credentials[notification.keyName] ?? ""
        members.append(JSONMember(key: "signature", value: .string(MessageDigest.hex("public_id=\(asset.publicID)&version=\(asset.version)" + secret, .sha1))))
        return JSONWriter.compact(.object(members))
    }

    /// An eager notification's body, or how long its job has existed while it is still live.
    enum EagerBody {
        case ready(String)
        case waiting(jobAge: Double)
    }

    /// An eager notification's members once its job has ended (its outputs recorded as the
    /// asset's derivatives). One whose job or asset is gone (an overwrite forgets the replaced
    /// version's eager jobs) is made without outputs.
    func eagerBody(_ notification: OutboxNotification) async throws(DeriveError) -> EagerBody {
        guard let jobID = notification.jobID else { return .ready("{}") }
        let snapshot = try await Self.offPool { [database] () throws(DeriveError) -> JobSnapshot? in try database.job(jobID) }
        if let snapshot, snapshot.state.isLive { return .waiting(jobAge: Date().timeIntervalSince(snapshot.createdAt)) }
        let publicID = notification.publicID
        var current = try await Self.offPool { [records] () throws(DeriveError) -> ServedAsset? in try records.get(publicID) }
        let job = current?.eagerJobs.first { $0.jobID == jobID }
        if let snapshot, let job, let asset = current, snapshot.state == .completed, let result = snapshot.result {
            let derivatives = Self.derivatives(from: result, job: job)
            current = try await Self.offPool { [database, records] () throws(DeriveError) -> ServedAsset? in
                try database.recordDerivatives(derivatives, cloud: asset.cloud, publicID: publicID, version: asset.version)
                return try records.get(publicID)
            }
        }
        var eager: JSONValue = .array([])
        if let current, let job {
            eager = Self.assetJSON(current, base: notification.base ?? "", cloud: settings.cloudName,
                                   eager: job.outputs.map { ($0.transformation, $0.format, $0.identity) }).first { $0.key == "eager" }?.value ?? .array([])
        }
        return .ready(JSONWriter.compact(.object([
            JSONMember(key: "public_id", value: .string(publicID)),
            JSONMember(key: "batch_id", value: .string(String(jobID))),
            JSONMember(key: "status", value: .string(snapshot?.state == .completed ? "success" : "failed")),
            JSONMember(key: "eager", value: eager),
        ])))
    }

    /// For `eager_async` without an eager notification: waits for the job in the background (up
    /// to an hour) and records its outputs (with one, its outbox row does).
    func finishLater(_ job: EagerJob, asset recorded: ServedAsset) {
        Task.detached { [self] in
            let deadline = ContinuousClock.now.advanced(by: .seconds(3600))
            while ContinuousClock.now < deadline {
                if let found = try? database.job(job.jobID), !found.state.isLive {
                    if found.state == .completed, let result = found.result {
                        _ = try? database.recordDerivatives(Self.derivatives(from: result, job: job), cloud: recorded.cloud,
                                                            publicID: recorded.publicID, version: recorded.version)
                    }
                    return
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }
}
