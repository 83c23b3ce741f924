import DeriveLanguage
import DeriveJobs
import DeriveHTTP
import Foundation
import Logging

/// What the dashboard reads: the queue, its operator views and the workers' reports, through
/// the same seams as `derive status` and `derive jobs` (PostgreSQL, SQLite, or the in-memory
/// queue in tests).
public typealias DashboardDatabase = JobStore & QueueInspector & WorkerRegistry

/// What the asset, preset and schedule pages read, and what reprocessing from a preset's page
/// queues into: both stores have it; the in-memory queue does not, and those pages say so.
public typealias DashboardRecords = JobStore & AssetCatalog & PresetStore & ScheduleStore & ReprocessStore

/// `derive dashboard`: server-rendered pages over DeriveHTTP, everything they need served by
/// Derive itself, and every response under a Content-Security-Policy that allows nothing from
/// elsewhere and no inline script. Actions need the token (`DashboardAccess`); it listens on
/// loopback unless told otherwise.
public final class DashboardServer: Sendable {
    /// The port it listens on (the one the system chose, when asked for port 0).
    public var port: Int { listener.port }
    private let listener: HTTPListener

    /// Scripts and styles only from this server, images from it (and `data:` for
    /// placeholders, and the one origin the store's presigned URLs point at, when it has one),
    /// no frames, no plugins, forms only to itself.
    public static func contentSecurityPolicy(imageOrigin: String? = nil) -> String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:\(imageOrigin.map { " " + $0 } ?? ""); "
            + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    }

    /// Every response's security headers (the policy's image origins are the server's own:
    /// `routes` sets the policy on every response).
    public static let securityHeaders: HTTPHeaders = [
        HTTPHeader("Content-Security-Policy"): contentSecurityPolicy(),
        HTTPHeader("X-Content-Type-Options"): "nosniff",
        // Not `no-referrer`: under it a browser sends `Origin: null` with its own forms' POSTs,
        // which the Origin check (rightly: a sandboxed frame elsewhere sends it too) refuses,
        // so nobody could log in. `same-origin` sends nothing to other origins (S3 included).
        HTTPHeader("Referrer-Policy"): "same-origin",
        HTTPHeader("Cache-Control"): "no-store",
    ]

    private init(listener: HTTPListener) {
        self.listener = listener
    }

    /// Listens on `address:port` (port 0: any free one, reported by `port`) and returns once it
    /// does; throws, saying why, when it cannot.
    /// What `access` would make unsafe on `address` is refused first (`DashboardAccess.check`).
    /// `thumbnailer`: makes the small pictures the asset pages show (without one they show the
    /// outputs themselves).
    public static func start(database: any DashboardDatabase, records: (any DashboardRecords)? = nil, store: (any AssetStore)? = nil, access: DashboardAccess = DashboardAccess(token: nil),
                             address: String = "127.0.0.1", port: Int, insecureOpen: Bool = false, thumbnailer: DashboardThumbnailer? = nil,
                             logger: Logger = Logger(label: "derive.dashboard")) async throws -> DashboardServer {
        try access.check(address: address, insecureOpen: insecureOpen)
        let install = routes(database: database, records: records, store: store, access: access, thumbnailer: thumbnailer, logger: logger)
        do {
            return DashboardServer(listener: try await HTTPListener.start(address: address, port: port, timeout: 30, logger: logger, routes: install))
        } catch {
            throw DashboardError(error.description)
        }
    }

    /// The dashboard's routes, to add to another server: a worker's metrics port serves the
    /// same pages (`derive work --dashboard`). They end with a catch-all, so add them last.
    public static func routes(database: any DashboardDatabase, records: (any DashboardRecords)?, store: (any AssetStore)?,
                              access: DashboardAccess, thumbnailer: DashboardThumbnailer? = nil, logger: Logger) -> HTTPRoutes {
        let pages = Pages(database: database, records: records, store: store, access: access, logger: logger, thumbnailer: thumbnailer)
        return routes(pages: pages, access: access)
    }

    private static func routes(pages: Pages, access: DashboardAccess) -> HTTPRoutes {
        var server = HTTPRoutes()
        // Every response carries the policy, with the store's presigned-URL origin among the
        // image sources when it has one.
        let policy = contentSecurityPolicy(imageOrigin: pages.store?.temporaryURLOrigin)
        // Every route checks the Host header first (a loopback dashboard answers only to
        // loopback names: no DNS rebinding), then, with private pages, the login: only the
        // login page and the static files are served to a browser that has not logged in.
        func add(_ route: String, _ handler: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
            let open = route.hasSuffix(" /login") || route.hasPrefix("GET /static/")
            server.append(route) { request in
                var response: HTTPResponse
                if !access.hostAllowed(request) {
                    response = Pages.respond(Views.notFound("This dashboard does not answer to that host name."), status: .misdirectedRequest)
                } else if !open && !access.mayRead(request) {
                    response = request.method == .GET ? Pages.redirect("/login") : pages.refusal()
                } else {
                    response = try await handler(request)
                }
                response.headers[HTTPHeader("Content-Security-Policy")] = policy
                return response
            }
        }
        add("GET /") { _ in Pages.guarded { try pages.overview() } }
        add("GET /live") { _ in Pages.guarded { try pages.live() } }
        add("GET /jobs") { request in Pages.guarded { try pages.jobs(request) } }
        add("GET /jobs/:id") { request in Pages.guarded { try pages.job(request) } }
        add("GET /jobs/:id/outputs/:index") { request in Pages.guarded { try pages.output(request) } }
        add("GET /jobs/:id/outputs/:index/thumbnail") { request in await pages.outputThumbnail(request) }
        add("GET /login") { request in pages.loginPage(request) }
        // A POST's form is read before anything else, within a bound; a body that cannot be
        // read or is too long is answered 400 or 413 here, before any handler sees it.
        func post(_ route: String, _ handler: @escaping @Sendable (HTTPRequest, [String: String]) -> HTTPResponse) {
            add("POST " + route) { request in
                switch await FormBody.read(request) {
                case .fields(let form): handler(request, form)
                case .unreadable: Pages.respond(Views.notFound("The form could not be read."), status: .badRequest)
                case .tooLarge: Pages.respond(Views.notFound("The form is larger than \(FormBody.limit) bytes."), status: .payloadTooLarge)
                }
            }
        }
        post("/login") { request, form in pages.login(request, form: form) }
        post("/logout") { request, form in pages.logout(request, form: form) }
        post("/jobs/:id/retry") { request, form in
            Pages.guarded { try pages.act(request, form: form) { id throws(DeriveError) in try pages.retry(id) } }
        }
        post("/jobs/:id/cancel") { request, form in
            Pages.guarded { try pages.act(request, form: form) { id throws(DeriveError) in try pages.cancel(id) } }
        }
        post("/failures/retry") { request, form in Pages.guarded { try pages.retryGroup(request, form: form) } }
        // Queue control and the jobs list's bulk actions (Pages+Queues, Pages+Bulk).
        add("GET /queues") { request in Pages.guarded { try pages.queues(request) } }
        post("/queues/pause") { request, form in Pages.guarded { try pages.pauseQueue(request, form: form, pause: true) } }
        post("/queues/:name/pause") { request, form in Pages.guarded { try pages.pauseQueue(request, form: form, pause: true) } }
        post("/queues/:name/resume") { request, form in Pages.guarded { try pages.pauseQueue(request, form: form, pause: false) } }
        add("POST /jobs/bulk") { request in
            switch await FormBody.readPairs(request) {
            case .success(let pairs): Pages.guarded { try pages.bulk(request, pairs: pairs) }
            case .failure(.unreadable): Pages.respond(Views.notFound("The form could not be read."), status: .badRequest)
            case .failure(.tooLarge): Pages.respond(Views.notFound("The form is larger than \(FormBody.limit) bytes."), status: .payloadTooLarge)
            }
        }
        add("GET /static/bulk.js") { _ in Pages.respond(Assets.bulkScript, type: "text/javascript; charset=utf-8") }
        add("GET /failures") { request in Pages.guarded { try pages.failures(request) } }
        add("GET /totals") { request in Pages.guarded { try pages.totals(request) } }
        add("GET /assets") { request in Pages.guarded { try pages.assets(request) } }
        add("GET /assets/:id") { request in Pages.guarded { try pages.asset(request) } }
        add("GET /derivatives/:id") { request in Pages.guarded { try pages.derivative(request) } }
        add("GET /derivatives/:id/thumbnail") { request in await pages.thumbnail(request) }
        add("GET /presets") { _ in Pages.guarded { try pages.presets() } }
        add("GET /presets/:name") { request in Pages.guarded { try pages.preset(request) } }
        add("GET /presets/:name/reprocess") { request in Pages.guarded { try pages.reprocessCount(request) } }
        post("/presets/:name/reprocess") { request, form in Pages.guarded { try pages.reprocess(request, form: form) } }
        add("GET /schedules") { _ in Pages.guarded { try pages.schedules() } }
        add("GET /webhooks") { _ in Pages.guarded { try pages.webhooks() } }
        add("GET /static/dashboard.css") { _ in Pages.respond(Assets.style, type: "text/css; charset=utf-8") }
        add("GET /static/favicon.svg") { _ in Pages.respond(Assets.favicon, type: "image/svg+xml") }
        add("GET /static/dashboard.js") { _ in Pages.respond(Assets.script, type: "text/javascript; charset=utf-8") }
        add("*") { _ in Pages.respond(Views.notFound("There is no such page."), status: .notFound) }
        return server
    }

    public func stop() async {
        await listener.stop()
    }
}

/// A POST's form fields, read from a body of at most `limit` bytes (Derive's forms carry a
/// token, a CSRF value and a word or two).
enum FormBody {
    case fields([String: String])
    /// The body could not be read: a broken chunked encoding, a connection cut short.
    case unreadable
    case tooLarge

    static let limit = 16 * 1024

    static func read(_ request: HTTPRequest) async -> FormBody {
        switch await BoundedBody.read(request, limit: limit) {
        case .success(let body): .fields(FormFields.parse(body))
        case .failure(.tooLarge): .tooLarge
        case .failure(.unreadable): .unreadable
        }
    }
}

extension FormBody {
    /// Every field in order, repeats kept (a list of ticked ids), from a body within `limit`.
    static func readPairs(_ request: HTTPRequest) async -> Result<[(String, String)], BoundedBody.Failure> {
        await BoundedBody.read(request, limit: limit).map { FormFields.pairs($0) }
    }
}

public struct DashboardError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
