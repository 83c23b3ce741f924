import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveTestSupport
import Foundation
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The dashboard's pages over a real HTTP server on loopback, on the in-memory queue (the same
/// seams PostgreSQL and SQLite pass the conformance suite on): what they show, that whatever a
/// job carries is shown as text, the security headers, paging, and `derive dashboard` itself.
@Suite struct DashboardTests {
    static let hostile = "https://evil.example/<script>alert(1)</script>.jpg"

    /// A queue with finished, failed and waiting jobs, one of them carrying markup everywhere.
    static func queue() throws -> (MemoryJobQueue, hostileJob: JobID, completed: [JobID]) {
        let queue = MemoryJobQueue()
        let ids = try queue.submit((0..<60).map { index in NewJob(payload: document("https://images.example/\(index).jpg")) }).map(\.id)
        let runs = try queue.claim(queues: ["default"], limit: 60, owner: "w", lease: 30).map(\.run)
        _ = try queue.complete(runs.map { Completion(run: $0, result: .object(["outputs": .array([]), "timings": .object(["fetch": .int(12)])])) })
        let hostileJob = try #require(try queue.submit([NewJob(payload: document(Self.hostile), maxAttempts: 1)]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.fail([Failure(run: run, error: DeriveError(.sourceRefused, "refused <img src=x onerror=alert(2)>"))], policy: retryAtOnce)
        _ = try queue.submit([NewJob(payload: document("https://images.example/waiting.jpg"), queue: "bulk")])
        try queue.report(WorkerStatus(id: "host-a:42:abc", host: "host-a", pid: 42, queues: ["default"], slots: 2, startedAt: Date(),
                                      seenAt: Date(), running: [], finished: [:], stopping: false))
        return (queue, hostileJob, ids)
    }

