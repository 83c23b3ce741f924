import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveTestSupport
import Foundation
import Testing

/// `derive serve`'s records (`ServedAssets`) on the three stores: an upload and its eager job in
/// one transaction, overwrites, derivatives by identity and version, concurrent writers, the
/// notifications, and the faces a job recorded for the original.
@Suite struct ServedAssetsConformanceTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(JobStoreKind.runnable.contains(.postgres))
    }

    /// A fresh store of one kind seen as `JobStore & ServedAssets` (and the management calls
    /// over them, `ServedAssetCatalogConformanceTests`), and more handles on it.
    final class Under: @unchecked Sendable {
        let store: any JobStore & ServedAssets & ServedAssetCatalog
        private let database: TestQueue?

        init(_ kind: JobStoreKind) throws {
            switch kind {
            case .memory:
                database = nil
                store = MemoryJobQueue()
            case .sqlite, .postgres:
                let database = try TestQueue(kind == .sqlite ? .sqlite : .postgres)
                self.database = database
                store = database.store
            }
        }

        func another() throws -> any JobStore & ServedAssets { try database?.openAnother() ?? store }
    }

    static let sha = String(repeating: "ab", count: 32)

    static func asset(_ id: String = "folder/photo", version: Int = 1_700_000_000, sha256: String = sha) -> ServedAsset {
        ServedAsset(cloud: "demo", publicID: id, version: version, format: "jpg", width: 1280, height: 886, bytes: 123_456, sha256: sha256,
                    originalKey: "originals/\(sha256).jpg", createdAt: Date(timeIntervalSince1970: 1_700_000_000.5), tags: ["one", "two"],
                    context: ["alt": "six people", "pipe": "a|b"])
    }

    static func eager(_ count: Int = 2, maxAttempts: Int = 3) -> (job: NewJob, outputs: [EagerOutput]) {
        (NewJob(payload: .object(["source": .string("file:///x.jpg"), "n": .int(count)]), maxAttempts: maxAttempts),
         (0..<count).map { EagerOutput(transformation: "c_scale,w_\(10 + $0)", format: "webp", identity: "id\($0)") })
    }

    static func derivative(_ identity: String, job: JobID = 1, width: Int = 10) -> ServedDerivative {
        ServedDerivative(identity: identity, transformation: "c_scale,w_\(width)", format: "webp", key: "d/\(identity).webp", width: width,
                         height: width / 2, bytes: 100 + width, sha256: String(repeating: "c", count: 64), jobID: job)
    }

    @Test(arguments: JobStoreKind.runnable)
    func anUploadIsRecordedWithItsEagerJob(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        #expect(try store.servedAsset(cloud: "demo", publicID: "folder/photo") == nil)
        let recorded = try store.recordUpload(Self.asset(), overwrite: false, eager: Self.eager())
        #expect(!recorded.existing)
        let jobID = try #require(recorded.eagerJob)
        let read = try #require(try store.servedAsset(cloud: "demo", publicID: "folder/photo"))
        #expect(read == recorded.asset)
        #expect(read.version == 1_700_000_000 && read.format == "jpg" && read.width == 1280 && read.height == 886 && read.bytes == 123_456)
        #expect(read.sha256 == Self.sha && read.originalKey == "originals/\(Self.sha).jpg" && read.tags == ["one", "two"])
        #expect(read.context == ["alt": "six people", "pipe": "a|b"] && abs(read.createdAt.timeIntervalSince1970 - 1_700_000_000.5) < 0.01)
        #expect(read.eagerJobs == [EagerJob(jobID: jobID, outputs: Self.eager().outputs)])
        #expect(read.derivatives.isEmpty && read.notifications.isEmpty && read.faces == nil)
        let job = try #require(try store.job(jobID))
        #expect(job.state == .available && same(job.payload, Self.eager().job.payload))
        // Another cloud's id is another asset.
        #expect(try store.servedAsset(cloud: "other", publicID: "folder/photo") == nil)
    }

    /// The generation number delivery's memory cache follows (issue 39) moves on, seen from
    /// another process, when an asset is overwritten or a derivative replaced; per cloud.
    @Test(arguments: JobStoreKind.runnable)
    func theGenerationMovesOnAnOverwriteAndAReplacedDerivative(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store, other = try under.another()
        let start = try other.servedAssetGeneration(cloud: "demo")
        _ = try store.recordUpload(Self.asset(), overwrite: false, eager: nil)
        try store.recordDerivatives([Self.derivative("a")], cloud: "demo", publicID: "folder/photo", version: 1_700_000_000)
        let recorded = try other.servedAssetGeneration(cloud: "demo")
        #expect(recorded >= start)
        var replaced = Self.derivative("a")
        replaced.key = "d/a-again.webp"
        try store.recordDerivatives([replaced], cloud: "demo", publicID: "folder/photo", version: 1_700_000_000)
        let afterReplace = try other.servedAssetGeneration(cloud: "demo")
        #expect(afterReplace > recorded)
        _ = try store.recordUpload(Self.asset(version: 1_700_000_100, sha256: String(repeating: "cd", count: 32)), overwrite: true, eager: nil)
        #expect(try other.servedAssetGeneration(cloud: "demo") > afterReplace)
        if kind != .memory { #expect(try other.servedAssetGeneration(cloud: "other") == 0) }
    }

    /// The asset and its eager job commit together: when the queue refuses the job, the asset
    /// is not recorded either (nor an overwrite applied).
    @Test(arguments: JobStoreKind.runnable)
    func aRefusedEagerJobLeavesNoAsset(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        #expect(throws: DeriveError.self) { try store.recordUpload(Self.asset(), overwrite: false, eager: Self.eager(maxAttempts: 0)) }
        #expect(try store.servedAsset(cloud: "demo", publicID: "folder/photo") == nil)
        let first = try store.recordUpload(Self.asset(), overwrite: false, eager: nil)
        #expect(throws: DeriveError.self) {
            try store.recordUpload(Self.asset(version: 1_800_000_000, sha256: String(repeating: "ef", count: 32)), overwrite: true,
                                   eager: Self.eager(maxAttempts: 0))
        }
        #expect(try store.servedAsset(cloud: "demo", publicID: "folder/photo") == first.asset)
    }

    @Test(arguments: JobStoreKind.runnable)
    func anOverwriteTakesANewVersionAndForgetsTheOldDerivatives(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        let first = try store.recordUpload(Self.asset(), overwrite: false, eager: Self.eager())
        #expect(try store.recordDerivatives([Self.derivative("id0"), Self.derivative("id1")], cloud: "demo", publicID: "folder/photo", version: first.asset.version))
        try store.recordNotification(NotificationRecord(cloud: "demo", publicID: "folder/photo", url: "https://hooks.example/a", type: "upload",
                                                        status: 200, attempts: 1, error: nil, sentAt: Date()), cloud: "demo", publicID: "folder/photo")

        // Taken and not to be overwritten: nothing changes, no job is queued.
        let before = try store.counts().reduce(0) { $0 + $1.states.values.reduce(0, +) }
        let kept = try store.recordUpload(Self.asset(version: 1_700_000_500, sha256: String(repeating: "ef", count: 32)), overwrite: false,
                                          eager: Self.eager())
        #expect(kept.existing && kept.eagerJob == nil && kept.asset.sha256 == Self.sha && kept.asset.derivatives.count == 2)
        #expect(try store.counts().reduce(0) { $0 + $1.states.values.reduce(0, +) } == before)

        // Overwritten with an older clock: the version still moves up; derivatives and eager jobs go, notifications stay.
        let replaced = try store.recordUpload(Self.asset(version: 1_600_000_000, sha256: String(repeating: "ef", count: 32)), overwrite: true,
                                              eager: Self.eager(1))
        #expect(!replaced.existing && replaced.asset.version == first.asset.version + 1)
        #expect(replaced.asset.sha256 == String(repeating: "ef", count: 32) && replaced.asset.derivatives.isEmpty)
        #expect(replaced.asset.eagerJobs.map(\.jobID) == [try #require(replaced.eagerJob)] && replaced.eagerJob != first.eagerJob)
        #expect(replaced.asset.notifications.count == 1)
        // A derivative of the replaced version arriving late is refused.
        #expect(try !store.recordDerivatives([Self.derivative("late")], cloud: "demo", publicID: "folder/photo", version: first.asset.version))
        #expect(try store.servedAsset(cloud: "demo", publicID: "folder/photo")?.derivatives.isEmpty == true)
        #expect(try !store.recordDerivatives([Self.derivative("x")], cloud: "demo", publicID: "nobody", version: 1))
    }

    @Test(arguments: JobStoreKind.runnable)
    func derivativesAreKeptByIdentity(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        let version = try store.recordUpload(Self.asset(), overwrite: false, eager: nil).asset.version
        #expect(try store.recordDerivatives([Self.derivative("a", job: 7, width: 10)], cloud: "demo", publicID: "folder/photo", version: version))
        #expect(try store.recordDerivatives([Self.derivative("a", job: 8, width: 20), Self.derivative("b", job: 8, width: 30)], cloud: "demo",
                                            publicID: "folder/photo", version: version))
        let read = try #require(try store.servedAsset(cloud: "demo", publicID: "folder/photo"))
        #expect(read.derivatives == ["a": Self.derivative("a", job: 8, width: 20), "b": Self.derivative("b", job: 8, width: 30)])
    }

    /// Four handles (four processes' connections on the SQL stores) record 25 derivatives
    /// each, one call at a time, all at once on one asset: every one of the 100 is kept (a
    /// read-modify-write of one document loses some).
    @Test(arguments: JobStoreKind.runnable)
    func concurrentWritersKeepEveryDerivative(kind: JobStoreKind) throws {
        let under = try Under(kind)
        let version = try under.store.recordUpload(Self.asset(), overwrite: false, eager: nil).asset.version
        let handles = try (0..<4).map { _ in try under.another() }
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 4) { writer in
            for n in 0..<25 {
                do {
                    try handles[writer].recordDerivatives([Self.derivative("w\(writer)-\(n)", job: JobID(writer))], cloud: "demo",
                                                          publicID: "folder/photo", version: version)
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
        let read = try #require(try under.store.servedAsset(cloud: "demo", publicID: "folder/photo"))
        #expect(read.derivatives.count == 100)
        #expect(Set(read.derivatives.keys) == Set((0..<4).flatMap { writer in (0..<25).map { "w\(writer)-\($0)" } }))
    }

    @Test(arguments: JobStoreKind.runnable)
    func notificationsAreListedWithTheAssetAndNewestFirst(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        _ = try store.recordUpload(Self.asset(), overwrite: false, eager: nil)
        _ = try store.recordUpload(Self.asset("other"), overwrite: false, eager: nil)
        let sent = Date(timeIntervalSince1970: 1_750_000_000)
        for (index, id) in ["folder/photo", "other", "folder/photo"].enumerated() {
            try store.recordNotification(NotificationRecord(cloud: "demo", publicID: id, url: "https://hooks.example/\(index)", type: index == 2 ? "eager" : "upload",
                                                            status: index == 1 ? nil : 200 + index, attempts: index + 1,
                                                            error: index == 1 ? "connection refused" : nil, sentAt: sent.addingTimeInterval(Double(index))),
                                         cloud: "demo", publicID: id)
        }
        let asset = try #require(try store.servedAsset(cloud: "demo", publicID: "folder/photo"))
        #expect(asset.notifications.map(\.url) == ["https://hooks.example/0", "https://hooks.example/2"])
        #expect(asset.notifications.last?.type == "eager" && asset.notifications.last?.status == 202 && asset.notifications.last?.attempts == 3)
        let recent = try store.recentNotifications(limit: 2)
        #expect(recent.map(\.url) == ["https://hooks.example/2", "https://hooks.example/1"])
        #expect(recent[1].status == nil && recent[1].error == "connection refused" && recent[1].publicID == "other" && !recent[1].delivered)
        #expect(abs(recent[1].sentAt.timeIntervalSince1970 - 1_750_000_001) < 0.01)
        #expect(try store.recentNotifications(limit: 10).count == 3)
    }

    /// `derive serve` on PostgreSQL may log in as a member of `derive_worker`: the role may keep
    /// every record (the upload with its job, derivatives, notifications) and read them back.
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func theWorkerRoleKeepsTheRecords() throws {
        let queue = try TestQueue(.postgres)
        let store = PostgresJobStore(url: try queue.login(as: "derive_worker"))
        let recorded = try store.recordUpload(Self.asset(), overwrite: false, eager: Self.eager())
        #expect(try store.recordDerivatives([Self.derivative("id0")], cloud: "demo", publicID: "folder/photo", version: recorded.asset.version))
        try store.recordNotification(NotificationRecord(cloud: "demo", publicID: "folder/photo", url: "https://hooks.example/a", type: "upload",
                                                        status: 200, attempts: 1, error: nil, sentAt: Date()), cloud: "demo", publicID: "folder/photo")
        _ = try store.recordUpload(Self.asset(), overwrite: true, eager: Self.eager(1))
        let read = try #require(try store.servedAsset(cloud: "demo", publicID: "folder/photo"))
        #expect(read.version == recorded.asset.version + 1 && read.notifications.count == 1 && read.derivatives.isEmpty)
        #expect(try store.recentNotifications(limit: 5).count == 1)
    }

    /// The faces are those a job's detection recorded for the original's content.
    @Test(arguments: JobStoreKind.runnable)
    func facesComeFromTheOriginalsRecordedAsset(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        _ = try store.recordUpload(Self.asset(), overwrite: false, eager: nil)
        #expect(try store.servedAsset(cloud: "demo", publicID: "folder/photo")?.faces == nil)
        let faces = FaceFindings(faces: [DetectedFace(box: Rect(x: 10, y: 20, width: 30, height: 40), score: 0.9),
                                         DetectedFace(box: Rect(x: 100, y: 120, width: 32, height: 41), score: 0.8)], detector: "centerface", milliseconds: 0)
        let record = AssetRecord(sha256: Self.sha, sourceURL: "file:///originals/x.jpg", bytes: 123_456, format: "jpeg", width: 1280, height: 886, pages: 1,
                                 hasAlpha: false, orientation: 1, colorSpace: "srgb", iccDescription: nil, exif: [:], hasLocation: false,
                                 perceptualHash: nil, faces: faces)
        let id = try #require(try store.submit([NewJob(payload: .object(["n": .string("faces")]))]).first).id
        let run = try #require(try store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try store.complete([Completion(run: run, record: DerivationRecord(asset: record, derivatives: []))]) == [id])
        let read = try #require(try store.servedAsset(cloud: "demo", publicID: "folder/photo")?.faces)
        #expect(read.faces.map(\.box) == faces.faces.map(\.box))
    }
}

/// Errors collected from concurrent work.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}
