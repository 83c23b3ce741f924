import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveDashboard
import DeriveTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The asset, preset and schedule pages over a real HTTP server, on the embedded SQLite queue
/// (AssetCatalogConformanceTests holds both stores to the same answers): what they show, that
/// what a source or preset carries is shown as text, and that reprocessing from the page
/// counts first, needs the token, and queues one task.
@Suite struct DashboardRecordsTests {
    static let token = "records-token-0123456789"
    static let hostileSource = "https://images.example/<script>alert(3)</script>.jpg"

    /// A recorded asset (Grace Hopper's portrait, her face found) with a scaled output made by
    /// preset `cards` v1, a crop made in the job itself, and the object of the scaled one in a
    /// folder store; then `cards` saved again as v2, which makes the v1 output stale.
    static func recorded(_ queue: TestQueue, store: any AssetStore) throws -> (asset: Int64, jpeg: [UInt8]) {
        let sha = String(repeating: "d", count: 64)
        let faces = FaceFindings(faces: [DetectedFace(box: Rect(x: 181, y: 140, width: 187, height: 186), score: 1.05)],
                                 detector: "dlib-hog", milliseconds: 0)
        let asset = AssetRecord(sha256: sha, sourceURL: hostileSource, bytes: 58_000, format: "jpeg", width: 512, height: 600, pages: 1,
                                hasAlpha: false, orientation: 1, colorSpace: "srgb", iccDescription: nil, exif: [:], hasLocation: false,
                                perceptualHash: nil, faces: faces)
        let jpeg = try Array(Data(contentsOf: Paths.fixtures.appendingPathComponent("photos/grace_hopper_noexif.jpg")))
        func derivative(_ name: String, chain: String, mode: String, width: Int, height: Int, preset: String?) throws -> DerivativeRecord {
            let key = "\(sha)/\(name).jpg"
            _ = try store.put(jpeg, key: try StorageKey(key), contentType: "image/jpeg")
            return DerivativeRecord(outputName: name, breakpointWidth: nil,
                                    chain: .object(["name": .string(name), "chain": .array([.object(["resize": .object(["mode": .string(mode)])])])]),
                                    chainHash: chain, presetName: preset, presetVersion: preset == nil ? nil : 1, storageKey: key,
                                    url: "file:///\(key)", format: "jpeg", width: width, height: height, bytes: jpeg.count,
                                    sha256: String(repeating: "e", count: 64), quality: 80, frames: 1, hasAlpha: false,
                                    blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", dominantColor: "#705040", timings: .object([:]))
        }
        _ = try queue.store.savePreset(name: "cards", outputs: .array([.object(["name": .string("card"), "chain": .string("c_scale,w_256")])]))
        let record = DerivationRecord(asset: asset, derivatives: [
            try derivative("card", chain: "c1", mode: "scale", width: 256, height: 300, preset: "cards"),
            try derivative("square", chain: "s1", mode: "fill", width: 64, height: 64, preset: nil),
        ], source: SourceRecord(url: hostileSource, etag: "\"v1\"", lastModified: nil))
        let id = try #require(try queue.store.submit([NewJob(payload: .object(["source": .string(hostileSource)]))]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try queue.store.complete([Completion(run: run, record: record)]) == [id])
        _ = try queue.store.savePreset(name: "cards", outputs: .array([.object(["name": .string("card"), "chain": .string("c_scale,w_320")])]))
        let page = try queue.store.recentAssets(before: nil, limit: 1, outputsPerAsset: 1)
        return (try #require(page.assets.first).id, jpeg)
    }

    static func folder() throws -> FileAssetStore {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-records-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return FileAssetStore(root: root)
    }

    @Test func theSheetAndAnAssetShowItsOutputsFacesSourcesAndStaleness() async throws {
        let queue = try TestQueue(.sqlite)
        let store = try Self.folder()
        let (id, jpeg) = try Self.recorded(queue, store: store)
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, store: store, port: 0)
        defer { Task { await server.stop() } }

        let sheet = try await DashboardTests.get(server.port, "/assets")
        #expect(sheet.status == 200 && sheet.body.contains("href=\"/assets/\(id)\""), "\(sheet.body)")
        #expect(sheet.body.contains("data-blurhash=\"LEHV6nWB2yk8pyo0adR*.7kCMdnj\"") && sheet.body.contains("2 outputs"))
        #expect(sheet.body.contains("alert(3)") && !sheet.body.contains("<script>alert(3)"), "the source is shown, as text")

        let page = try await DashboardTests.get(server.port, "/assets/\(id)")
        #expect(page.status == 200)
        #expect(page.body.contains("1 face found by dlib-hog"), "\(page.body)")
        // The boxes are drawn over the scaled output (the whole source), not the crop.
        let card = try #require(try queue.store.asset(id: id)?.derivatives.first { $0.record.outputName == "card" })
        #expect(page.body.contains("<image href=\"/derivatives/\(card.id)\"") && page.body.contains("class=\"face\" x=\"181\" y=\"140\""))
        #expect(page.body.contains("stale: the preset is at v2") && page.body.contains("Preset cards v1") && page.body.contains("Outputs named in the job"))
        #expect(page.body.contains("&quot;v1&quot;"), "the source's ETag, from revalidation's table")
        #expect(!page.body.contains("<script>alert(3)"))

        let image = try await Self.data(server.port, "/derivatives/\(card.id)")
        #expect(image.status == 200 && image.type == "image/jpeg" && image.body == jpeg)
        #expect(try await DashboardTests.get(server.port, "/assets/999999").status == 404)
        #expect(try await Self.data(server.port, "/derivatives/999999").status == 404)
        #expect(try await DashboardTests.get(server.port, "/assets/not-a-number").status == 404)
    }

    @Test func aPresetShowsWhatChangedAndReprocessingCountsFirstThenQueuesOneTask() async throws {
        let queue = try TestQueue(.sqlite)
        _ = try Self.recorded(queue, store: try Self.folder())
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, access: DashboardAccess(token: Self.token), port: 0)
        defer { Task { await server.stop() } }

        let list = try await DashboardTests.get(server.port, "/presets")
        #expect(list.status == 200 && list.body.contains("href=\"/presets/cards\"") && list.body.contains("v2"))
        let preset = try await DashboardTests.get(server.port, "/presets/cards")
        #expect(preset.body.contains("<del>-") && preset.body.contains("c_scale,w_256") && preset.body.contains("<ins>+") && preset.body.contains("c_scale,w_320"),
                "\(preset.body)")
        #expect(preset.body.contains("1 asset has outputs of this preset; <span class=\"state-stale\">1</span> of them") && preset.body.contains("Log in</a> to reprocess"),
                "\(preset.body)")
        let count = try await DashboardTests.get(server.port, "/presets/cards/reprocess?which=stale")
        #expect(count.body.contains("1 asset match."), "\(count.body)")
        #expect(try await DashboardTests.get(server.port, "/presets/nothing/reprocess").status == 404)

        // Without the token: refused, nothing queued.
        let before = try queue.store.jobs(state: nil, queue: nil, limit: 50).count
        #expect(try await DashboardActionTests.post(server.port, "/presets/cards/reprocess", form: "which=stale").status == 403)
        #expect(try queue.store.jobs(state: nil, queue: nil, limit: 50).count == before)
        // With it: one task job, which a worker expands into one job per stale asset.
        let queued = try await DashboardActionTests.post(server.port, "/presets/cards/reprocess", form: "which=stale", bearer: Self.token)
        #expect(queued.status == 303)
        let task = try #require(try queue.store.jobs(state: nil, queue: nil, limit: 50).first { $0.payload["task"] == .string("reprocess") })
        #expect(queued.headers["location"] == "/jobs/\(task.id)?done=reprocess-queued")
        #expect(task.payload["preset"] == .string("cards") && task.payload["filter"]?["stale"] == .bool(true))
        let again = try await DashboardActionTests.post(server.port, "/presets/cards/reprocess", form: "which=stale", bearer: Self.token)
        #expect(again.headers["location"] == "/jobs/\(task.id)?done=reprocess-waiting")

        // "All" is every asset with outputs of the preset, as the preset's page counts them: an
        // asset recorded without any is not among them.
        let other = AssetRecord(sha256: String(repeating: "f", count: 64), sourceURL: "https://images.example/other.jpg", bytes: 1000, format: "jpeg",
                                width: 10, height: 10, pages: 1, hasAlpha: false, orientation: 1, colorSpace: "srgb", iccDescription: nil, exif: [:],
                                hasLocation: false, perceptualHash: nil, faces: nil)
        let id = try #require(try queue.store.submit([NewJob(payload: .object(["source": .string("https://images.example/other.jpg")]), queue: "other")]).first).id
        let run = try #require(try queue.store.claim(queues: ["other"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try queue.store.complete([Completion(run: run, record: DerivationRecord(asset: other, derivatives: [], source: nil))]) == [id])
        #expect(try queue.store.recentAssets(before: nil, limit: 10, outputsPerAsset: 1).assets.count == 2)
        let all = try await DashboardTests.get(server.port, "/presets/cards/reprocess?which=all")
        #expect(all.body.contains("1 asset match."), "\(all.body)")
        let queuedAll = try await DashboardActionTests.post(server.port, "/presets/cards/reprocess", form: "which=all", bearer: Self.token)
        let allTask = try #require(try queue.store.jobs(state: nil, queue: nil, limit: 50).first { $0.payload["task"] == .string("reprocess") && $0.id != task.id })
        #expect(queuedAll.headers["location"] == "/jobs/\(allTask.id)?done=reprocess-queued" && allTask.payload["filter"]?["derived"] == .bool(true))
    }

    @Test func schedulesShowTheirNextAndLastFire() async throws {
        let queue = try TestQueue(.sqlite)
        let schedule = Schedule(name: "nightly", cron: "0 3 * * *", timeZone: "Europe/Paris",
                                action: ReprocessPlan(preset: "cards", filter: AssetFilter(stale: true)).taskDocument,
                                createdAt: Date().addingTimeInterval(-86400 * 2))
        try queue.store.saveSchedule(schedule)
        let fireTime = try #require(try schedule.dueFire(at: Date()))
        let job = try #require(try queue.store.fire("nightly", at: fireTime, job: try schedule.job(firedAt: fireTime)))
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, port: 0)
        defer { Task { await server.stop() } }
        let page = try await DashboardTests.get(server.port, "/schedules")
        #expect(page.body.contains("nightly") && page.body.contains("0 3 * * * (Europe/Paris)") && page.body.contains("reprocess cards (stale)"), "\(page.body)")
        #expect(page.body.contains("href=\"/jobs/\(job)\""))
        let next = try #require(try CronExpression("0 3 * * *", timeZone: "Europe/Paris").nextFire(after: Date()))
        #expect(page.body.contains(ISO8601DateFormatter().string(from: next)))
    }

    @Test func theInMemoryQueueSaysItKeepsNoRecords() async throws {
        let server = try await DashboardServer.start(database: MemoryJobQueue(), port: 0)
        defer { Task { await server.stop() } }
        for path in ["/assets", "/presets", "/schedules"] {
            let page = try await DashboardTests.get(server.port, path)
            #expect(page.status == 404 && page.body.contains("keeps no assets, presets or schedules"), "\(path)")
        }
    }

    @Test func aPresetDiffShowsOnlyTheChangedLinesWithContext() {
        let old = (1...10).map { "line \($0)" }.joined(separator: "\n")
        let new = old.replacingOccurrences(of: "line 5", with: "line five")
        let diff = Views.diff(from: old, to: new, context: 1).description
        #expect(diff.contains("<del>- line 5</del>") && diff.contains("<ins>+ line five</ins>"))
        #expect(diff.contains("line 4") && diff.contains("line 6") && !diff.contains("line 2") && !diff.contains("line 9"))
    }

    static func data(_ port: Int, _ path: String) async throws -> (status: Int, type: String?, body: [UInt8]) {
        let (data, response) = try await URLSession.shared.data(from: try #require(URL(string: "http://127.0.0.1:\(port)\(path)")))
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.value(forHTTPHeaderField: "Content-Type"), Array(data))
    }
}

