import DeriveCurl
import DeriveDigest
import DeriveJobs
import DeriveLanguage
import DeriveHTTP
@testable import DeriveServe
import DeriveTestSupport
import Foundation
import Testing

/// The delivery cache (issue 39): a hot derivative answered from memory, with no database or
/// store read, and dropped when another process overwrites the asset or replaces the
/// derivative (through the database's generation number), within the poll interval.
@Suite struct DeliveryCacheTests {
    static let cloud = "cachecloud"

    /// What one test runs against: a queue of `kind` seen by the server and by "another
    /// process" (another handle on the same database), a folder store, a running server.
    struct Setup {
        let folder: URL
        let store: FileAssetStore
        let other: any JobStore & ServedAssets
        let service: CloudinaryService
        let server: ServeServer
        let keep: AnyObject?
    }

    static func setUp(_ kind: JobStoreKind) async throws -> Setup {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-cache-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = FileAssetStore(root: folder)
        let served: any ServeDatabase, other: any JobStore & ServedAssets, keep: AnyObject?
        switch kind {
        case .memory:
            let queue = MemoryJobQueue()
            (served, other, keep) = (queue, queue, nil)
        case .sqlite, .postgres:
            let queue = try TestQueue(kind == .sqlite ? .sqlite : .postgres)
            (served, other, keep) = (queue.store, try queue.openAnother(), queue)
        }
        let service = CloudinaryService(settings: ServeSettings(cloudName: cloud, credentials: ["k": "s"], wait: 1), database: served, store: store,
                                        fetcher: try CurlFetcher(settings: FetchSettings()), logger: .init(label: "cache"))
        return Setup(folder: folder, store: store, other: other, service: service, server: try await ServeServer.start(service: service, port: 0),
                     keep: keep)
    }

    static func upload(_ bytes: [UInt8], version: Int, in setup: Setup, overwrite: Bool) throws -> StorageKey {
        let key = try StorageKey("originals/\(SHA256.hex(bytes)).jpg")
        _ = try setup.store.put(bytes, key: key, contentType: "image/jpeg")
        let asset = ServedAsset(cloud: cloud, publicID: "photo", version: version, format: "jpg", width: 10, height: 10, bytes: bytes.count,
                                sha256: SHA256.hex(bytes), originalKey: key.value, createdAt: Date(), tags: [], context: [:])
        _ = try setup.other.recordUpload(asset, overwrite: overwrite, eager: nil, notifications: [], hold: 0)
        return key
    }

    static func derivative(_ text: String, version: Int, in setup: Setup) throws -> StorageKey {
        let bytes = Array(text.utf8)
        let key = try StorageKey("derived/\(SHA256.hex(bytes)).jpg")
        _ = try setup.store.put(bytes, key: key, contentType: "image/jpeg")
        let identity = try CloudinaryService.identity(transformation: "c_scale,w_50", format: "jpg")
        try setup.other.recordDerivatives([ServedDerivative(identity: identity, transformation: "c_scale,w_50", format: "jpg", key: key.value, width: 5,
                                                            height: 5, bytes: bytes.count, sha256: SHA256.hex(bytes), jobID: 1)],
                                          cloud: cloud, publicID: "photo", version: version)
        return key
    }

    static func get(_ path: String, _ setup: Setup, method: String = "GET", headers: [(String, String)] = []) async -> RawHTTP.Reply {
        await RawHTTP.send(RawHTTP.request(method, "/\(cloud)/image/upload/\(path)", headers: headers), port: setup.server.port)
    }

    static func body(_ reply: RawHTTP.Reply) -> String {
        reply.text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    }

