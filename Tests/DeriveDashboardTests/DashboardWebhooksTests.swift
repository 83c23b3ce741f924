import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveTestSupport
import Foundation
import Testing

/// The webhooks page: the notifications `derive serve` recorded, newest first, shown as text.
@Suite struct DashboardWebhooksTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(StoreKind.runnable.contains(.postgres))
    }

    @Test(arguments: StoreKind.runnable)
    func theWebhooksPageListsRecentDeliveriesEscaped(kind: StoreKind) async throws {
        let queue = try TestQueue(kind)
        let empty = try await DashboardServer.start(database: queue.store, records: queue.store, port: 0)
        let none = try await DashboardTests.get(empty.port, "/webhooks")
        #expect(none.status == 200 && none.body.contains("No notification has been sent"), "\(none.body)")
        await empty.stop()

        let sent = Date(timeIntervalSince1970: 1_780_000_000)
        try queue.store.recordNotification(NotificationRecord(cloud: "demo", publicID: "a/photo", url: "https://hooks.example.com/in?token=redacted",
                                                              type: "upload", status: 200, attempts: 1, error: nil, sentAt: sent),
                                           cloud: "demo", publicID: "a/photo")
        try queue.store.recordNotification(NotificationRecord(cloud: "demo", publicID: "b", url: "https://<b>evil</b>.example/x", type: "eager",
                                                              status: nil, attempts: 6, error: "refused: <script>alert(1)</script>",
                                                              sentAt: sent.addingTimeInterval(60)),
                                           cloud: "demo", publicID: "b")
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, port: 0)
        defer { Task { await server.stop() } }
        let page = try await DashboardTests.get(server.port, "/webhooks")
        #expect(page.status == 200)
        let body = page.body
        #expect(body.contains("<a href=\"/webhooks\">Webhooks</a>"), "the navigation links it")
        #expect(body.contains("hooks.example.com") && !body.contains("token=redacted"), "the target's host, not its query")
        #expect(body.contains("demo/a/photo") && body.contains("HTTP 200") && body.contains("no answer"))
        #expect(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && !body.contains("<script>alert"), "the error is text")
        #expect(!body.contains("<b>evil</b>"), "a target that is not a URL is text")
        // Newest first.
        let newer = try #require(body.range(of: "demo/b"))
        let older = try #require(body.range(of: "demo/a/photo"))
        #expect(newer.lowerBound < older.lowerBound)
        #expect(body.contains(timestampText(sent)))
    }

    @Test func theInMemoryQueueHasNoWebhooksPage() async throws {
        let server = try await DashboardServer.start(database: MemoryJobQueue(), port: 0)
        defer { Task { await server.stop() } }
        let page = try await DashboardTests.get(server.port, "/webhooks")
        #expect(page.status == 404)
    }

    func timestampText(_ date: Date) -> String { date.formatted(.iso8601) }
}
