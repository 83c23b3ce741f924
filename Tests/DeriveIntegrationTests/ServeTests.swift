import DeriveCurl
import DeriveDigest
import DeriveJobs
import DeriveLanguage
import DeriveServe
import DeriveSQLite
import DeriveTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `derive serve` as Cloudinary's clients see it: the real PyPI `cloudinary` SDK (pinned in
/// Scripts/test.sh) uploads, signs delivery URLs and reads the admin API against the built
/// binary on a loopback port, on the embedded SQLite queue it works itself.
@Suite(.serialized) struct ServeTests {
    static let cloud = "testcloud", key = "123456789012345", secret = "a-test-secret-0123456789"
    static let presets = #"{"thumbs": {"unsigned": true, "folder": "incoming", "eager": "c_fill,w_40,h_40/webp", "tags": "unsigned"}, "signed-only": {"unsigned": false}}"#

    static func start(_ folder: URL, extra: [String: String] = [:], arguments: [String] = []) throws -> (BackgroundProcess, Int) {
        let server = try BackgroundProcess(["serve", "--port", "0", "--database", "sqlite:" + folder.appendingPathComponent("q.sqlite").path,
                                            "--store", folder.appendingPathComponent("store").path, "--wait", "120"] + arguments,
                                           environment: ["DERIVE_CLOUD_NAME": cloud, "DERIVE_API_KEY": key, "DERIVE_API_SECRET": secret,
                                                         "DERIVE_UPLOAD_PRESETS": presets, "DERIVE_SLOTS": "2",
                                                         "DERIVE_SERVE_ALLOWED_TRANSFORMATIONS": "c_scale,w_33|t_nothing"].merging(extra) { $1 })
        let port = try #require(server.listeningPort(), "derive serve did not say where it listens: \(server.logLines.joined(separator: " "))")
        return (server, port)
    }

    /// A `derive serve` on a folder of its own for a test that drives it with the SDK: without
    /// the SDK the test does nothing (and fails under the test command, which installs it);
    /// after `body` the server is stopped with SIGTERM and must exit cleanly.
    static func withSDKServe(extra: [String: String] = [:], _ body: (_ port: Int) throws -> Void) throws {
        guard Python.has("cloudinary") else {
            #expect(!Python.required, "the test command installs the cloudinary package")
            return
        }
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, port) = try start(folder, extra: extra)
        do {
            try body(port)
        } catch {
            server.signal(SIGKILL)
            throw error
        }
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A notification target on a loopback port: it checks each notification's signature with
    /// the SDK (and that a changed body fails it) and appends one JSON line per notification.
    /// Stop it with SIGKILL: the test process ignores SIGTERM, and its children inherit that.
    static func receiver(port: Int, lines: URL) throws -> Process {
        let receiver = Process()
        receiver.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        receiver.arguments = ["python3", "-c", """
            import http.server, json, sys, cloudinary, cloudinary.utils
            cloudinary.config(cloud_name=sys.argv[3], api_key=sys.argv[4], api_secret=sys.argv[5])
            class Receiver(http.server.BaseHTTPRequestHandler):
                def do_POST(self):
                    body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                    stamp, signature = self.headers.get("X-Cld-Timestamp"), self.headers.get("X-Cld-Signature")
                    line = {"body": json.loads(body), "verified": cloudinary.utils.verify_notification_signature(body, stamp, signature),
                            "forged": cloudinary.utils.verify_notification_signature(body + " ", stamp, signature)}
                    with open(sys.argv[2], "a") as out:
                        out.write(json.dumps(line) + "\\n")
                    self.send_response(200)
                    self.end_headers()
                def log_message(self, *args):
                    pass
            http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()
            """, String(port), lines.path, cloud, key, secret]
        try receiver.run()
        return receiver
    }

