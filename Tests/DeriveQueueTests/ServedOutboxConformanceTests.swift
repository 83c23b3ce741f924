import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// `derive serve`'s notification outbox (`ServedAssets.queueNotification` and the rest) on the
/// three stores: claims under a lease, rescheduling, finishing with its record, and two
/// claimers that never take one row.
@Suite struct ServedOutboxConformanceTests {
    typealias Under = ServedAssetsConformanceTests.Under

    static func upload(_ n: Int = 0) -> OutboxNotification {
        OutboxNotification(cloud: "demo", publicID: "folder/photo\(n)", url: "http://127.0.0.1:9/hook?token=\(n)", type: "upload", keyName: "key\(n)",
                           body: #"{"public_id":"folder/photo\#(n)","version":1}"#, jobID: nil, base: nil)
    }

    static let eager = OutboxNotification(cloud: "demo", publicID: "folder/photo", url: "https://hooks.example/eager", type: "eager", keyName: "k",
                                          body: nil, jobID: 42, base: "http://127.0.0.1:8080")

    static func record(_ n: OutboxNotification, status: Int?, attempts: Int) -> NotificationRecord {
        NotificationRecord(cloud: n.cloud, publicID: n.publicID, url: "http://127.0.0.1:9/hook", type: n.type, status: status, attempts: attempts,
                           error: status == nil ? "refused" : nil, sentAt: Date(timeIntervalSince1970: 1_700_000_000))
    }

    @Test(arguments: JobStoreKind.runnable)
    func aClaimTakesDueRowsUnderALease(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        defer { withExtendedLifetime(under) {} }
        let first = try store.queueNotification(Self.upload())
        let second = try store.queueNotification(Self.eager)
        #expect(first != second && first > 0 && second > 0)
        let claimed = try store.claimNotifications(limit: 10, lease: 60)
        #expect(claimed.map(\.id) == [first, second])
        var expected = [Self.upload(), Self.eager]
        for index in expected.indices { expected[index].id = claimed[index].id; expected[index].nextAt = claimed[index].nextAt }
        #expect(claimed == expected)
        #expect(claimed.allSatisfy { $0.attempts == 0 && abs($0.nextAt.timeIntervalSinceNow) < 30 })
        // Leased: nobody takes them again until the lease runs out.
        #expect(try store.claimNotifications(limit: 10, lease: 60).isEmpty)
        // A limit is kept.
        _ = try store.queueNotification(Self.upload(1))
        _ = try store.queueNotification(Self.upload(2))
        #expect(try store.claimNotifications(limit: 1, lease: 60).map(\.publicID) == ["folder/photo1"])
    }

    @Test(arguments: JobStoreKind.runnable)
    func aLeaseThatRunsOutLeavesTheRowDueAgain(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        defer { withExtendedLifetime(under) {} }
        let id = try store.queueNotification(Self.upload())
        #expect(try store.claimNotifications(limit: 10, lease: 0.2).map(\.id) == [id])
        #expect(try store.claimNotifications(limit: 10, lease: 0.2).isEmpty)
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try store.claimNotifications(limit: 10, lease: 60).map(\.id) == [id])
    }

    @Test(arguments: JobStoreKind.runnable)
    func aRescheduledRowComesBackWithItsAttempts(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        defer { withExtendedLifetime(under) {} }
        let id = try store.queueNotification(Self.upload())
        _ = try store.claimNotifications(limit: 10, lease: 60)
        try store.rescheduleNotification(id: id, attempts: 2, at: Date().addingTimeInterval(60))
        #expect(try store.claimNotifications(limit: 10, lease: 60).isEmpty)
        try store.rescheduleNotification(id: id, attempts: 3, at: Date().addingTimeInterval(-1))
        let again = try store.claimNotifications(limit: 10, lease: 60)
        #expect(again.map(\.id) == [id] && again.first?.attempts == 3)
    }

