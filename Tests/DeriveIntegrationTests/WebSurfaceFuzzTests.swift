import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveTestSupport
import DeriveWorker
import Foundation
import Testing

/// No request stops a process that serves Derive's pages: every route of the dashboard and of
/// a worker's metrics port (which serves the same pages with `--dashboard`) gets thousands of
/// random and malformed requests (bodies, queries, headers, methods, lengths, multipart), and
/// the server answers each one it can read with a status and keeps serving. A trap in a
/// handler would end this test's process, so it fails loudly rather than quietly.
@Suite struct WebSurfaceFuzzTests {
    static let token = "fuzz-token-0123456789abcdef"

    /// The bodies that once killed the dashboard (`a b`: a space in a form) and their kin.
    static let hostileBodies: [[UInt8]] = [
        Array("a b".utf8), Array("%".utf8), Array("%zz".utf8), Array("token=%".utf8), Array("token=%4".utf8),
        Array("{\"token\": 1}".utf8), Array("<script>".utf8), Array("\"".utf8), Array("a\nb".utf8), Array("a\r\nb=c".utf8),
        [0xff, 0xfe, 0x00, 0x80], Array("token=%C3%28&csrf=%ED%A0%80".utf8), Array("&&&==&=".utf8), Array("=".utf8),
        Array("csrf=\u{1F600}&which=all&code=%00".utf8), Array(repeating: UInt8(ascii: "%"), count: 70_000),
        Array("--x\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nabc\r\n--x--\r\n".utf8),
    ]

    static let contentTypes = ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", ""]

    /// Every POST route, with a job id that exists, one that does not, and no number at all.
    static func postRoutes(job: JobID) -> [String] {
        ["/login", "/jobs/\(job)/retry", "/jobs/\(job)/cancel", "/jobs/987654/retry", "/jobs/x%20y/cancel",
         "/failures/retry", "/presets/web/reprocess", "/presets/%zz/reprocess", "/jobs/bulk", "/queues/pause", "/queues/default/pause",
         "/queues/default/resume", "/queues/%zz/pause"]
    }

    static let getRoutes = ["/", "/live", "/jobs", "/jobs/1", "/jobs/1/outputs/0", "/login", "/failures", "/assets", "/assets/1",
                            "/derivatives/1", "/presets", "/presets/web", "/presets/web/reprocess", "/schedules",
                            "/static/dashboard.css", "/metrics", "/healthz", "/readyz", "/no-such-page", "/queues", "/static/bulk.js",
                            "/totals", "/totals?hours=1", "/totals?hours=%zz", "/derivatives/1/thumbnail?box=sheet", "/derivatives/1/thumbnail?box=%00",
                            "/jobs/1/outputs/0/thumbnail?box=job", "/jobs/1/outputs/0/thumbnail?box=%00"]

