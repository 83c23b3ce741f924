import DeriveCore
import FlyingFox
import DeriveHTTP
import Foundation
import Logging

/// What the dashboard reads: the queue, its operator views and the workers' reports, through
/// the same seams as `derive status` and `derive jobs` (PostgreSQL, SQLite, or the in-memory
/// queue in tests).
public typealias DashboardDatabase = JobStore & QueueInspector & WorkerRegistry

/// `derive dashboard`: server-rendered pages over FlyingFox, everything they need served by
/// Derive itself, and every response under a Content-Security-Policy that allows nothing from
/// elsewhere and no inline script. Actions need the token (`DashboardAccess`); it listens on
/// loopback unless told otherwise.
public final class DashboardServer: Sendable {
    /// The port it listens on (the one the system chose, when asked for port 0).
    public var port: Int { listener.port }
    private let listener: HTTPListener

    /// Every page's security headers: scripts and styles only from this server, images from it
    /// (and `data:` for placeholders), no frames, no plugins, forms only to itself.
    public static let securityHeaders: [HTTPHeader: String] = [
        HTTPHeader("Content-Security-Policy"): "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        HTTPHeader("X-Content-Type-Options"): "nosniff",
        HTTPHeader("Referrer-Policy"): "no-referrer",
        HTTPHeader("Cache-Control"): "no-store",
    ]

    private init(listener: HTTPListener) {
        self.listener = listener
    }

    /// Listens on `address:port` (port 0: any free one, reported by `port`) and returns once it
    /// does; throws, saying why, when it cannot.
    public static func start(database: any DashboardDatabase, store: (any AssetStore)? = nil, access: DashboardAccess = DashboardAccess(token: nil),
                             address: String = "127.0.0.1", port: Int,
                             logger: Logger = Logger(label: "derive.dashboard")) async throws -> DashboardServer {
        let pages = Pages(database: database, store: store, access: access, logger: logger)
        do {
            return DashboardServer(listener: try await HTTPListener.start(address: address, port: port, timeout: 30, logger: logger) { server in
                await routes(server, pages: pages, access: access)
            })
        } catch {
            throw DashboardError(error.description)
        }
    }

    private static func routes(_ server: HTTPServer, pages: Pages, access: DashboardAccess) async {
        await server.appendRoute("GET /") { _ in Pages.guarded { try pages.overview() } }
        await server.appendRoute("GET /live") { _ in Pages.guarded { try pages.live() } }
        await server.appendRoute("GET /jobs") { request in Pages.guarded { try pages.jobs(request) } }
        await server.appendRoute("GET /jobs/:id") { request in Pages.guarded { try pages.job(request) } }
        await server.appendRoute("GET /jobs/:id/outputs/:index") { request in Pages.guarded { try pages.output(request) } }
        await server.appendRoute("GET /login") { _ in Pages.respond(access.canAct ? Views.login(failed: false) : Views.notFound("This dashboard is read-only: no DERIVE_DASHBOARD_TOKEN is set.")) }
        await server.appendRoute("POST /login") { request in pages.login(DashboardAccess.form(try await request.bodyData)) }
        await server.appendRoute("POST /jobs/:id/retry") { request in
            let form = DashboardAccess.form(try await request.bodyData)
            return Pages.guarded { try pages.act(request, form: form) { id throws(DeriveError) in try pages.retry(id) } }
        }
        await server.appendRoute("POST /jobs/:id/cancel") { request in
            let form = DashboardAccess.form(try await request.bodyData)
            return Pages.guarded { try pages.act(request, form: form) { id throws(DeriveError) in try pages.cancel(id) } }
        }
        await server.appendRoute("POST /failures/retry") { request in
            let form = DashboardAccess.form(try await request.bodyData)
            return Pages.guarded { try pages.retryGroup(request, form: form) }
        }
        await server.appendRoute("GET /failures") { request in Pages.guarded { try pages.failures(request) } }
        await server.appendRoute("GET /static/dashboard.css") { _ in Pages.respond(Assets.style, type: "text/css; charset=utf-8") }
        await server.appendRoute("GET /static/favicon.svg") { _ in Pages.respond(Assets.favicon, type: "image/svg+xml") }
        await server.appendRoute("GET /static/dashboard.js") { _ in Pages.respond(Assets.script, type: "text/javascript; charset=utf-8") }
        await server.appendRoute("*") { _ in Pages.respond(Views.notFound("There is no such page."), status: .notFound) }
    }