/// With an S3 store the dashboard hands the browser a presigned URL for each picture (it never
/// serves the bytes or the credentials), and its policy allows images from that one origin.
@Suite(.enabled(if: TestServers.available, "needs the S3 server Scripts/test.sh starts"))
struct DashboardPresignedImageTests {
    @Test func picturesAreRedirectedToPresignedURLsTheBrowserMayLoad() async throws {
        let queue = try TestQueue(.sqlite)
        let s3 = try TestServers.s3()
        let settings = S3Settings(endpoint: s3.endpoint, region: "us-east-1", accessKey: s3.accessKey, secretKey: s3.secretKey,
                                  pathStyle: true, bucket: s3.bucket)
        let store = S3AssetStore(settings: settings, bucket: s3.bucket, prefix: "dashboard/\(UUID().uuidString)/")
        let (id, jpeg) = try DashboardRecordsTests.recorded(queue, store: store)
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, store: store, port: 0)
        defer { Task { await server.stop() } }
        let card = try #require(try queue.store.asset(id: id)?.derivatives.first { $0.record.outputName == "card" })

        let page = try await DashboardTests.get(server.port, "/assets/\(id)")
        let origin = try #require(store.temporaryURLOrigin)
        #expect(page.headers["content-security-policy"]?.contains("img-src 'self' data: \(origin);") == true, "\(page.headers)")
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/derivatives/\(card.id)")))
        request.httpMethod = "GET"
        let session = URLSession(configuration: .ephemeral, delegate: DashboardActionTests.NoRedirects(), delegateQueue: nil)
        let (body, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        let location = try #require(http.value(forHTTPHeaderField: "Location"))
        #expect(http.statusCode == 302 && body.isEmpty)
        #expect(location.hasPrefix(origin + "/") && location.contains("X-Amz-Signature=") && location.contains("X-Amz-Expires=300"), "\(location)")
        #expect(!location.contains(s3.secretKey))
        // The presigned URL alone (no credentials) gets the object.
        let (fetched, answer) = try await URLSession.shared.data(from: try #require(URL(string: location)))
        #expect((answer as? HTTPURLResponse)?.statusCode == 200 && Array(fetched) == jpeg)
    }
}