    /// A free loopback port (nothing listens on it yet).
    static func freePort() throws -> Int {
        let free = try Python.run("import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
        return try #require(Int(free.output.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// Runs Tests/Servers/cloudinary_client.py against a server; its JSON report.
    static func client(_ port: Int, _ stage: String = "all", extra: [String] = []) throws -> J {
        let image = Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg").path
        let script = Paths.repository.appendingPathComponent("Tests/Servers/cloudinary_client.py").path
        let run = try Python.run("import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
                                 arguments: [script, String(port), cloud, key, secret, image, stage] + extra)
        try #require(run.status == 0, "the client script failed: \(run.output)")
        return J(try JSONSerialization.jsonObject(with: Data(run.output.utf8)))
    }

    static let imageBytes = (try? FileManager.default.attributesOfItem(atPath: Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg").path)[.size] as? Int) ?? -1

    @Test func theCloudinaryPythonSDKUploadsDeliversAndReads() throws {
        guard Python.has("cloudinary") else {
            #expect(!Python.required, "the test command installs the cloudinary package")
            return
        }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, port) = try Self.start(folder)
        let out = try Self.client(port)
        #expect(out["sdk"].string != nil && out["sdk"].string == out["pinned"].string, "the SDK is the pinned version")

        // Signed upload with eager outputs: Cloudinary's JSON, the outputs made before it answered.
        let signed = out["signed"]["ok"]
        #expect(signed["public_id"].string == "tests/photo", "\(out["signed"])")
        #expect(signed["format"].string == "jpg")
        #expect(signed["width"].int == 1280 && signed["height"].int == 886)
        #expect(signed["bytes"].int == Self.imageBytes)
        #expect(signed["tags"].strings == ["one", "two"])
        #expect(signed["context"]["custom"]["alt"].string == "six people")
        #expect((signed["version"].int ?? 0) > 1_700_000_000)
        #expect(signed["signature"].string?.count == 40)
        #expect(signed["url"].string?.hasPrefix("http://127.0.0.1:\(port)/\(Self.cloud)/image/upload/v") == true)
        let eager = signed["eager"]
        #expect(eager.array.count == 2)
        #expect(eager[0]["width"].int == 64 && eager[0]["height"].int == 48 && eager[0]["format"].string == "png")
        #expect(eager[0]["transformation"].string == "c_fill,h_48,w_64/png")
        #expect(eager[1]["width"].int == 50 && eager[1]["format"].string == "jpg")
        let gets = out["eager_get"]
        #expect(gets.array.map { $0["status"].int } == [200, 200])
        #expect(gets[0]["type"].string == "image/png")
        #expect(gets[0]["head"].string.flatMap { Data(base64Encoded: $0) }.map { Array($0.prefix(4)) } == [0x89, 0x50, 0x4E, 0x47])
        #expect(gets[0]["cache"].string?.contains("immutable") == true)
        #expect(out["eager_not_modified"]["status"].int == 304)
        #expect(out["original_get"]["status"].int == 200 && out["original_get"]["bytes"].int == Self.imageBytes)

        #expect(out["signed_sha256"]["ok"]["public_id"].string == "photo256", "\(out["signed_sha256"])")
        #expect(out["data_uri"]["ok"]["public_id"].string == "from-data", "\(out["data_uri"])")
        #expect(out["loopback_url"]["error"].string == "BadRequest", "the fetcher's rules refuse loopback: \(out["loopback_url"])")

        // Unsigned: with a preset marked unsigned (its folder and eager output), not otherwise.
        let unsigned = out["unsigned"]["ok"]
        #expect(unsigned["public_id"].string == "incoming/unsigned-photo", "\(out["unsigned"])")
        #expect(unsigned["eager"][0]["width"].int == 40)
        #expect(unsigned["tags"].strings == ["unsigned"])
        #expect(out["unsigned_not_allowed_preset"]["error"].string == "BadRequest")
        #expect(out["unsigned_eager"]["message"].string?.contains("eager parameter is not allowed") == true)

        // A wrong secret and a stale timestamp are refused.
        #expect(out["wrong_secret"]["error"].string == "AuthorizationRequired", "\(out["wrong_secret"])")
        #expect(out["stale"]["status"].int == 400 && out["stale"]["body"]["error"]["message"].string?.contains("Stale request") == true, "\(out["stale"])")
        #expect(out["by_hand"]["body"]["public_id"].string == "by-hand", "\(out["by_hand"])")

        // Delivery: a signed URL derives once, then is served as recorded; forged and unsigned are refused.
        #expect(out["signed_get"]["status"].int == 200 && out["signed_get"]["type"].string == "image/webp", "\(out["signed_get"])")
        #expect(out["signed_again"]["etag"].string != nil && out["signed_again"]["etag"].string == out["signed_get"]["etag"].string)
        #expect(out["forged_get"]["status"].int == 401)
        #expect(out["unsigned_get"]["status"].int == 401)
        #expect(out["long_signed_get"]["status"].int == 200, "\(out["long_signed_get"])")
        #expect(out["allowed_get"]["status"].int == 200 && out["allowed_get"]["type"].string == "image/jpeg", "an allowed transformation needs no signature: \(out["allowed_get"])")
        #expect(out["missing_get"]["status"].int == 404)

        // upload_large in four parts: one asset, the whole file, its eager output.
        #expect(out["large"]["ok"]["public_id"].string == "large" && out["large"]["ok"]["bytes"].int == Self.imageBytes, "\(out["large"])")
        #expect(out["large"]["ok"]["eager"][0]["width"].int == 20)

        // The admin read lists the derivatives; a wrong secret is refused.
        let resource = out["resource"]["ok"]
        #expect(resource["public_id"].string == "tests/photo", "\(out["resource"])")
        #expect(resource["derived"].array.count == 5, "two eager, the signed webp, the long-signed png and the allowed one: \(resource["derived"])")
        #expect(out["resource_wrong_secret"]["error"].string == "AuthorizationRequired")
        // The eager job is found by the name of the file the SDK uploaded (the dashboard's search).
        let queue = try SQLiteJobStore(path: folder.appendingPathComponent("q.sqlite").path)
        #expect(!(try queue.finishedJobs(JobFilter(sourceContains: "group-of-six.jpg"), after: nil, limit: 5).jobs.isEmpty))

        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }

    /// The production shape: `derive serve` on PostgreSQL only serves, a separate `derive work`
    /// (sharing the database and the store) makes the outputs, and the SDK sees the same API.
    @Test func onPostgreSQLWithASeparateWorker() throws {
        guard TestServers.postgresAvailable, Python.has("cloudinary") else {
            #expect(!Python.required, "the test command starts PostgreSQL and installs the cloudinary package")
            return
        }
        let (url, drop) = try TestQueue.createDatabase()
        defer { drop() }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let migrated = try DeriveBinary.run(["migrate", "--database", url])
        try #require(migrated.status == 0, "\(migrated.stderr)")
        let store = folder.appendingPathComponent("store").path
        let server = try BackgroundProcess(["serve", "--port", "0", "--database", url, "--store", store, "--wait", "120"],
                                           environment: ["DERIVE_CLOUD_NAME": Self.cloud, "DERIVE_API_KEY": Self.key, "DERIVE_API_SECRET": Self.secret,
                                                         "DERIVE_UPLOAD_PRESETS": Self.presets])
        let port = try #require(server.listeningPort(), "derive serve did not say where it listens: \(server.logLines.joined(separator: " "))")
        #expect(server.logLines.first?.contains("working the queue") == false)
        let worker = try BackgroundProcess(["work", "--database", url, "--store", store, "--slots", "2", "--poll-interval", "0.05"])
        let out = try Self.client(port)
        #expect(out["signed"]["ok"]["eager"][0]["width"].int == 64 && out["signed"]["ok"]["eager"][1]["width"].int == 50, "\(out["signed"])")
        #expect(out["eager_get"].array.map { $0["status"].int } == [200, 200])
        #expect(out["unsigned"]["ok"]["eager"][0]["width"].int == 40, "\(out["unsigned"])")
        #expect(out["signed_get"]["status"].int == 200 && out["forged_get"]["status"].int == 401 && out["unsigned_get"]["status"].int == 401)
        #expect(out["large"]["ok"]["bytes"].int == Self.imageBytes, "\(out["large"])")
        #expect(out["wrong_secret"]["error"].string == "AuthorizationRequired")
        #expect(out["resource"]["ok"]["derived"].array.count == 4, "\(out["resource"])")
        #expect(worker.logLines.contains { $0.contains("job done") }, "the separate worker made the outputs")
        worker.signal(SIGTERM)
        server.signal(SIGTERM)
        #expect(worker.wait(timeout: 30) == 0)
        #expect(server.wait(timeout: 30) == 0)
    }

    /// `eager_async` with a `notification_url`: the upload is answered at once, and the upload
    /// and eager notifications arrive signed so that the SDK's `verify_notification_signature`
    /// accepts them (and refuses a changed body); the record lists them. The receiver is on
    /// loopback, which the address rules allow here only through DERIVE_FETCH_ALLOW.
    @Test func eagerAsyncSendsNotificationsTheSDKVerifies() throws {
        try Self.withSDKServe(extra: ["DERIVE_FETCH_ALLOW": "127.0.0.1/32"]) { port in
            let out = try Self.client(port, "webhook")
            #expect(out["async"]["ok"]["eager"][0]["status"].string == "processing", "\(out["async"])")
            let notifications = out["notifications"].array
            #expect(Set(notifications.compactMap { $0["type"].string }) == ["upload", "eager"], "\(out["notifications"])")
            #expect(notifications.allSatisfy { $0["verified"].bool == true && $0["forged"].bool == false }, "\(out["notifications"])")
            let eager = notifications.first { $0["type"].string == "eager" }
            #expect(eager?["body"]["eager"][0]["width"].int == 25, "\(out["notifications"])")
            let resource = out["hooked_resource"]["ok"]
            #expect(resource["derived"].array.count == 1, "\(out["hooked_resource"])")
            #expect(resource["notifications"].array.count == 2 && resource["notifications"].array.allSatisfy { $0["status"].int == 200 }, "\(resource["notifications"])")
        }
    }

    /// `cloudinary.api.resource(..., faces=True)` lists the faces a job's detection found in
    /// the original (here a `g_face` eager output's), as Cloudinary's [x, y, width, height]
    /// boxes; an empty list before any job looked; nothing when not asked.
    @Test func theAdminReadListsTheFacesAJobFound() throws {
        try Self.withSDKServe { port in
            let out = try Self.client(port, "faces")
            #expect(out["before_faces"]["ok"]["faces"].array.isEmpty && out["before_faces"]["ok"]["faces"].value != nil, "\(out["before_faces"])")
            #expect(out["upload"]["ok"]["eager"][0]["width"].int == 60, "\(out["upload"])")
            let faces = out["faces"]["ok"]["faces"].array
            // The photograph has six people, all facing the camera.
            #expect(faces.count == 6, "\(out["faces"])")
            for face in faces {
                let box = face.array.compactMap(\.int)
                #expect(box.count == 4 && box[0] >= 0 && box[1] >= 0 && box[0] + box[2] <= 1280 && box[1] + box[3] <= 886, "\(face)")
                #expect(box.count == 4 && (20...400).contains(box[2]) && (20...400).contains(box[3]), "a face's size: \(face)")
            }
            #expect(out["not_asked"]["ok"]["public_id"].string == "faces" && out["not_asked"]["ok"]["faces"].value == nil, "\(out["not_asked"])")
        }
    }

    /// An upload's tags and context go into its eager job, where `if_!sale!_in_tags` and
    /// `if_ctx:!size!_eq_!small!` read them; a tag a job would refuse is refused at upload.
    @Test func anUploadsTagsAndContextDecideItsEagerOutputs() throws {
        try Self.withSDKServe { port in
            let out = try Self.client(port, "tags")
            #expect(out["tagged"]["ok"]["tags"].array.compactMap(\.string) == ["sale", "new"], "\(out["tagged"])")
            #expect(out["tagged"]["ok"]["eager"][0]["width"].int == 30, "tagged sale: \(out["tagged"])")
            #expect(out["untagged"]["ok"]["eager"][0]["width"].int == 90, "no tags: \(out["untagged"])")
            #expect(out["context"]["ok"]["eager"][0]["width"].int == 40, "\(out["context"])")
            #expect(out["bad_tag"]["message"].string?.contains("control character") == true, "\(out["bad_tag"])")
        }
    }

    /// A chunked upload survives `derive serve` killed between its parts: the parts are in the
    /// store, and the restarted server completes the upload with the last one.
    @Test func aChunkedUploadResumesAfterTheServerIsKilled() throws {
        guard Python.has("cloudinary") else {
            #expect(!Python.required, "the test command installs the cloudinary package")
            return
        }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (first, firstPort) = try Self.start(folder)
        let before = try Self.client(firstPort, "first-parts")["first-parts"]
        #expect(before.array.map { $0["ok"]["done"].bool } == [false, false], "\(before)")
        first.signal(SIGKILL)
        _ = first.wait(timeout: 10)
        let (second, secondPort) = try Self.start(folder)
        let after = try Self.client(secondPort, "last-part")
        let done = after["last-part"][0]["ok"]
        #expect(done["public_id"].string == "resumed", "\(after)")
        #expect(done["bytes"].int == Self.imageBytes)
        #expect(after["resumed_get"]["bytes"].int == Self.imageBytes)
        second.signal(SIGTERM)
        #expect(second.wait(timeout: 30) == 0)
    }

    /// A signed multipart upload of the fixture photograph, as raw bytes.
    static func signedUpload(_ parameters: [String: String]) throws -> [UInt8] {
        let image = try Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg"))
        var fields = parameters
        fields["timestamp"] = String(Int(Date().timeIntervalSince1970))
        fields["signature"] = CloudinarySigning.sign(fields, secret: Self.secret, algorithm: .sha1)
        fields["api_key"] = Self.key
        var body: [UInt8] = []
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            body += Array("--b\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        body += Array("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"k.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8) + Array(image)
            + Array("\r\n--b--\r\n".utf8)
        return RawHTTP.request("POST", "/v1_1/\(Self.cloud)/image/upload", headers: [("Content-Type", "multipart/form-data; boundary=b")], body: body)
    }

    /// A header of a raw reply (the first with that name, any case).
    static func header(_ name: String, in reply: RawHTTP.Reply) -> String? {
        let head = reply.text.components(separatedBy: "\r\n\r\n").first ?? ""
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// With an S3 store and `DERIVE_SERVE_REDIRECT=presigned`, delivery answers 302 to a
    /// presigned GET (valid for the configured seconds, no credentials in it) that fetches the
    /// object itself, for the original and a recorded derivative; `If-None-Match` still gets 304.
    @Test(.enabled(if: TestServers.available, "needs the S3 server Scripts/test.sh starts"))
    func deliveryRedirectsToPresignedS3URLs() async throws {
        let s3 = try TestServers.s3()
        let store = S3AssetStore(settings: S3Settings(endpoint: s3.endpoint, region: "us-east-1", accessKey: s3.accessKey, secretKey: s3.secretKey,
                                                      pathStyle: true, bucket: s3.bucket),
                                 bucket: s3.bucket, prefix: "serve/\(UUID().uuidString)/")
        var settings = ServeSettings(cloudName: Self.cloud, credentials: [Self.key: Self.secret], wait: 1)
        settings.presignedRedirectSeconds = 120
        let database = MemoryJobQueue()
        let service = CloudinaryService(settings: settings, database: database, store: store, fetcher: try CurlFetcher(settings: FetchSettings()),
                                        logger: .init(label: "presigned"))
        let server = try await ServeServer.start(service: service, port: 0)
        let uploaded = await RawHTTP.send(try Self.signedUpload(["public_id": "presigned"]), port: server.port)
        #expect(uploaded.status == 200, "\(uploaded.text.suffix(300))")
        let asset = try #require(try database.servedAsset(cloud: Self.cloud, publicID: "presigned"))
        let image = Array(try Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg")))
        // A derivative recorded as a worker would have (its object in the store).
        let derived = Array("a derivative's bytes".utf8)
        let key = "derived/presigned-50.jpg"
        _ = try store.put(derived, key: try StorageKey(key), contentType: "image/jpeg")
        let identity = try CloudinaryService.identity(transformation: "c_scale,w_50", format: "jpg")
        try database.recordDerivatives([ServedDerivative(identity: identity, transformation: "c_scale,w_50", format: "jpg", key: key, width: 50,
                                                         height: 35, bytes: derived.count, sha256: SHA256.hex(derived), jobID: 1)],
                                       cloud: Self.cloud, publicID: "presigned", version: asset.version)
        let origin = try #require(store.temporaryURLOrigin)
        for (path, expected) in [("v\(asset.version)/presigned.jpg", image), ("c_scale,w_50/v\(asset.version)/presigned.jpg", derived)] {
            let reply = await RawHTTP.send(RawHTTP.request("GET", "/\(Self.cloud)/image/upload/\(path)"), port: server.port)
            let location = try #require(Self.header("Location", in: reply), "\(reply.text.prefix(400))")
            #expect(reply.status == 302 && location.hasPrefix(origin + "/") && location.contains("X-Amz-Signature="), "\(location)")
            #expect(location.contains("X-Amz-Expires=120") && !location.contains(s3.secretKey))
            #expect(Self.header("Cache-Control", in: reply) == "private, max-age=60")
            let (fetched, answer) = try await URLSession.shared.data(from: try #require(URL(string: location)))
            #expect((answer as? HTTPURLResponse)?.statusCode == 200 && Array(fetched) == expected, "\(path)")
            let etag = try #require(Self.header("ETag", in: reply))
            let again = await RawHTTP.send(RawHTTP.request("GET", "/\(Self.cloud)/image/upload/\(path)", headers: [("If-None-Match", etag)]), port: server.port)
            #expect(again.status == 304)
        }
        await server.stop()
    }

    /// A plain upload with an eager output, `derive serve` killed (SIGKILL) while the request
    /// waits for the output: the asset and its eager job were recorded in one transaction, so
    /// the job is in the queue; a worker makes it, and the restarted server records the output
    /// on the first read that misses it and serves it without a signature, as an eager output.
    @Test func aPlainUploadKilledWhileWaitingLosesNothing() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (first, firstPort) = try Self.start(folder, arguments: ["--no-work"])
        let request = try Self.signedUpload(["public_id": "killed", "eager": "c_scale,w_30"])
        let answered = DispatchSemaphore(value: 0)
        let reply = Box<RawHTTP.Reply?>(nil)
        DispatchQueue.global().async {
            reply.value = RawHTTP.sendBlocking(request, port: firstPort, timeout: 60)
            answered.signal()
        }
        // The request is waiting for its eager output (no worker here): kill the server then.
        let queue = try SQLiteJobStore(path: folder.appendingPathComponent("q.sqlite").path)
        try waitUntil("the upload is recorded with its eager job", timeout: 60) {
            (try queue.servedAsset(cloud: Self.cloud, publicID: "killed"))?.eagerJobs.isEmpty == false
        }
        first.signal(SIGKILL)
        _ = first.wait(timeout: 10)
        answered.wait()
        #expect(reply.value?.status == nil, "the killed server did not answer")
        let recorded = try #require(try queue.servedAsset(cloud: Self.cloud, publicID: "killed"))
        #expect(recorded.derivatives.isEmpty)
        let job = try #require(recorded.eagerJobs.first?.jobID)
        #expect(try queue.job(job)?.state == .available, "the eager job is in the queue")

        let worked = try DeriveBinary.run(["work", "--until-idle", "--database", "sqlite:" + folder.appendingPathComponent("q.sqlite").path,
                                           "--store", folder.appendingPathComponent("store").path])
        #expect(worked.status == 0, "\(worked.stderr.suffix(2000))")
        #expect(try queue.job(job)?.state == .completed)

        let (second, secondPort) = try Self.start(folder, arguments: ["--no-work"])
        // Unsigned and not on the allowed list: served only because it is the recorded eager output.
        let get = RawHTTP.sendBlocking(RawHTTP.request("GET", "/\(Self.cloud)/image/upload/c_scale,w_30/v\(recorded.version)/killed.jpg"), port: secondPort)
        #expect(get.status == 200, "\(get.text.prefix(300))")
        let read = try #require(try queue.servedAsset(cloud: Self.cloud, publicID: "killed"))
        #expect(read.derivatives.values.map(\.width) == [30])
        second.signal(SIGTERM)
        #expect(second.wait(timeout: 30) == 0)
    }

    /// The notification outbox survives a kill: the target is down, `derive serve` tries it and
    /// is killed (SIGKILL) with the notification pending; the target comes up, serve restarts,
    /// and the notification arrives, signed so that the SDK's `verify_notification_signature`
    /// accepts it (and refuses a changed body), and is recorded once.
    @Test func aNotificationPendingWhenServeIsKilledIsSentAfterRestart() throws {
        guard Python.has("cloudinary") else {
            #expect(!Python.required, "the test command installs the cloudinary package")
            return
        }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // A loopback port nothing listens on yet.
        let hookPort = try Self.freePort()
        let extra = ["DERIVE_FETCH_ALLOW": "127.0.0.1/32"]
        let (first, firstPort) = try Self.start(folder, extra: extra, arguments: ["--no-work"])
        let upload = RawHTTP.sendBlocking(try Self.signedUpload(["public_id": "outboxed", "notification_url": "http://127.0.0.1:\(hookPort)/hook?t=1"]),
                                          port: firstPort, timeout: 60)
        #expect(upload.status == 200, "\(upload.text.prefix(300))")
        // The first attempts (at once, then 1 s later) fail, nothing listening; the next is
        // 3 s later: kill serve while it waits for that one.
        Thread.sleep(forTimeInterval: 2)
        first.signal(SIGKILL)
        _ = first.wait(timeout: 10)
        let queue = try SQLiteJobStore(path: folder.appendingPathComponent("q.sqlite").path)
        #expect(try queue.servedAsset(cloud: Self.cloud, publicID: "outboxed")?.notifications.isEmpty == true, "nothing recorded yet")

        // The target comes up: it checks each notification with the SDK and keeps one JSON line each.
        let received = folder.appendingPathComponent("received.jsonl")
        let receiver = try Self.receiver(port: hookPort, lines: received)
        defer { kill(receiver.processIdentifier, SIGKILL); receiver.waitUntilExit() }

        let (second, _) = try Self.start(folder, extra: extra, arguments: ["--no-work"])
        try waitUntil("the notification is delivered and recorded", timeout: 60) {
            (try queue.servedAsset(cloud: Self.cloud, publicID: "outboxed"))?.notifications.isEmpty == false
        }
        let lines = try String(contentsOf: received, encoding: .utf8).split(separator: "\n").map { J(try JSONSerialization.jsonObject(with: Data($0.utf8))) }
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?["verified"].bool == true && lines.first?["forged"].bool == false, "\(lines)")
        #expect(lines.first?["body"]["notification_type"].string == "upload" && lines.first?["body"]["public_id"].string == "outboxed", "\(lines)")
        let records = try #require(try queue.servedAsset(cloud: Self.cloud, publicID: "outboxed")).notifications
        #expect(records.count == 1 && records.first?.status == 200 && (records.first?.attempts ?? 0) >= 2, "\(records)")
        #expect(records.first?.url.contains("t=1") == false, "the query is redacted in the record")
        second.signal(SIGTERM)
        #expect(second.wait(timeout: 30) == 0)
    }

    /// An upload's notification is written in the upload's transaction and held until serve
    /// has answered. One never released (serve killed between recording and answering) is sent
    /// by the next serve when the hold runs out, its body made from the asset's record: the SDK
    /// verifies it and its `signature` is the asset's.
    @Test func aHeldNotificationNeverReleasedIsSentWithABodyFromTheRecord() throws {
        guard Python.has("cloudinary") else {
            #expect(!Python.required, "the test command installs the cloudinary package")
            return
        }
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let hookPort = try Self.freePort()
        let received = folder.appendingPathComponent("received.jsonl")
        let receiver = try Self.receiver(port: hookPort, lines: received)
        defer { kill(receiver.processIdentifier, SIGKILL); receiver.waitUntilExit() }
        // What a serve killed after recording the upload leaves: the asset and a held row with no body.
        let queue = try SQLiteJobStore(path: folder.appendingPathComponent("q.sqlite").path)
        let asset = ServedAsset(cloud: Self.cloud, publicID: "held/photo", version: 1_767_323_045, format: "jpg", width: 1280, height: 886,
                                bytes: 1234, sha256: String(repeating: "a", count: 64), originalKey: "originals/a.jpg", createdAt: Date())
        let held = OutboxNotification(cloud: Self.cloud, publicID: "held/photo", url: "http://127.0.0.1:\(hookPort)/hook", type: "upload",
                                      keyName: Self.key, body: nil, jobID: nil, base: "http://127.0.0.1:1")
        let recorded = try queue.recordUpload(asset, overwrite: false, eager: nil, notifications: [held], hold: 1)
        #expect(recorded.notificationIDs.count == 1)

        let (server, _) = try Self.start(folder, extra: ["DERIVE_FETCH_ALLOW": "127.0.0.1/32"], arguments: ["--no-work"])
        try waitUntil("the held notification is delivered and recorded", timeout: 60) {
            (try queue.servedAsset(cloud: Self.cloud, publicID: "held/photo"))?.notifications.isEmpty == false
        }
        let lines = try String(contentsOf: received, encoding: .utf8).split(separator: "\n").map { J(try JSONSerialization.jsonObject(with: Data($0.utf8))) }
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?["verified"].bool == true && lines.first?["forged"].bool == false, "\(lines)")
        let body = try #require(lines.first?["body"])
        #expect(body["notification_type"].string == "upload" && body["public_id"].string == "held/photo" && body["version"].int == 1_767_323_045,
                "\(lines)")
        let signature = try Python.run("import cloudinary.utils, sys; print(cloudinary.utils.api_sign_request({'public_id': 'held/photo', "
                                       + "'version': 1767323045}, '\(Self.secret)'))")
        #expect(body["signature"].string == signature.output.trimmingCharacters(in: .whitespacesAndNewlines), "\(lines)")
        #expect(body["url"].string?.hasPrefix("http://127.0.0.1:1/") == true, "the record's base: \(lines)")
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }

    /// A record `derive serve` wrote as JSON in the store before the rows is migrated on first
    /// read: the asset, its derivative (served unsigned, as recorded) and its notification.
    @Test func aJSONRecordInTheStoreIsMigratedOnFirstRead() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileAssetStore(root: folder)
        let image = Array(try Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg")))
        let sha = SHA256.hex(image)
        _ = try store.put(image, key: try StorageKey("originals/\(sha).jpg"), contentType: "image/jpeg")
        _ = try store.put(Array("derived bytes".utf8), key: try StorageKey("d/old.jpg"), contentType: "image/jpeg")
        let identity = try CloudinaryService.identity(transformation: "c_scale,w_50", format: "jpg")
        let legacy = """
            {"bytes":\(image.count),"context":{"alt":"old"},"createdAt":"2026-01-02T03:04:05Z","derivatives":{"\(identity)":{"bytes":13,\
            "format":"jpg","height":35,"jobID":3,"key":"d/old.jpg","sha256":"\(String(repeating: "c", count: 64))","transformation":"c_scale,w_50",\
            "width":50}},"eagerJobs":[],"format":"jpg","height":886,"notifications":[{"attempts":2,"sentAt":"2026-01-02T03:04:06Z","status":200,\
            "type":"upload","url":"https://hooks.example/x"}],"originalKey":"originals/\(sha).jpg","publicID":"old/photo","sha256":"\(sha)",\
            "tags":["a"],"version":1767323045,"width":1280}
            """
        _ = try store.put(Array(legacy.utf8), key: try StorageKey("serve/\(Self.cloud)/old/photo.json"), contentType: "application/json")
        let database = MemoryJobQueue()
        let service = CloudinaryService(settings: ServeSettings(cloudName: Self.cloud, credentials: [Self.key: Self.secret], wait: 1),
                                        database: database, store: store, fetcher: try CurlFetcher(settings: FetchSettings()), logger: .init(label: "legacy"))
        let server = try await ServeServer.start(service: service, port: 0)
        #expect(try database.servedAsset(cloud: Self.cloud, publicID: "old/photo") == nil)
        let get = await RawHTTP.send(RawHTTP.request("GET", "/\(Self.cloud)/image/upload/c_scale,w_50/v1767323045/old/photo.jpg"), port: server.port)
        #expect(get.status == 200 && get.text.hasSuffix("derived bytes"), "\(get.text.prefix(300))")
        let migrated = try #require(try database.servedAsset(cloud: Self.cloud, publicID: "old/photo"))
        #expect(migrated.version == 1_767_323_045 && migrated.sha256 == sha && migrated.tags == ["a"] && migrated.context == ["alt": "old"])
        #expect(migrated.derivatives[identity]?.key == "d/old.jpg" && migrated.derivatives.count == 1)
        #expect(migrated.notifications.map(\.attempts) == [2] && migrated.notifications.first?.url == "https://hooks.example/x")
        await server.stop()
    }

    /// Malformed requests of every kind get a 4xx and the service keeps answering; an upload
    /// whose Content-Length is over the limit is refused before its body is sent.
    @Test(arguments: [UInt64(11), 12])
    func malformedRequestsAnswer4xxAndTheServiceStaysUp(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileAssetStore(root: folder)
        let service = CloudinaryService(settings: ServeSettings(cloudName: Self.cloud, credentials: [Self.key: Self.secret],
                                                                presets: ["thumbs": UploadPreset(unsigned: true)], maxUploadBytes: 1 << 20, wait: 1),
                                        database: MemoryJobQueue(), store: store, fetcher: try CurlFetcher(settings: FetchSettings()), logger: .init(label: "fuzz"))
        let server = try await ServeServer.start(service: service, port: 0)
        let routes = ["/v1_1/\(Self.cloud)/image/upload", "/v1_1/other/image/upload", "/v1_1/\(Self.cloud)/resources/image/upload/x",
                      "/\(Self.cloud)/image/upload/x.jpg", "/\(Self.cloud)/image/upload/s--AAAAAAAA--/w_10/x.jpg", "/\(Self.cloud)/image/upload/v1/a/b.png",
                      "/\(Self.cloud)/image/upload/w_10,c_/v1/x.jpg", "/", "/%zz", "/v1_1/\(Self.cloud)/image/upload/%00"]
        let types = ["multipart/form-data; boundary=b", "multipart/form-data; boundary=\"b\"", "multipart/form-data", "multipart/form-data; boundary=",
                     "application/x-www-form-urlencoded", "application/json", "text/plain", ""]
        let bodies: [[UInt8]] = [
            Array("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\n\r\nnot an image\r\n--b--\r\n".utf8),
            Array("--b\r\nContent-Disposition: form-data; name=\"upload_preset\"\r\n\r\nthumbs\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n\u{89}PNG\r\n--b--".utf8),
            Array("--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--".utf8), Array("--b\r\n\r\n".utf8), Array("--b".utf8), Array("--b--".utf8),
            Array("--b\r\nContent-Disposition: form-data; name=\"".utf8), Array("--b\r\nX: y\r\n".utf8) + Array(repeating: UInt8(ascii: "a"), count: 10_000),
            Array("file=data:image/png;base64,%%%&upload_preset=thumbs".utf8), Array("file=file:///etc/passwd&upload_preset=thumbs".utf8),
            Array("file=s3://bucket/key&upload_preset=thumbs".utf8), Array("signature=abc&api_key=\(Self.key)&timestamp=99999999999&file=x".utf8),
            Array("signature=abc&api_key=nobody&timestamp=1&file=x".utf8),
            Array("signature=abc&api_key=\(Self.key)&timestamp=-9223372036854775808&file=x".utf8),
            Array("signature=abc&api_key=\(Self.key)&timestamp=9223372036854775807&file=x".utf8), Array("a b".utf8), Array("%".utf8), [0xff, 0xfe, 0x00],
            Array("upload_preset=thumbs&file=http://127.0.0.1:1/x.jpg".utf8), Array("upload_preset=thumbs&public_id=../../etc&file=data:,x".utf8),
        ]
        for route in routes {
            for body in bodies {
                for type in types {
                    let reply = await RawHTTP.send(RawHTTP.request("POST", route, headers: type.isEmpty ? [] : [("Content-Type", type)], body: body), port: server.port)
                    let status = try #require(reply.status, "no answer to POST \(route) as \(type)")
                    #expect((400..<500).contains(status), "POST \(route) with \(String(decoding: body.prefix(40), as: UTF8.self).debugDescription) as \(type): \(status) \(reply.text.suffix(200))")
                }
            }
            let get = await RawHTTP.send(RawHTTP.request("GET", route), port: server.port)
            #expect(get.status.map { (400..<500).contains($0) } == true, "GET \(route): \(get.status.map(String.init) ?? "no answer")")
        }
        // Over the limit by its declared length: refused from the headers alone.
        let declared = Array("POST /v1_1/\(Self.cloud)/image/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 999999999\r\n\r\n".utf8)
        let refused = await RawHTTP.send(declared, port: server.port)
        #expect(refused.status == 413)
        // Random requests from the dashboard fuzzer's grammar, on these routes.
        for index in 0..<400 {
            var request = WebSurfaceFuzzTests.randomRequest(&random, job: 1)
            if random.chance(0.5) {
                let line = "POST \(random.pick(routes)) HTTP/1.1\r\n"
                if let end = request.firstIndex(of: UInt8(ascii: "\n")) { request = Array(line.utf8) + request[(end + 1)...] }
            }
            let reply = await RawHTTP.send(request, port: server.port, timeout: 3)
            if let status = reply.status { #expect(status != 500 && (200..<600).contains(status), "\(status) for \(String(decoding: request.prefix(200), as: UTF8.self).debugDescription)") }
            if index.isMultiple(of: 50) {
                #expect(await RawHTTP.send(RawHTTP.request("GET", "/healthz"), port: server.port).status == 200, "stopped answering after request \(index)")
            }
        }
        #expect(await RawHTTP.send(RawHTTP.request("GET", "/healthz"), port: server.port).status == 200)
        await server.stop()
    }

    /// The multipart parser never traps: random bytes, and every truncation and many
    /// single-byte changes of a valid body, either parse or throw.
    @Test func theMultipartParserNeverTraps() throws {
        var random = SeededRandom(seed: 31)
        let valid = Array("preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"public_id\"\r\n\r\nsample\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".jpg\"\r\nContent-Type: image/jpeg\r\n\r\n\u{FF}\u{D8}\u{FF}data\r\n--XyZ--\r\n".utf8)
        let form = try MultipartForm.parse(valid, boundary: "XyZ")
        #expect(form.fields["public_id"] == "sample")
        #expect(form.filename == "a \"b\".jpg")
        #expect(form.file == Array("\u{FF}\u{D8}\u{FF}data".utf8))
        var parsed = 0, refused = 0
        for cut in 0...valid.count {
            if (try? MultipartForm.parse(Array(valid.prefix(cut)), boundary: "XyZ")) != nil { parsed += 1 } else { refused += 1 }
        }
        for _ in 0..<20_000 {
            var body = valid
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<body.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: body[index] = UInt8.random(in: 0...255, using: &random)
                case 1: body.remove(at: index)
                default: body.insert(random.pick([0x0D, 0x0A, 0x2D, 0x22, 0x3B, 0x3D]), at: index)
                }
            }
            if (try? MultipartForm.parse(body, boundary: "XyZ")) != nil { parsed += 1 } else { refused += 1 }
            let noise = (0..<Int.random(in: 0...200, using: &random)).map { _ in random.pick([0x2D, 0x0D, 0x0A, 0x58, 0x79, 0x5A, UInt8.random(in: 0...255, using: &random)]) }
            _ = try? MultipartForm.parse(noise, boundary: "XyZ")
        }
        #expect(parsed > 0 && refused > 0)
        #expect(MultipartForm.boundary(contentType: "multipart/form-data; boundary=\"a b\"") == "a b")
        #expect(MultipartForm.boundary(contentType: "multipart/form-data; boundary=" + String(repeating: "x", count: 71)) == nil)
        #expect(MultipartForm.boundary(contentType: "text/plain; boundary=x") == nil)
    }

    /// Signatures as the SDK computes them (values from `cloudinary.utils` 1.46.3, by hand).
    @Test func signaturesMatchTheSDK() throws {
        guard Python.has("cloudinary") else {
            #expect(!Python.required)
            return
        }
        let parameters = ["timestamp": "1700000000", "public_id": "a&b", "eager": "c_fill,w_10|w_20/png", "tags": "x,y", "file": "ignored", "api_key": "k"]
        for (algorithm, version) in [("sha1", 2), ("sha256", 2), ("sha1", 1)] {
            let script = """
                import sys, cloudinary.utils as u
                p = {"timestamp": "1700000000", "public_id": "a&b", "eager": "c_fill,w_10|w_20/png", "tags": "x,y"}
                print(u.api_sign_request(p, "sekret", "\(algorithm)", \(version)))
                """
            let expected = try Python.run(script).output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(CloudinarySigning.sign(parameters, secret: "sekret", algorithm: algorithm == "sha1" ? .sha1 : .sha256, version: version) == expected)
            #expect(CloudinarySigning.verify(parameters, signature: expected, secret: "sekret"))
            #expect(!CloudinarySigning.verify(parameters, signature: expected, secret: "other"))
        }
        let url = try Python.run("""
            import cloudinary, cloudinary.utils as u
            cloudinary.config(cloud_name="c", api_secret="sekret")
            print(u.cloudinary_url("folder/id", width=10, crop="scale", format="png", sign_url=True)[0])
            """).output
        let signature = try #require(url.components(separatedBy: "s--").dropFirst().first?.components(separatedBy: "--").first)
        #expect(CloudinarySigning.verifyURL("c_scale,w_10/folder/id.png", signature: signature, secret: "sekret"))
        #expect(!CloudinarySigning.verifyURL("c_scale,w_11/folder/id.png", signature: signature, secret: "sekret"))
    }
}

/// A value one thread sets and another reads after a semaphore.
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A JSON value from JSONSerialization, navigated without a chain of casts (nil all the way
/// down once a step is missing).
struct J: CustomStringConvertible {
    let value: Any?
    init(_ value: Any?) { self.value = value }
    subscript(_ key: String) -> J { J((value as? [String: Any])?[key]) }
    subscript(_ index: Int) -> J {
        guard let items = value as? [Any], items.indices.contains(index) else { return J(nil) }
        return J(items[index])
    }
    var int: Int? { value as? Int }
    var string: String? { value as? String }
    var bool: Bool? { value as? Bool }
    var array: [J] { (value as? [Any])?.map { J($0) } ?? [] }
    var strings: [String]? { value as? [String] }
    var description: String {
        guard let value else { return "nil" }
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) { return String(decoding: data.prefix(2000), as: UTF8.self) }
        return "\(value)"
    }
}