    static func get(_ port: Int, _ path: String) async throws -> (status: Int, headers: [String: String], body: String) {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
        let (data, response) = try await URLSession.shared.data(from: url)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, headers, String(decoding: data, as: UTF8.self))
    }

    @Test func pagesShowTheQueueAndEscapeWhatJobsCarry() async throws {
        let (queue, hostileJob, _) = try Self.queue()
        let server = try await DashboardServer.start(database: queue, port: 0)
        let overview = try await Self.get(server.port, "/")
        #expect(overview.status == 200 && overview.body.contains("id=\"queues\"") && overview.body.contains("bulk"))
        #expect(overview.body.contains("host-a:42:abc") && overview.body.contains("60 completed, 1 failed in the last hour"))
        let csp = try #require(overview.headers["content-security-policy"])
        #expect(csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"))
        #expect(overview.headers["x-content-type-options"] == "nosniff")
        // Not no-referrer: under it a browser's own forms carry Origin: null, which the Origin check refuses.
        #expect(overview.headers["referrer-policy"] == "same-origin")

        for path in ["/jobs?outcome=failed", "/jobs/\(hostileJob)", "/failures"] {
            let page = try await Self.get(server.port, path)
            #expect(page.status == 200 && (page.body.contains("/jobs/\(hostileJob)") || page.body.contains("Job #\(hostileJob)")), "\(path)")
            #expect(!page.body.contains("<script>alert") && !page.body.contains("<img src=x"), "\(path) lets markup through")
        }
        // The job's page shows its document and its error as they are: as text.
        let job = try await Self.get(server.port, "/jobs/\(hostileJob)")
        #expect(job.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;") && job.body.contains("refused &lt;img src=x onerror=alert(2)&gt;"))
        #expect(job.body.contains("source_refused") && job.body.contains("id=\"document\""))
        let failures = try await Self.get(server.port, "/failures")
        #expect(failures.body.contains("source_refused — 1 job"))
        #expect(try await Self.get(server.port, "/jobs/987654").status == 404)
        #expect(try await Self.get(server.port, "/no-such-page").status == 404)
        let script = try await Self.get(server.port, "/static/dashboard.js")
        #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        await server.stop()
    }

    /// The overview believes a worker's report only as far as the queue agrees: a worker
    /// killed mid-job is suspect, then gone, and its job, rescued and run by another worker,
    /// is shown under that worker alone.
    @Test func theOverviewShowsAKilledWorkerAsSuspectThenGoneAndItsJobUnderItsNewWorker() throws {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        let queue = MemoryJobQueue(clock: { now.withLock { $0 } })
        let id = try #require(try queue.submit([NewJob(payload: document("https://images.example/a.jpg"))]).first).id
        let first = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "killed", lease: 60).first)
        let started = now.withLock { $0 }
        func report(_ worker: String, running: [JobID]) throws {
            try queue.report(WorkerStatus(id: worker, host: "h", pid: 1, queues: ["default"], slots: 1, startedAt: started,
                                          seenAt: now.withLock { $0 }, running: running.map { .init(id: $0, stage: "decode", since: started) },
                                          finished: [:], stopping: false))
        }
        func overview() throws -> String {
            let at = now.withLock { $0 }
            let workers = try WorkerLiveness().workers(heardSince: .distantPast, from: queue, at: at)
            return Views.overviewLive(counts: try queue.counts(), workers: workers, throughput: [], now: at).description
        }
        func row(_ page: String, _ worker: String) -> String {
            page.components(separatedBy: "<tr>").first { $0.contains("<td>\(worker)</td>") } ?? ""
        }
        try report("killed", running: [first.run.id])
        var killed = row(try overview(), "killed")
        #expect(killed.contains("state-live") && killed.contains("#\(id)"))

        now.withLock { $0 = $0.addingTimeInterval(20) }
        killed = row(try overview(), "killed")
        #expect(killed.contains("state-suspect") && killed.contains("#\(id)"))

        now.withLock { $0 = $0.addingTimeInterval(45) }
        _ = try queue.rescueExpired(limit: 10, policy: retryAtOnce)
        let second = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "alive", lease: 60).first)
        try report("alive", running: [second.run.id])
        let page = try overview()
        killed = row(page, "killed")
        let alive = row(page, "alive")
        #expect(killed.contains("state-gone") && !killed.contains("#\(id)"))
        #expect(alive.contains("state-live") && alive.contains("#\(id)"))
    }

    @Test func finishedJobsArePagedByKeysetLinks() async throws {
        let (queue, hostileJob, completed) = try Self.queue()
        let server = try await DashboardServer.start(database: queue, port: 0)
        let first = try await Self.get(server.port, "/jobs")
        func links(_ body: String) -> [String] {
            body.components(separatedBy: "href=\"/jobs/").dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
        }
        // The waiting job first, then the newest 50 finished (the failed one, then completed ones).
        #expect(first.body.contains("id=\"live-jobs\""))
        let next = try #require(first.body.components(separatedBy: "href=\"").first { $0.hasPrefix("/jobs?") && $0.contains("before=") }?
            .split(separator: "\"").first.map(String.init))
        let second = try await Self.get(server.port, next.replacingOccurrences(of: "&amp;", with: "&"))
        let shown = Set((links(first.body) + links(second.body)).compactMap { Int64($0) })
        #expect(shown.isSuperset(of: Set(completed + [hostileJob])))
        #expect(!second.body.contains("rel=\"next\"") && !second.body.contains("id=\"live-jobs\""))
        await server.stop()
    }

    /// "Finished in the last day" leaves out a job finished two days ago, and the choice stays
    /// selected.
    @Test func finishedJobsAreFilteredByTime() async throws {
        let offset = Mutex(-2 * 86400.0)
        let queue = MemoryJobQueue(clock: { Date().addingTimeInterval(offset.withLock { $0 }) })
        func finish(_ source: String) throws -> JobID {
            let id = try #require(try queue.submit([NewJob(payload: document(source))]).first).id
            let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
            _ = try queue.complete([Completion(run: run, result: .object(["outputs": .array([])]))])
            return id
        }
        let old = try finish("https://images.example/old.jpg")
        offset.withLock { $0 = 0 }
        let recent = try finish("https://images.example/recent.jpg")
        let server = try await DashboardServer.start(database: queue, port: 0)
        let all = try await Self.get(server.port, "/jobs")
        #expect(all.body.contains("href=\"/jobs/\(old)\"") && all.body.contains("href=\"/jobs/\(recent)\""))
        let day = try await Self.get(server.port, "/jobs?hours=24")
        #expect(!day.body.contains("href=\"/jobs/\(old)\"") && day.body.contains("href=\"/jobs/\(recent)\""))
        #expect(day.body.contains("<option value=\"24\" selected>"))
        await server.stop()
    }

    @Test func aBadAddressIsRefusedClearly() async throws {
        await #expect(throws: DashboardError.self) { try await DashboardServer.start(database: MemoryJobQueue(), address: "not-an-address", port: 0) }
    }

    /// `derive dashboard` on the embedded queue: says where it listens, serves, stops on SIGTERM.
    @Test func theCommandServesAndStopsOnSIGTERM() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-dashboard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = try BackgroundProcess(["dashboard", "--port", "0", "--database", "sqlite:" + folder.appendingPathComponent("q.sqlite").path,
                                             "--store", folder.appendingPathComponent("store").path])
        // Stopped when the test ends, whatever happened (a second SIGTERM is harmless).
        defer {
            process.signal(SIGTERM)
            _ = process.wait(timeout: 10)
        }
        let listening = try #require(process.listeningPort(), "no listening line: \(process.logLines)")
        let overview = try await Self.get(listening, "/")
        #expect(overview.status == 200 && overview.body.contains("No jobs waiting or running."))
        for route in ["/login", "/jobs/1/retry", "/jobs/1/cancel", "/failures/retry", "/presets/web/reprocess", "/jobs/bulk", "/queues/pause",
                      "/queues/default/pause", "/queues/default/resume"] {
            let status = await RawHTTP.send(RawHTTP.request("POST", route, body: Array("a b".utf8)), port: listening).status
            #expect(status.map { (400..<500).contains($0) } == true, "POST \(route): \(String(describing: status))")
        }
        #expect(try await Self.get(listening, "/").status == 200, "the dashboard stopped after a malformed form")
        process.signal(SIGTERM)
        #expect(process.wait(timeout: 10) == 0)
        #expect(!process.logLines.contains { $0.contains("critical") || $0.contains("error") }, "\(process.logLines)")
    }
}

