import DeriveDashboard
import DeriveJobs
import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// The dashboard's secure defaults, each against a real server on loopback: host names, the
/// origin of actions, login throttling, random sessions that end, private pages, Secure
/// cookies behind a trusted proxy, and what `check` refuses before anything listens.
@Suite struct DashboardSecurityTests {
    static let token = "tok-\(UUID().uuidString)"

    /// A raw request's status and headers (lower-cased names).
    static func send(_ port: Int, _ method: String, _ path: String, headers: [(String, String)] = [], body: String = "") async
        -> (status: Int?, headers: [String: String], body: String) {
        let reply = await RawHTTP.send(RawHTTP.request(method, path, headers: headers, body: Array(body.utf8)), port: port)
        let text = reply.text
        let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
        var fields: [String: String] = [:]
        for line in head.split(separator: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return (reply.status, fields, text)
    }

    static func login(_ port: Int, headers: [(String, String)] = []) async throws -> (cookie: String, setCookie: String) {
        let reply = await send(port, "POST", "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers, body: "token=\(token)")
        #expect(reply.status == 303)
        let setCookie = try #require(reply.headers["set-cookie"])
        return (String(setCookie.split(separator: ";")[0]), setCookie)
    }

    static func csrf(_ port: Int, cookie: String) async throws -> String {
        let page = await send(port, "GET", "/login", headers: [("Cookie", cookie)]).body
        return try #require(page.components(separatedBy: "name=\"csrf\" value=\"").dropFirst().first?.split(separator: "\"").first.map(String.init))
    }

    @Test func aLoopbackDashboardAnswersOnlyToLoopbackNames() async throws {
        let access = DashboardAccess(token: Self.token, allowedHosts: DashboardAccess.hosts(listeningOn: "127.0.0.1", configured: []))
        let server = try await DashboardServer.start(database: MemoryJobQueue(), access: access, port: 0)
        #expect(await Self.send(server.port, "GET", "/", headers: []).status == 200)  // Host: 127.0.0.1
        for host in ["localhost:\(server.port)", "[::1]:\(server.port)", "127.0.0.1:\(server.port)"] {
            var request = RawHTTP.request("GET", "/")
            request = Array(String(decoding: request, as: UTF8.self).replacingOccurrences(of: "Host: 127.0.0.1", with: "Host: \(host)").utf8)
            #expect(await RawHTTP.send(request, port: server.port).status == 200, "\(host)")
        }
        // A page whose own name was rebound to 127.0.0.1 sends its name.
        let rebound = Array(String(decoding: RawHTTP.request("GET", "/jobs"), as: UTF8.self).replacingOccurrences(of: "Host: 127.0.0.1", with: "Host: attacker.example").utf8)
        #expect(await RawHTTP.send(rebound, port: server.port).status == 421)
        await server.stop()
        #expect(DashboardAccess.hosts(listeningOn: "0.0.0.0", configured: []) == nil)
        #expect(DashboardAccess.hosts(listeningOn: "0.0.0.0", configured: ["Dash.Example"])?.contains("dash.example") == true)
    }

    @Test func actionsFromAnotherOriginAreRefused() async throws {
        let queue = MemoryJobQueue()
        let id = try DashboardActionTests.failedJob(queue)
        let server = try await DashboardServer.start(database: queue, access: DashboardAccess(token: Self.token), port: 0)
        // Logging in from another site's page is refused too (login CSRF).
        #expect(await Self.send(server.port, "POST", "/login", headers: [("Origin", "http://evil.example")], body: "token=\(Self.token)").status == 403)
        let (cookie, _) = try await Self.login(server.port)
        let csrf = try await Self.csrf(server.port, cookie: cookie)
        let form = [("Cookie", cookie), ("Content-Type", "application/x-www-form-urlencoded")]
        #expect(await Self.send(server.port, "POST", "/jobs/\(id)/retry", headers: form + [("Origin", "http://evil.example")], body: "csrf=\(csrf)").status == 403)
        #expect(try queue.counts().isEmpty, "an action from another origin ran")
        let mine = await Self.send(server.port, "POST", "/jobs/\(id)/retry", headers: form + [("Origin", "http://127.0.0.1")], body: "csrf=\(csrf)")
        #expect(mine.status == 303)
        await server.stop()
    }

    @Test func wrongTokensAreThrottledAndTheRightOneWaitsToo() async throws {
        let server = try await DashboardServer.start(database: MemoryJobQueue(), access: DashboardAccess(token: Self.token), port: 0)
        for _ in 0..<5 { #expect(await Self.send(server.port, "POST", "/login", body: "token=guess").status == 403) }
        let throttled = await Self.send(server.port, "POST", "/login", body: "token=\(Self.token)")
        #expect(throttled.status == 429)
        #expect(Int(throttled.headers["retry-after"] ?? "") ?? 0 > 0)
        await server.stop()
    }

    @Test func sessionsAreRandomAndEndWithLogout() async throws {
        let queue = MemoryJobQueue()
        let id = try DashboardActionTests.failedJob(queue)
        let server = try await DashboardServer.start(database: queue, access: DashboardAccess(token: Self.token), port: 0)
        let (first, setCookie) = try await Self.login(server.port)
        let (second, _) = try await Self.login(server.port)
        #expect(first != second, "two logins share a session value")
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Max-Age=43200") && !setCookie.contains("Secure"))
        let csrf = try await Self.csrf(server.port, cookie: first)
        #expect(try await Self.csrf(server.port, cookie: second) != csrf, "two sessions share a CSRF value")
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        // Another session's CSRF value does not act for this one.
        #expect(await Self.send(server.port, "POST", "/jobs/\(id)/retry", headers: form + [("Cookie", second)], body: "csrf=\(csrf)").status == 403)
        let out = await Self.send(server.port, "POST", "/logout", headers: form + [("Cookie", first)], body: "csrf=\(csrf)")
        #expect(out.status == 303 && out.headers["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(await Self.send(server.port, "POST", "/jobs/\(id)/retry", headers: form + [("Cookie", first)], body: "csrf=\(csrf)").status == 403,
                "a logged-out session still acts")
        #expect(try queue.counts().isEmpty)
        await server.stop()
    }

    @Test func privatePagesNeedTheLogin() async throws {
        let access = DashboardAccess(token: Self.token, privatePages: true)
        let server = try await DashboardServer.start(database: MemoryJobQueue(), access: access, port: 0)
        let anonymous = await Self.send(server.port, "GET", "/jobs")
        #expect(anonymous.status == 303 && anonymous.headers["location"] == "/login")
        #expect(await Self.send(server.port, "GET", "/login").status == 200)
        #expect(await Self.send(server.port, "GET", "/static/dashboard.css").status == 200)
        #expect(await Self.send(server.port, "GET", "/jobs", headers: [("Authorization", "Bearer \(Self.token)")]).status == 200)
        let (cookie, _) = try await Self.login(server.port)
        #expect(await Self.send(server.port, "GET", "/jobs", headers: [("Cookie", cookie)]).status == 200)
        await server.stop()
    }

    @Test func cookiesAreSecureBehindATrustedProxyOverHTTPS() async throws {
        let proxied = try await DashboardServer.start(database: MemoryJobQueue(), access: DashboardAccess(token: Self.token, trustProxy: true), port: 0)
        #expect(try await Self.login(proxied.port, headers: [("X-Forwarded-Proto", "https")]).setCookie.contains("; Secure"))
        #expect(try await !Self.login(proxied.port).setCookie.contains("Secure"))
        await proxied.stop()
        // Untrusted, the header is the client's word: no effect.
        let direct = try await DashboardServer.start(database: MemoryJobQueue(), access: DashboardAccess(token: Self.token), port: 0)
        #expect(try await !Self.login(direct.port, headers: [("X-Forwarded-Proto", "https")]).setCookie.contains("Secure"))
        await direct.stop()
    }

    @Test func unsafeSettingsAreRefusedBeforeListening() throws {
        #expect(throws: DashboardError.self) { try DashboardAccess(token: "short").check(address: "127.0.0.1", insecureOpen: false) }
        #expect(throws: DashboardError.self) { try DashboardAccess(token: nil).check(address: "0.0.0.0", insecureOpen: false) }
        #expect(throws: DashboardError.self) { try DashboardAccess(token: nil, privatePages: true).check(address: "127.0.0.1", insecureOpen: false) }
        try DashboardAccess(token: nil).check(address: "0.0.0.0", insecureOpen: true)
        try DashboardAccess(token: Self.token).check(address: "0.0.0.0", insecureOpen: false)
        try DashboardAccess(token: nil).check(address: "127.0.0.1", insecureOpen: false)
    }

    @Test func aReadOnlyDashboardHasNoLoginPage() async throws {
        let server = try await DashboardServer.start(database: MemoryJobQueue(), port: 0)
        #expect(await Self.send(server.port, "GET", "/login").status == 404)
        await server.stop()
    }

    /// `derive dashboard --address 0.0.0.0` without a token does not start; with
    /// `--insecure-open` it does, and says so.
    @Test func theCommandRefusesTheNetworkWithoutAToken() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-dashboard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = ["dashboard", "--port", "0", "--database", "sqlite:" + folder.appendingPathComponent("q.sqlite").path,
                    "--store", folder.appendingPathComponent("store").path, "--address", "0.0.0.0"]
        let refused = try BackgroundProcess(base, environment: ["DERIVE_DASHBOARD_TOKEN": ""])
        #expect(refused.wait(timeout: 30) != 0)
        #expect(refused.logLines.joined().contains("with no token"), "\(refused.logLines)")
        let short = try BackgroundProcess(base, environment: ["DERIVE_DASHBOARD_TOKEN": "abc"])
        #expect(short.wait(timeout: 30) != 0)
        #expect(short.logLines.joined().contains("at least 16 characters"), "\(short.logLines)")
    }
}