    public func stop() async {
        await listener.stop()
    }
}

/// Each page: read through the seams, render with `Views`, answer with the security headers.
struct Pages: Sendable {
    let database: any DashboardDatabase
    /// Where outputs are read back from, to show them (the store's credentials stay here).
    let store: (any AssetStore)?
    let access: DashboardAccess
    let logger: Logger
    var liveness = Views.Liveness()
    static let pageSize = 50

    func overview() throws -> HTTPResponse {
        Self.respond(Views.overview(try liveMarkup()))
    }

    func live() throws -> HTTPResponse {
        Self.respond(try liveMarkup().description, type: "text/html; charset=utf-8")
    }

    private func liveMarkup() throws -> Markup {
        let now = Date()
        return Views.overviewLive(counts: try database.counts(), workers: try database.workers(seenSince: now.addingTimeInterval(-3600)),
                                  throughput: try database.throughput(since: now.addingTimeInterval(-3600), bucket: 60), now: now,
                                  liveness: liveness)
    }

    func jobs(_ request: HTTPRequest) throws -> HTTPResponse {
        func value(_ name: String) -> String? {
            request.query[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0.trimmingCharacters(in: .whitespaces) }
        }
        let outcome = value("outcome").flatMap(JobState.init(rawValue:)).flatMap { $0.isLive ? nil : $0 }
        let filter = JobFilter(outcome: outcome, queue: value("queue"), errorCode: value("code"), sourceHost: value("host"))
        var cursor: JobCursor?
        if let seconds = value("before").flatMap(Double.init), seconds.isFinite, let id = value("before_id").flatMap(Int64.init) {
            cursor = JobCursor(finishedAt: Date(timeIntervalSince1970: seconds), id: id)
        }
        let page = try database.finishedJobs(filter, after: cursor, limit: Self.pageSize)
        // Live jobs on the first page only, and only when the filter can match them.
        let live = cursor == nil && filter.outcome == nil && filter.errorCode == nil && filter.sourceHost == nil
            ? try database.jobs(state: nil, queue: filter.queue, limit: Self.pageSize) : []
        return Self.respond(Views.jobs(page, filter: filter, live: live))
    }

    func job(_ request: HTTPRequest) throws -> HTTPResponse {
        let text: String? = request.routeParameters["id"]
        guard let id = text.flatMap(Int64.init), let job = try database.job(id) else {
            return Self.respond(Views.notFound("There is no job \(text ?? "")."), status: .notFound)
        }
        return Self.respond(Views.job(job, actions: actions(request), images: store != nil))
    }

    func failures(_ request: HTTPRequest) throws -> HTTPResponse {
        let hours = min(24 * 30, max(1, request.query["hours"].flatMap(Int.init) ?? 24))
        let groups = try database.failureGroups(since: Date().addingTimeInterval(-Double(hours) * 3600))
        var examples: [String: [JobSnapshot]] = [:]
        for group in groups.prefix(20) {
            examples[group.code] = try database.finishedJobs(JobFilter(outcome: .failed, errorCode: group.code), after: nil, limit: 3).jobs
        }
        return Self.respond(Views.failures(groups, examples: examples, hours: hours, actions: actions(request)))
    }

    /// An output's bytes, read from the store by the key its job recorded.
    func output(_ request: HTTPRequest) throws -> HTTPResponse {
        let idText: String? = request.routeParameters["id"], indexText: String? = request.routeParameters["index"]
        guard let store, let id = idText.flatMap(Int64.init), let index = indexText.flatMap(Int.init), let job = try database.job(id),
              case .array(let outputs)? = job.result?["outputs"], outputs.indices.contains(index),
              case .string(let key)? = outputs[index]["key"] else {
            return Self.respond(Views.notFound("There is no such output."), status: .notFound)
        }
        guard let bytes = try store.get(try StorageKey(key)) else {
            return Self.respond(Views.notFound("The store no longer has \(key)."), status: .notFound)
        }
        var format = OutputFormat.jpeg
        if case .string(let name)? = outputs[index]["format"], let known = OutputFormat(rawValue: name) { format = known }
        var headers = DashboardServer.securityHeaders
        headers[.contentType] = format.mediaType
        // Keys name content (they hold the same bytes for ever): the browser may keep them.
        headers[.cacheControl] = "private, max-age=3600"
        return HTTPResponse(statusCode: .ok, headers: headers, body: Data(bytes))
    }

