import DeriveDigest
import DeriveJobs
import DeriveLanguage
import Foundation

extension CloudinaryService {
    /// Delays between attempts: a notification is tried up to six times over about a minute.
    static let notificationBackoff: [Double] = [0, 1, 3, 7, 15, 30]

    /// POSTs Cloudinary's notification body to `url` in the background, signed as
    /// `cloudinary.utils.verify_notification_signature` checks (`X-Cld-Timestamp`,
    /// `X-Cld-Signature`: hex SHA-1 of body, timestamp and secret), retried with backoff while
    /// the answer is not 2xx, and recorded (`ServedAssets.recordNotification`).
    func notify(_ url: String, members: [JSONMember], type: String, publicID: String, secret: String) {
        guard let sender = webhooks else { return }
        Task.detached { [database, settings, logger] in
            var body = members
            body.insert(JSONMember(key: "notification_type", value: .string(type)), at: 0)
            let timestamp = Int(Date().timeIntervalSince1970)
            body.append(JSONMember(key: "timestamp", value: .string(String(timestamp))))
            let text = JSONWriter.compact(.object(body))
            let headers = ["Content-Type": "application/json", "X-Cld-Timestamp": String(timestamp),
                           "X-Cld-Signature": CloudinarySigning.notificationSignature(body: text, timestamp: timestamp, secret: secret, algorithm: .sha1)]
            var record = NotificationRecord(cloud: settings.cloudName, publicID: publicID, url: Redacted.url(url), type: type, status: nil, attempts: 0,
                                            error: nil, sentAt: Date())
            for delay in Self.notificationBackoff {
                if delay > 0 { try? await Task.sleep(for: .milliseconds(Int64(delay * 1000))) }
                record.attempts += 1
                do {
                    let status = try await Self.offPool { () throws(DeriveError) -> Int in try sender.post(url, body: Array(text.utf8), headers: headers) }
                    record.status = status
                    record.error = nil
                    if (200..<300).contains(status) { break }
                } catch let error as DeriveError {
                    record.error = error.detail
                    // A target the address rules refuse stays refused.
                    if error.code == .sourceRefused { break }
                } catch {
                    record.error = "\(error)"
                }
            }
            record.sentAt = Date()
            if record.status.map({ !(200..<300).contains($0) }) ?? true {
                logger.warning("a notification was not delivered", metadata: ["url": "\(record.url)", "type": "\(type)", "attempts": "\(record.attempts)",
                                                                             "error": "\(record.error ?? record.status.map { "HTTP \($0)" } ?? "")"])
            }
            do {
                try database.recordNotification(record, cloud: settings.cloudName, publicID: publicID)
            } catch {
                logger.warning("a notification could not be recorded", metadata: ["url": "\(record.url)", "error": "\(error)"])
            }
        }
    }

    /// For `eager_async`: waits for the job in the background (up to an hour), records its
    /// outputs, and sends the eager notification if one was asked for.
    func finishLater(_ job: EagerJob, asset recorded: ServedAsset, base: String, notificationURL: String?, secret: String) {
        Task.detached { [self] in
            let deadline = ContinuousClock.now.advanced(by: .seconds(3600))
            var snapshot: JobSnapshot?
            while ContinuousClock.now < deadline {
                if let found = try? database.job(job.jobID), !found.state.isLive {
                    snapshot = found
                    break
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
            guard let snapshot else { return }
            var asset: ServedAsset?
            let publicID = recorded.publicID
            if snapshot.state == .completed, let result = snapshot.result {
                _ = try? database.recordDerivatives(Self.derivatives(from: result, job: job), cloud: recorded.cloud, publicID: publicID,
                                                    version: recorded.version)
                asset = try? records.get(publicID)
            }
            guard let notificationURL, let current = asset ?? (try? records.get(publicID)) else { return }
            let eager = Self.assetJSON(current, base: base, cloud: settings.cloudName,
                                       eager: job.outputs.map { ($0.transformation, $0.format, $0.identity) }).first { $0.key == "eager" }?.value ?? .array([])
            notify(notificationURL, members: [
                JSONMember(key: "public_id", value: .string(publicID)),
                JSONMember(key: "batch_id", value: .string(String(job.jobID))),
                JSONMember(key: "status", value: .string(snapshot.state == .completed ? "success" : "failed")),
                JSONMember(key: "eager", value: eager),
            ], type: "eager", publicID: publicID, secret: secret)
        }
    }
}