    /// An upload's notifications are written in its transaction, held until the process that
    /// answered releases them; the eager one waits for the job queued with it.
    @Test(arguments: JobStoreKind.runnable)
    func notificationsRecordedWithAnUploadAreHeldUntilReleased(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        defer { withExtendedLifetime(under) {} }
        var upload = Self.upload()
        upload.body = nil
        var eager = Self.eager
        eager.jobID = nil
        let recorded = try store.recordUpload(ServedAssetsConformanceTests.asset(), overwrite: false, eager: ServedAssetsConformanceTests.eager(),
                                              notifications: [upload, eager], hold: 60)
        let ids = recorded.notificationIDs
        #expect(ids.count == 2 && ids[0] != ids[1] && recorded.eagerJob != nil)
        #expect(try store.claimNotifications(limit: 10, lease: 60).isEmpty, "held until released")
        try store.releaseNotification(id: ids[0], body: #"{"public_id":"folder/photo"}"#, hold: 60)
        let first = try store.claimNotifications(limit: 10, lease: 60)
        #expect(first.map(\.id) == [ids[0]] && first.first?.body == #"{"public_id":"folder/photo"}"# && first.first?.jobID == nil)
        try store.releaseNotification(id: ids[1], body: nil, hold: 60)
        let second = try store.claimNotifications(limit: 10, lease: 60)
        #expect(second.map(\.id) == [ids[1]] && second.first?.body == nil && second.first?.jobID == recorded.eagerJob
                && second.first?.base == Self.eager.base)
        // A taken public id, not overwritten, writes no notification.
        let again = try store.recordUpload(ServedAssetsConformanceTests.asset(), overwrite: false, eager: nil, notifications: [upload], hold: 0)
        #expect(again.existing && again.notificationIDs.isEmpty)
        #expect(try store.claimNotifications(limit: 10, lease: 60).isEmpty)
    }

    /// A held notification its process never released (killed after recording the upload) is
    /// due when the hold runs out, with no body: the sender makes it from the asset's record.
    @Test(arguments: JobStoreKind.runnable)
    func aHeldNotificationNeverReleasedIsDueWhenTheHoldRunsOut(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        defer { withExtendedLifetime(under) {} }
        var upload = Self.upload()
        upload.body = nil
        let id = try #require(try store.recordUpload(ServedAssetsConformanceTests.asset(), overwrite: false, eager: nil, notifications: [upload],
                                                     hold: 0.3).notificationIDs.first)
        #expect(try store.claimNotifications(limit: 10, lease: 60).isEmpty)
        Thread.sleep(forTimeInterval: 0.8)
        let claimed = try store.claimNotifications(limit: 10, lease: 60)
        #expect(claimed.map(\.id) == [id] && claimed.first?.body == nil && claimed.first?.type == "upload")
        // The stalled process releasing it now leaves it to the sender that claimed it: it is
        // not due again (it would be sent twice) and keeps no body of the release's.
        try store.releaseNotification(id: id, body: #"{"late":true}"#, hold: 0.3)
        #expect(try store.claimNotifications(limit: 10, lease: 60).isEmpty)
        try store.rescheduleNotification(id: id, attempts: 1, at: Date().addingTimeInterval(-1))
        let again = try store.claimNotifications(limit: 10, lease: 60)
        #expect(again.map(\.id) == [id] && again.first?.body == nil)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aFinishedRowIsRecordedOnceAndNeverClaimedAgain(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        defer { withExtendedLifetime(under) {} }
        _ = try store.recordUpload(ServedAssetsConformanceTests.asset("folder/photo0"), overwrite: false, eager: nil)
        let id = try store.queueNotification(Self.upload())
        let other = try store.queueNotification(Self.upload(1))
        _ = try store.claimNotifications(limit: 10, lease: 60)
        let record = Self.record(Self.upload(), status: 200, attempts: 2)
        try store.finishNotification(id: id, record: record)
        // A second finish (a sender whose lease had run out) records nothing more.
        try store.finishNotification(id: id, record: record)
        try store.rescheduleNotification(id: id, attempts: 3, at: Date().addingTimeInterval(-1))
        try store.rescheduleNotification(id: other, attempts: 1, at: Date().addingTimeInterval(-1))
        #expect(try store.claimNotifications(limit: 10, lease: 60).map(\.id) == [other])
        #expect(try store.recentNotifications(limit: 10) == [record])
        #expect(try store.servedAsset(cloud: "demo", publicID: "folder/photo0")?.notifications == [record])
        let failed = Self.record(Self.upload(1), status: nil, attempts: 6)
        try store.finishNotification(id: other, record: failed)
        #expect(try store.recentNotifications(limit: 10) == [failed, record])
    }

    /// Two claimers (two connections on one store) racing over many rows: each row taken once.
    @Test(arguments: JobStoreKind.runnable)
    func twoClaimersNeverTakeOneRow(kind: JobStoreKind) throws {
        let under = try Under(kind)
        let stores = [under.store, try under.another()]
        var queued: Set<Int64> = []
        for n in 0..<60 { queued.insert(try under.store.queueNotification(Self.upload(n))) }
        let taken = Taken()
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            do {
                while true {
                    let claimed = try stores[index].claimNotifications(limit: 3, lease: 60)
                    if claimed.isEmpty { break }
                    taken.add(claimed.map(\.id))
                }
            } catch {
                failures.add("\(error)")
            }
        }
        #expect(failures.all.isEmpty)
        #expect(taken.all.count == 60 && Set(taken.all) == queued)
    }
}

final class Taken: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int64] = []
    func add(_ ids: [Int64]) { lock.withLock { items += ids } }
    var all: [Int64] { lock.withLock { items } }
}