    @Test func malformedFormsToEveryPostRouteAnswer4xxAndTheServersStayUp() async throws {
        let (queue, job) = try Self.queue()
        let dashboard = try await DashboardServer.start(database: queue, access: DashboardAccess(token: Self.token), port: 0)
        let metrics = try await MetricsServer.start(port: 0, metrics: Metrics(), more: DashboardServer.routes(
            database: queue, records: nil, store: nil, access: DashboardAccess(token: Self.token), logger: .init(label: "fuzz")))
        for port in [dashboard.port, metrics.port] {
            for route in Self.postRoutes(job: job) {
                for body in Self.hostileBodies {
                    for type in Self.contentTypes {
                        // A generous wait: on a loaded machine (the whole suite at once) an answer can take seconds.
                        let reply = await RawHTTP.send(RawHTTP.request("POST", route, headers: type.isEmpty ? [] : [("Content-Type", type)], body: body),
                                                       port: port, timeout: 30)
                        let status = try #require(reply.status, "no answer to POST \(route) with \(body.prefix(20)) as \(type)")
                        #expect((400..<500).contains(status), "POST \(route) with \(body.prefix(20)) as \(type): \(status)")
                    }
                }
            }
            #expect(await RawHTTP.send(RawHTTP.request("GET", "/"), port: port, timeout: 120).status == 200)
        }
        // The job is untouched: nothing acted without the token.
        #expect(try queue.job(job)?.state == .available)
        await dashboard.stop()
        await metrics.stop()
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomRequestsNeverStopTheServers(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let (queue, job) = try Self.queue()
        let dashboard = try await DashboardServer.start(database: queue, access: DashboardAccess(token: Self.token), port: 0)
        let metrics = try await MetricsServer.start(port: 0, metrics: Metrics(), more: DashboardServer.routes(
            database: queue, records: nil, store: nil, access: DashboardAccess(token: Self.token), logger: .init(label: "fuzz")))
        var answered = 0
        for index in 0..<500 {
            let port = index.isMultiple(of: 2) ? dashboard.port : metrics.port
            let request = Self.randomRequest(&random, job: job)
            let reply = await RawHTTP.send(request, port: port, timeout: 10)
            if let status = reply.status {
                answered += 1
                #expect((200..<600).contains(status) && status != 500, "\(status) for \(String(decoding: request.prefix(200), as: UTF8.self).debugDescription)")
            }
            if index.isMultiple(of: 50) {
                #expect(await RawHTTP.send(RawHTTP.request("GET", "/"), port: port, timeout: 120).status == 200, "the server stopped answering after request \(index)")
            }
        }
        #expect(answered > 150, "most requests are well-formed enough to answer: \(answered) of 500")
        #expect(await RawHTTP.send(RawHTTP.request("GET", "/"), port: dashboard.port, timeout: 120).status == 200)
        #expect(await RawHTTP.send(RawHTTP.request("GET", "/metrics"), port: metrics.port, timeout: 30).status == 200)
        #expect(try queue.job(job)?.state == .available)
        await dashboard.stop()
        await metrics.stop()
    }

    static func queue() throws -> (MemoryJobQueue, JobID) {
        let queue = MemoryJobQueue()
        let job = try #require(try queue.submit([NewJob(payload: document("https://images.example/a.jpg"))]).first).id
        return (queue, job)
    }

    /// A request from a grammar of bad parts: methods, targets, versions, headers, lengths and
    /// bodies, each sometimes sane and sometimes not.
    static func randomRequest(_ random: inout SeededRandom, job: JobID) -> [UInt8] {
        if random.chance(0.08) { return (0..<Int.random(in: 0...400, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let method = random.pick(["GET", "POST", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "get", "P\u{0}ST", "", "GET GET", "CONNECT"])
        var target = random.chance(0.6) ? random.pick(getRoutes + postRoutes(job: job)) : "/" + randomText(&random, 30)
        if random.chance(0.4) { target += "?" + randomText(&random, 60) }
        if random.chance(0.05) { target = random.pick(["*", "", "http://127.0.0.1/", "//", "/../../etc/passwd", "/%", "/%zz", String(repeating: "/a", count: 5000)]) }
        let version = random.chance(0.9) ? "HTTP/1.1" : random.pick(["HTTP/1.0", "HTTP/2", "HTTP/9.9", "", "FOO"])
        var head = "\(method) \(target) \(version)\r\n"
        var body: [UInt8] = random.chance(0.5) ? random.pick(hostileBodies) : Array(randomText(&random, 200).utf8)
        if random.chance(0.3) { body = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } }
        var headers = ["Host: 127.0.0.1", "Connection: close"]
        if random.chance(0.5) { headers.append("Content-Type: " + random.pick(contentTypes)) }
        switch Int.random(in: 0..<6, using: &random) {
        case 0: headers.append("Content-Length: \(body.count)")
        case 1: headers.append("Content-Length: \(body.count + Int.random(in: 1...100, using: &random))")
        case 2: headers.append("Content-Length: \(max(0, body.count - 5))")
        case 3: headers.append("Content-Length: " + random.pick(["-1", "abc", "99999999999999999999", "1e3", " 5", ""]))
        case 4: headers.append("Transfer-Encoding: " + random.pick(["chunked", "gzip", "x"]))
        default: break
        }
        if random.chance(0.3) { headers.append(random.pick(["Cookie: derive_dashboard=\(randomText(&random, 40))", "Authorization: Bearer \(randomText(&random, 20))",
                                                           "Authorization: Bearer", "Cookie: ;;;==", "X: \u{0}\u{1}", ": empty", "NoColon",
                                                           "Host: evil.example", "Origin: http://evil.example", String(repeating: "A", count: 9000) + ": b"])) }
        if random.chance(0.1) { headers.shuffle(using: &random) }
        head += headers.joined(separator: random.chance(0.95) ? "\r\n" : "\n") + "\r\n\r\n"
        return Array(head.utf8) + body
    }

    static func randomText(_ random: inout SeededRandom, _ length: Int) -> String {
        let alphabet = Array("abcXYZ019 %&=+?#/<>\"'{}\\\t;:,.~!@$^*()[]|`\u{e9}\u{1F600}%00%2F%zz")
        return String((0..<Int.random(in: 0...length, using: &random)).map { _ in random.pick(alphabet) })
    }
}