    func actions(_ request: HTTPRequest) -> Views.Actions {
        guard access.canAct, let csrf = access.csrf else { return .readOnly }
        return access.isLoggedIn(request) ? .allowed(csrf: csrf) : .logIn
    }

    /// The token from the login form: right, a session cookie and back to the overview;
    /// wrong, the form again (403).
    func login(_ form: [String: String]) -> HTTPResponse {
        guard access.tokenMatches(form["token"] ?? ""), let session = access.session else {
            logger.warning("dashboard login refused: wrong token")
            return Self.respond(Views.login(failed: true), status: .forbidden)
        }
        var response = Self.redirect("/")
        response.headers[.setCookie] = "\(DashboardAccess.cookieName)=\(session); Path=/; HttpOnly; SameSite=Strict"
        return response
    }

    /// One job's action, allowed only with the session and CSRF field (or the bearer token).
    func act(_ request: HTTPRequest, form: [String: String], _ action: (JobID) throws(DeriveError) -> String) throws -> HTTPResponse {
        guard access.mayAct(request, form: form) else { return refusal() }
        let text: String? = request.routeParameters["id"]
        guard let id = text.flatMap(Int64.init) else { return Self.respond(Views.notFound("There is no job \(text ?? "")."), status: .notFound) }
        return Self.redirect(try action(id))
    }

    func retry(_ id: JobID) throws(DeriveError) -> String {
        let live = try database.retry(id)
        logger.info("dashboard: job retried", metadata: ["job": "\(id)", "as": "\(live.map(String.init) ?? "-")"])
        return "/jobs/\(live ?? id)"
    }

    func cancel(_ id: JobID) throws(DeriveError) -> String {
        let result = try database.cancel(id)
        logger.info("dashboard: job cancel", metadata: ["job": "\(id)", "result": "\(result.rawValue)"])
        return "/jobs/\(id)"
    }

    /// Runs every failed job of one error code in the window again (at most a thousand a click).
    func retryGroup(_ request: HTTPRequest, form: [String: String]) throws -> HTTPResponse {
        guard access.mayAct(request, form: form) else { return refusal() }
        guard let code = form["code"], !code.isEmpty else { return Self.respond(Views.notFound("Say which error code."), status: .badRequest) }
        let hours = min(24 * 30, max(1, form["hours"].flatMap(Int.init) ?? 24))
        let filter = JobFilter(outcome: .failed, errorCode: code, finishedSince: Date().addingTimeInterval(-Double(hours) * 3600))
        var cursor: JobCursor?, retried = 0
        repeat {
            let page = try database.finishedJobs(filter, after: cursor, limit: 200)
            for job in page.jobs where retried < 1000 { if try database.retry(job.id) != nil { retried += 1 } }
            cursor = page.next
        } while cursor != nil && retried < 1000
        logger.info("dashboard: failures retried", metadata: ["code": "\(code)", "jobs": "\(retried)"])
        return Self.redirect("/jobs?" + HTML.query([("outcome", "failed"), ("code", code)]))
    }

    func refusal() -> HTTPResponse {
        Self.respond(HTML.page(title: "Not allowed", HTML.element("p", [], .text(access.canAct
            ? "Log in first (the form must come from this dashboard), or send Authorization: Bearer with the token."
            : "This dashboard is read-only: no DERIVE_DASHBOARD_TOKEN is set."))), status: .forbidden)
    }

    static func redirect(_ path: String) -> HTTPResponse {
        var headers = DashboardServer.securityHeaders
        headers[.location] = path
        return HTTPResponse(statusCode: .seeOther, headers: headers, body: Data())
    }

    /// A page whose database call failed is a 503 that says why (escaped), never a crash.
    static func guarded(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        do {
            return try body()
        } catch {
            return respond(HTML.page(title: "The database does not answer", HTML.element("p", [], .text("\(error)"))), status: .serviceUnavailable)
        }
    }

    static func respond(_ body: String, status: HTTPStatusCode = .ok, type: String = "text/html; charset=utf-8") -> HTTPResponse {
        var headers = DashboardServer.securityHeaders
        headers[.contentType] = type
        return HTTPResponse(statusCode: status, headers: headers, body: Data(body.utf8))
    }
}

public struct DashboardError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
