import DeriveLanguage
import DeriveJobs
@testable import DeriveDashboard
import DeriveVips
import DeriveTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The asset pages show thumbnails made at twice the size shown (libvips, injected as the CLI
/// injects it), not the outputs themselves: the sheet's bytes drop, a thumbnail is made once
/// and revalidated by its ETag, and nothing but a recorded derivative can be asked for.
@Suite struct DashboardThumbnailTests {
    /// Photographs recorded as the outputs of four assets, with their true sizes.
    static let photos: [(file: String, format: String, width: Int, height: Int)] = [
        ("jolla-phone.jpg", "jpeg", 3264, 2448), ("canon-sx60hs_orient6.jpg", "jpeg", 2048, 1536),
        ("coffee_noexif.png", "png", 600, 400), ("grace_hopper_noexif.jpg", "jpeg", 512, 600),
    ]

    static func seed(_ queue: TestQueue, store: any AssetStore) throws {
        for (index, photo) in photos.enumerated() {
            let bytes = try Array(Data(contentsOf: Paths.fixtures.appendingPathComponent("photos/\(photo.file)")))
            let sha = String(repeating: String(index), count: 64)
            let key = "\(sha)/full.\(photo.format == "png" ? "png" : "jpg")"
            _ = try store.put(bytes, key: try StorageKey(key), contentType: photo.format == "png" ? "image/png" : "image/jpeg")
            let asset = AssetRecord(sha256: sha, sourceURL: "https://images.example/\(photo.file)", bytes: bytes.count, format: photo.format,
                                    width: photo.width, height: photo.height, pages: 1, hasAlpha: false, orientation: 1, colorSpace: "srgb",
                                    iccDescription: nil, exif: [:], hasLocation: false, perceptualHash: nil, faces: nil)
            let derivative = DerivativeRecord(outputName: "full", breakpointWidth: nil, chain: .object(["name": .string("full")]), chainHash: "h\(index)",
                                              presetName: nil, presetVersion: nil, storageKey: key, url: "file:///\(key)", format: photo.format,
                                              width: photo.width, height: photo.height, bytes: bytes.count,
                                              sha256: String(repeating: "abcdef"[String.Index(utf16Offset: index, in: "abcdef")], count: 64),
                                              quality: 80, frames: 1, hasAlpha: false, blurhash: nil, dominantColor: nil, timings: .object([:]))
            _ = try queue.store.submit([NewJob(payload: document("https://images.example/\(photo.file)"))])
            let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
            _ = try queue.store.complete([Completion(run: run, record: DerivationRecord(asset: asset, derivatives: [derivative]))])
        }
    }

    static let thumbnailer = DashboardThumbnailer { bytes, width, height in
        (try Thumbnails.webp(bytes, width: width, height: height, settings: EngineSettings()), "image/webp")
    }

    /// Every picture the sheet names, fetched: its bytes in all, and each answer.
    static func sheetBytes(_ port: Int) async throws -> (total: Int, answers: [(path: String, status: Int, type: String, width: Int, height: Int)]) {
        let sheet = try await DashboardTests.get(port, "/assets")
        let sources = sheet.body.components(separatedBy: "<img src=\"").dropFirst().map { String($0.prefix { $0 != "\"" }) }
        #expect(sources.count == photos.count, "\(sheet.body)")
        var total = 0, answers: [(String, Int, String, Int, Int)] = []
        for path in sources {
            let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path.replacingOccurrences(of: "&amp;", with: "&"))"))
            let (data, response) = try await URLSession.shared.data(from: url)
            let http = try #require(response as? HTTPURLResponse)
            total += data.count
            let size = ImageSniffer.facts(of: Array(data))
            answers.append((path, http.statusCode, http.value(forHTTPHeaderField: "Content-Type") ?? "", size?.width ?? 0, size?.height ?? 0))
        }
        return (total, answers)
    }

    @Test func theSheetShowsThumbnailsAtTwiceTheSizeShownAndItsBytesDrop() async throws {
        let queue = try TestQueue(.sqlite)
        let store = try DashboardRecordsTests.folder()
        defer { try? FileManager.default.removeItem(at: store.root) }
        try Self.seed(queue, store: store)
        let plain = try await DashboardServer.start(database: queue.store, records: queue.store, store: store, port: 0)
        let before = try await Self.sheetBytes(plain.port)
        await plain.stop()
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, store: store, port: 0, thumbnailer: Self.thumbnailer)
        defer { Task { await server.stop() } }
        let after = try await Self.sheetBytes(server.port)
        // Without a thumbnailer the outputs themselves; with one, WebPs within 500×192 (twice
        // the sheet's 250×96), the shape kept.
        let originals = try Self.photos.reduce(0) { $0 + (try Data(contentsOf: Paths.fixtures.appendingPathComponent("photos/\($1.file)")).count) }
        #expect(before.total == originals)
        #expect(after.answers.allSatisfy { $0.status == 200 && $0.type == "image/webp" && $0.width <= 500 && $0.height <= 192 && $0.height >= 150 },
                "\(after.answers)")
        #expect(after.total * 20 < before.total, "the sheet's pictures: \(after.total) bytes with thumbnails, \(before.total) without")
        print("dashboard sheet, \(Self.photos.count) assets: \(before.total) bytes of outputs, \(after.total) bytes of thumbnails")
    }

    @Test func aThumbnailIsMadeOnceRevalidatedByItsTagAndOnlyForARecordedDerivative() async throws {
        let queue = try TestQueue(.sqlite)
        let store = try DashboardRecordsTests.folder()
        defer { try? FileManager.default.removeItem(at: store.root) }
        try Self.seed(queue, store: store)
        let made = Counter()
        let counting = DashboardThumbnailer { bytes, width, height in
            made.add()
            return try Self.thumbnailer.make(bytes, width, height)
        }
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, store: store, port: 0, thumbnailer: counting)
        defer { Task { await server.stop() } }
        let id = try #require(try queue.store.recentAssets(before: nil, limit: 10, outputsPerAsset: 1).assets.first { $0.width == 3264 }?.outputs.first).id
        let path = "/derivatives/\(id)/thumbnail?box=row"
        func fetch(_ tag: String? = nil) async throws -> (status: Int, tag: String?, cache: String?, body: Data) {
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)\(path)")))
            if let tag { request.setValue(tag, forHTTPHeaderField: "If-None-Match") }
            let (body, response) = try await URLSession(configuration: .ephemeral).data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            return (http.statusCode, http.value(forHTTPHeaderField: "ETag"), http.value(forHTTPHeaderField: "Cache-Control"), body)
        }
        let first = try await fetch()
        let tag = try #require(first.tag)
        #expect(first.status == 200 && first.cache == "private, max-age=86400" && tag == "\"\(String(repeating: "a", count: 64))-row\"")
        let second = try await fetch()
        #expect(second.status == 200 && second.body == first.body && made.value == 1, "made \(made.value) times")
        let again = try await fetch(tag)
        #expect(again.status == 304 && again.body.isEmpty && made.value == 1)
        // Within 320×240 for a row of the asset page (the 3264×2448 output at 320×240).
        let size = try #require(ImageSniffer.facts(of: Array(first.body)))
        #expect(size.format == .webp && size.width == 320 && size.height == 240, "\(size)")
        // Nothing else can be asked for: no such row, no box, a box not offered, a path that
        // tries to climb out.
        for bad in ["/derivatives/98765/thumbnail?box=row", "/derivatives/\(id)/thumbnail", "/derivatives/\(id)/thumbnail?box=huge",
                    "/derivatives/..%2F..%2Fetc%2Fpasswd/thumbnail?box=row", "/derivatives/\(id)/..%2F..%2Fthumbnail?box=row"] {
            #expect(try await DashboardTests.get(server.port, bad).status == 404, "\(bad)")
        }
    }

    final class Counter: Sendable {
        private let count = Mutex(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }
}

/// The thumbnails kept in memory never hold more than their bound; the least recently used go
/// first.
@Suite struct ThumbnailCacheTests {
    @Test func theLeastRecentlyUsedGoFirstAndTheBoundHolds() {
        let cache = ThumbnailCache(limit: 100)
        cache.put("a", bytes: [UInt8](repeating: 1, count: 40), mediaType: "image/webp")
        cache.put("b", bytes: [UInt8](repeating: 2, count: 40), mediaType: "image/webp")
        #expect(cache.get("a")?.bytes.first == 1)
        cache.put("c", bytes: [UInt8](repeating: 3, count: 40), mediaType: "image/webp")
        #expect(cache.get("b") == nil && cache.get("a") != nil && cache.get("c") != nil && cache.bytes == 80)
        // The same key again replaces its bytes; one larger than the whole bound is not kept.
        cache.put("a", bytes: [UInt8](repeating: 4, count: 10), mediaType: "image/jpeg")
        #expect(cache.get("a")?.mediaType == "image/jpeg" && cache.bytes == 50)
        cache.put("d", bytes: [UInt8](repeating: 5, count: 101), mediaType: "image/webp")
        #expect(cache.get("d") == nil && cache.bytes == 50)
    }
}