    /// Asks until the answer's body is `expected` (the server's poll reads the database every
    /// 100 ms), for at most 30 s (the whole suite on two cores can hold a test up for
    /// seconds); the seconds it took, or nil.
    static func waitFor(_ expected: String, _ path: String, _ setup: Setup) async -> Double? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(30) {
            if body(await get(path, setup)) == expected { return Double((ContinuousClock.now - start).components.attoseconds) / 1e18 }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    @Test(arguments: JobStoreKind.runnable)
    func aHotDerivativeIsAnsweredFromMemoryUntilAnotherProcessReplacesIt(_ kind: JobStoreKind) async throws {
        let setup = try await Self.setUp(kind)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let version = 1_700_000_000
        _ = try Self.upload(Array("original one".utf8), version: version, in: setup, overwrite: false)
        let firstKey = try Self.derivative("derivative one", version: version, in: setup)
        // In step with the database before the first answer is kept (the poll would drop an
        // answer kept under the number it read before these writes).
        await setup.service.refreshCache()
        let path = "c_scale,w_50/v\(version)/photo.jpg"
        let first = await Self.get(path, setup)
        #expect(first.status == 200 && Self.body(first) == "derivative one", "\(first.text.prefix(300))")

        // Its object gone from the store, it is still answered: from memory, with no read.
        try setup.store.delete(firstKey)
        let kept = await Self.get(path, setup)
        #expect(kept.status == 200 && Self.body(kept) == "derivative one", "\(kept.text.prefix(300))")
        // HEAD, If-None-Match and If-Modified-Since from the same entry.
        let head = await Self.get(path, setup, method: "HEAD")
        #expect(head.status == 200 && ServeTests.header("Content-Length", in: head) == "14" && Self.body(head).isEmpty, "\(head.text)")
        let etag = try #require(ServeTests.header("ETag", in: first))
        #expect(await Self.get(path, setup, headers: [("If-None-Match", etag)]).status == 304)
        let modified = try #require(ServeTests.header("Last-Modified", in: first))
        #expect(await Self.get(path, setup, headers: [("If-Modified-Since", modified)]).status == 304)
        // A range is read from the store (gone): never from memory.
        #expect(await Self.get(path, setup, headers: [("Range", "bytes=0-3")]).status == 404)

        // Another process replaces the derivative: the server sees it within its poll.
        _ = try Self.derivative("derivative two", version: version, in: setup)
        let replaced = await Self.waitFor("derivative two", path, setup)
        #expect(replaced != nil, "the replaced derivative not served after 30 s")

        // And overwrites the asset: the versionless original URL serves the new original.
        #expect(Self.body(await Self.get("photo.jpg", setup)) == "original one")
        _ = try Self.upload(Array("original two".utf8), version: version + 10, in: setup, overwrite: true)
        let overwritten = await Self.waitFor("original two", "photo.jpg", setup)
        #expect(overwritten != nil, "the new original not served after 30 s")
        await setup.server.stop()
    }

    @Test func theCacheKeepsAVariantPerVaryingHeaderAndStaysWithinItsBytes() {
        let cache = DeliveryCache(maxBytes: 800)
        cache.observe(generation: 1)
        func request(_ path: String, accept: String? = nil) -> HTTPRequest {
            HTTPRequest(method: .GET, path: path, headers: accept.map { [HTTPHeader("Accept"): $0] } ?? [:])
        }
        func response(_ body: String, vary: String? = nil) -> HTTPResponse {
            HTTPResponse(statusCode: .ok, headers: vary.map { [HTTPHeader("Vary"): $0] } ?? [:], body: Data(body.utf8))
        }
        func body(_ request: HTTPRequest) -> String? { cache.answer(request).map { String(decoding: $0.body, as: UTF8.self) } }

        cache.keep(response("avif", vary: "Accept"), for: request("/a", accept: "image/avif"), generation: 1)
        cache.keep(response("jpeg", vary: "Accept"), for: request("/a", accept: "image/jpeg"), generation: 1)
        #expect(body(request("/a", accept: "image/avif")) == "avif" && body(request("/a", accept: "image/jpeg")) == "jpeg")
        #expect(body(request("/a", accept: "image/webp")) == nil && body(request("/a")) == nil)
        // Made from an older reading of the database, or larger than an eighth of the bound,
        // or not a whole 200: not kept.
        cache.keep(response("old"), for: request("/b"), generation: 0)
        cache.keep(response(String(repeating: "x", count: 101)), for: request("/c"), generation: 1)
        cache.keep(HTTPResponse(statusCode: .notFound, body: Data("no".utf8)), for: request("/d"), generation: 1)
        #expect(body(request("/b")) == nil && body(request("/c")) == nil && body(request("/d")) == nil)
        // Within its bytes: the oldest go first.
        for index in 0..<10 { cache.keep(response(String(repeating: "\(index)", count: 100)), for: request("/n\(index)"), generation: 1) }
        #expect(body(request("/n9"))?.count == 100 && body(request("/n0")) == nil && body(request("/a", accept: "image/avif")) == nil)
        // The number moves: nothing is kept.
        cache.observe(generation: 2)
        #expect(body(request("/n9")) == nil)
    }
}