/// Acting from the dashboard: nobody without a token; with one, a logged-in browser's form
/// with its CSRF field, or a script with the bearer token; never a form from elsewhere.
@Suite struct DashboardActionTests {
    static let token = "s3cret-\(UUID().uuidString)"

    static func post(_ port: Int, _ path: String, form: String, cookie: String? = nil, bearer: String? = nil) async throws
        -> (status: Int, headers: [String: String], body: String) {
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)\(path)")))
        request.httpMethod = "POST"
        request.httpBody = Data(form.utf8)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        if let cookie { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)".lowercased()] = "\(value)" }
        return (http.statusCode, headers, String(decoding: data, as: UTF8.self))
    }

    final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            completionHandler(nil)
        }
    }

    static func failedJob(_ queue: MemoryJobQueue) throws -> JobID {
        let id = try #require(try queue.submit([NewJob(payload: document(), maxAttempts: 1)]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.fail([Failure(run: run, error: DeriveError(.sourceUnavailable, "origin answered 503"))], policy: retryAtOnce)
        return id
    }

    @Test func withoutATokenNothingActs() async throws {
        let queue = MemoryJobQueue()
        let id = try Self.failedJob(queue)
        let server = try await DashboardServer.start(database: queue, port: 0)
        let page = try await DashboardTests.get(server.port, "/jobs/\(id)")
        #expect(page.body.contains("Read-only") && !page.body.contains("<form method=\"post\""))
        #expect(try await Self.post(server.port, "/jobs/\(id)/retry", form: "csrf=x").status == 403)
        #expect(try await Self.post(server.port, "/jobs/\(id)/retry", form: "", bearer: "").status == 403)
        #expect(try queue.counts().isEmpty, "a refused action ran")
        await server.stop()
    }

    @Test func aLoggedInFormRetriesAndAFormFromElsewhereDoesNot() async throws {
        let queue = MemoryJobQueue()
        let id = try Self.failedJob(queue)
        let server = try await DashboardServer.start(database: queue, access: DashboardAccess(token: Self.token), port: 0)
        // Not logged in: a link to log in, no form.
        #expect(try await DashboardTests.get(server.port, "/jobs/\(id)").body.contains("href=\"/login\""))
        #expect(try await Self.post(server.port, "/login", form: "token=wrong").status == 403)
        let login = try await Self.post(server.port, "/login", form: "token=" + (Self.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        #expect(login.status == 303)
        let setCookie = try #require(login.headers["set-cookie"])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && !setCookie.contains(Self.token))
        let cookie = String(setCookie.split(separator: ";")[0])

        // Logged in, the page has the form with its CSRF field.
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/jobs/\(id)")))
        request.setValue(cookie, forHTTPHeaderField: "Cookie")
        let (data, _) = try await URLSession.shared.data(for: request)
        let page = String(decoding: data, as: UTF8.self)
        let csrf = try #require(page.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.split(separator: "\"").first.map(String.init))
        #expect(!page.contains(Self.token))

        // A form without the field (another site's) or with the cookie missing is refused.
        #expect(try await Self.post(server.port, "/jobs/\(id)/retry", form: "", cookie: cookie).status == 403)
        #expect(try await Self.post(server.port, "/jobs/\(id)/retry", form: "csrf=\(csrf)").status == 403)
        #expect(try queue.counts().isEmpty)

        let retried = try await Self.post(server.port, "/jobs/\(id)/retry", form: "csrf=\(csrf)", cookie: cookie)
        #expect(retried.status == 303)
        let location = try #require(retried.headers["location"])
        let rerun = try #require(Int64(location.split(separator: "?")[0].replacingOccurrences(of: "/jobs/", with: "")))
        #expect(try rerun != id && queue.job(rerun)?.state == .available)
        #expect(location.hasSuffix("?done=retried&from=\(id)"))
        // A script with the bearer token cancels it.
        #expect(try await Self.post(server.port, "/jobs/\(rerun)/cancel", form: "", bearer: Self.token).status == 303)
        #expect(try queue.job(rerun)?.state == .cancelled)
        await server.stop()
    }

    @Test func aFailureGroupIsRetriedFromItsPage() async throws {
        let queue = MemoryJobQueue()
        let ids = try (0..<3).map { _ in try Self.failedJob(queue) }
        let server = try await DashboardServer.start(database: queue, access: DashboardAccess(token: Self.token), port: 0)
        let done = try await Self.post(server.port, "/failures/retry", form: "code=source_unavailable&hours=1", bearer: Self.token)
        #expect(done.status == 303)
        #expect(try queue.counts().first?.states[.available] == ids.count)
        await server.stop()
    }
}

/// A job's outputs, shown on its page from the store by the keys the job recorded.
@Suite struct DashboardImageTests {
    @Test func aJobsPageShowsItsOutputsReadFromTheStore() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-dashboard-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = FileAssetStore(root: folder)
        let photo = try Data(contentsOf: Paths.fixture("photos/grace_hopper_noexif.jpg"))
        _ = try store.put([UInt8](photo), key: try StorageKey("abc/thumb-1.jpg"), contentType: "image/jpeg")
        let queue = MemoryJobQueue()
        let id = try #require(try queue.submit([NewJob(payload: document())]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        let outputs: JSONValue = .array([
            .object(["name": .string("thumb"), "key": .string("abc/thumb-1.jpg"), "format": .string("jpeg"), "width": .int(512), "height": .int(600)]),
            .object(["name": .string("gone"), "key": .string("abc/missing.webp"), "format": .string("webp"), "width": .int(10), "height": .int(10)]),
        ])
        _ = try queue.complete([Completion(run: run, result: .object(["outputs": outputs]))])
        let server = try await DashboardServer.start(database: queue, store: store, port: 0, thumbnailer: DashboardThumbnailTests.thumbnailer)
        let page = try await DashboardTests.get(server.port, "/jobs/\(id)")
        // The page shows a thumbnail at twice its 240×180 box and links to the output itself.
        #expect(page.body.contains("<a href=\"/jobs/\(id)/outputs/0\"><img src=\"/jobs/\(id)/outputs/0/thumbnail?box=job\" alt=\"thumb\""))
        let thumbnailURL = try #require(URL(string: "http://127.0.0.1:\(server.port)/jobs/\(id)/outputs/0/thumbnail?box=job"))
        let (small, smallResponse) = try await URLSession.shared.data(from: thumbnailURL)
        let size = try #require(ImageSniffer.facts(of: Array(small)))
        #expect((smallResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "image/webp")
        #expect(size.width <= 480 && size.height == 360 && small.count < photo.count, "\(size.width)×\(size.height), \(small.count) bytes")
        #expect(try await DashboardTests.get(server.port, "/jobs/\(id)/outputs/1/thumbnail?box=job").status == 404)
        #expect(try await DashboardTests.get(server.port, "/jobs/\(id)/outputs/7/thumbnail?box=job").status == 404)
        #expect(try await DashboardTests.get(server.port, "/jobs/\(id)/outputs/0/thumbnail?box=poster").status == 404)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/jobs/\(id)/outputs/0"))
        let (bytes, response) = try await URLSession.shared.data(from: url)
        #expect(bytes == photo && (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "image/jpeg")
        #expect(try await DashboardTests.get(server.port, "/jobs/\(id)/outputs/1").status == 404)
        #expect(try await DashboardTests.get(server.port, "/jobs/\(id)/outputs/7").status == 404)
        await server.stop()
    }
}
