import DeriveCurl
import DeriveDigest
import DeriveJobs
import DeriveLanguage
import DeriveServe
import DeriveTestSupport
import Foundation
import Synchronization
import Testing

/// Upload mappings (auto-upload, issue 39) as the pinned SDK sets them, against a running
/// `derive serve` and a loopback origin (a Python http.server over Tests/Fixtures) that
/// DERIVE_FETCH_ALLOW allows: the Admin API's five calls and their refusals, the first delivery
/// of a mapped public id fetching it once (the second request and a signed transformation read
/// the store), and a deleted mapping bringing nothing new while what it brought stays.
extension DeliveryTests {
    @Test(.enabled(if: Python.has("cloudinary"), "needs the cloudinary package the test command installs"))
    func uploadMappingsFetchAMappedFolderOnItsFirstDelivery() throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (origin, originPort, log) = try Self.startOrigin(folder)
        // SIGKILL: the test process ignores SIGTERM (and SIGINT), and its children inherit that.
        defer { kill(origin.processIdentifier, SIGKILL); origin.waitUntilExit() }
        let (server, port) = try ServeTests.start(folder, extra: ["DERIVE_FETCH_ALLOW": "127.0.0.1/32"])
        defer { server.signal(SIGKILL) }
        try waitUntil("the origin listens", timeout: 30) {
            RawHTTP.sendBlocking(RawHTTP.request("GET", "/README.md"), port: originPort, timeout: 2).status == 200
        }
        let out = try ServeTests.client(port, "mappings", extra: [String(originPort)])

        #expect(out["create"]["ok"]["message"].string == "created", "\(out["create"])")
        #expect(out["create_again"]["error"].string == "AlreadyExists", "\(out["create_again"])")
        #expect(out["create_other"]["ok"]["message"].string == "created", "\(out["create_other"])")
        #expect(out["bad_template"]["error"].string == "BadRequest" && out["bad_template"]["message"].string?.contains("http or https") == true,
                "\(out["bad_template"])")
        #expect(out["update"]["ok"]["message"].string == "updated" && out["update_missing"]["error"].string == "NotFound",
                "\(out["update"]) \(out["update_missing"])")
        #expect(out["one"]["ok"]["folder"].string == "legacy" && out["one"]["ok"]["template"].string == "http://127.0.0.1:\(originPort)/", "\(out["one"])")
        let first = out["first_page"]["ok"], second = out["second_page"]["ok"]
        #expect(first["mappings"].array.map { $0["folder"].string } == ["legacy"] && first["next_cursor"].string != nil, "\(out["first_page"])")
        #expect(second["mappings"].array.map { $0["folder"].string } == ["old/site"] && second["next_cursor"].string == nil, "\(out["second_page"])")

        let plain = out["plain"].array
        #expect(plain.count == 2 && plain.allSatisfy { $0["status"].int == 200 && $0["bytes"].int == ServeTests.imageBytes && $0["sniffed"].string == "image/jpeg" },
                "\(out["plain"])")
        #expect(out["versionless"]["status"].int == 200, "\(out["versionless"])")
        #expect(out["signed_transformed"]["status"].int == 200 && out["signed_transformed"]["size"].array.first?.int == 50, "\(out["signed_transformed"])")
        #expect(out["unsigned_transformed"]["status"].int == 401, "the transformation rules hold for mapped assets: \(out["unsigned_transformed"])")
        #expect(out["missing"]["status"].int == 404, "\(out["missing"])")
        #expect(out["resource"]["ok"]["public_id"].string == "legacy/group-of-six" && out["resource"]["ok"]["format"].string == "jpg", "\(out["resource"])")
        let fetches = try String(contentsOf: log, encoding: .utf8).components(separatedBy: "GET /group-of-six.jpg").count - 1
        #expect(fetches == 1, "fetched on the first delivery, then read from the store: \(fetches)")

        #expect(out["delete"]["ok"]["message"].string == "deleted" && out["delete_again"]["error"].string == "NotFound", "\(out["delete"]) \(out["delete_again"])")
        #expect(out["after_delete_recorded"]["status"].int == 200, "what a mapping brought stays: \(out["after_delete_recorded"])")
        #expect(out["after_delete_new"]["status"].int == 404, "a deleted mapping brings nothing new: \(out["after_delete_new"])")
        #expect(out["wrong_secret"]["error"].string == "AuthorizationRequired", "\(out["wrong_secret"])")
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }
}

/// Issue 39, item 5: first requests for one derivative at once make one job (the dedupe key of
/// a delivery's derivation), in process with no worker, so every request waits for the same job
/// until its wait runs out.
@Suite struct FirstRequestTests {
    @Test func concurrentFirstRequestsForOneDerivativeMakeOneJob() async throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (service, database, _) = try DeliveryHeaderFaultTests.serviceWithOnePhoto(folder, wait: 1)
        let woken = Mutex(0)
        service.whenQueueing { woken.withLock { $0 += 1 } }
        let server = try await ServeServer.start(service: service, port: 0)
        let signature = "s--" + CloudinarySigning.urlSignature("c_scale,w_40/p/gh.jpg", secret: ServeTests.secret) + "--"
        let path = "/\(ServeTests.cloud)/image/upload/\(signature)/c_scale,w_40/p/gh.jpg"
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<6 { group.addTask { await RawHTTP.send(RawHTTP.request("GET", path), port: server.port).status } }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 420 }, "no worker: each waited for the job and was told to ask again: \(statuses)")
        let jobs = try database.jobs(state: nil, queue: nil, limit: 100)
        #expect(jobs.count == 1, "one job for six first requests: \(jobs.map(\.id))")
        #expect(woken.withLock { $0 } == 6, "each submission rings the worker (the dedupe key answers the same job)")
        await server.stop()
    }
}
