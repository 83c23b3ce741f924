import DeriveJobs
import DeriveLanguage
import DeriveHTTP
import Foundation

/// The webhooks page: the notifications `derive serve` sent (or gave up on), newest first, as
/// they are recorded (`ServedAssets`). Read-only; every value shown as text.
extension Pages {
    func webhooks() throws -> HTTPResponse {
        try withRecords { records in
            guard let served = records as? any ServedAssets else {
                return Self.respond(Views.notFound("This database keeps no notifications."), status: .notFound)
            }
            return Self.respond(Views.webhooks(try served.recentNotifications(limit: 200), now: Date()))
        }
    }
}

extension Views {
    public static func webhooks(_ notifications: [NotificationRecord], now: Date) -> String {
        guard !notifications.isEmpty else {
            return HTML.page(title: "Webhooks", HTML.element("p", [], .text(
                "No notification has been sent (derive serve sends one for an upload with a notification_url).")))
        }
        let cells: [[Markup]] = notifications.map { record in
            let status: Markup = record.delivered ? .text(record.status.map { "HTTP \($0)" } ?? "")
                : HTML.element("span", [("class", "error")], .text(record.status.map { "HTTP \($0)" } ?? "no answer"))
            return [
                .text("\(timestamp(record.sentAt)) (\(duration(now.timeIntervalSince(record.sentAt))) ago)"),
                .text(URLComponents(string: record.url)?.host ?? record.url),
                .text("\(record.cloud)/\(record.publicID)"),
                .text(record.type),
                status,
                .text(String(record.attempts)),
                record.error.map { HTML.element("span", [("class", "error")], .text($0)) } ?? .text(""),
            ]
        }
        return HTML.page(title: "Webhooks", HTML.element("p", [], .text("The newest \(notifications.count) notifications derive serve sent, newest first."))
            + HTML.table(["sent", "target host", "asset", "type", "status", "attempts", "last error"], cells, id: "webhooks"))
    }
}
