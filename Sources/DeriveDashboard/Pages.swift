import DeriveLanguage
import DeriveJobs
import DeriveHTTP
import Foundation
import Logging

/// Each page: read through the seams, render with `Views`, answer with the security headers.
struct Pages: Sendable {
    let database: any DashboardDatabase
    /// Assets, presets and schedules, where the database keeps them (not the in-memory queue).
    let records: (any DashboardRecords)?
    /// Where outputs are read back from, to show them (the store's credentials stay here).
    let store: (any AssetStore)?
    let access: DashboardAccess
    let logger: Logger
    /// Makes the asset pages' small pictures; nil: they show the outputs themselves.
    var thumbnailer: DashboardThumbnailer?
    /// The thumbnails made so far (at most `thumbnailCacheBytes`).
    let thumbnails = ThumbnailCache(limit: Pages.thumbnailCacheBytes)
    var liveness = WorkerLiveness()
    /// 32 MB: some 3,000 thumbnails of about 10 kB.
    static let thumbnailCacheBytes = 32 * 1024 * 1024
    static let pageSize = 50
    /// The longest search text (a URL's length is plenty).
    static let searchLength = 2048

    func overview() throws -> HTTPResponse {
        Self.respond(Views.overview(try liveMarkup()))
    }

    func live() throws -> HTTPResponse {
        Self.respond(try liveMarkup().description, type: "text/html; charset=utf-8")
    }

    private func liveMarkup() throws -> Markup {
        let now = Date()
        return Views.overviewLive(counts: try database.counts(),
                                  workers: try liveness.workers(heardSince: now.addingTimeInterval(-3600), from: database, at: now),
                                  throughput: try database.throughput(since: now.addingTimeInterval(-3600), bucket: 60), now: now,
                                  liveness: liveness, paused: try database.pausedQueues())
    }

    func jobs(_ request: HTTPRequest) throws -> HTTPResponse {
        func value(_ name: String) -> String? {
            request.query[name].flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0.trimmingCharacters(in: .whitespaces) }
        }
        let outcome = value("outcome").flatMap(JobState.init(rawValue:)).flatMap { $0.isLive ? nil : $0 }
        let hours = value("hours").flatMap(Int.init).map { min(24 * 365, max(1, $0)) }
        let filter = JobFilter(outcome: outcome, queue: value("queue"), errorCode: value("code"), sourceHost: value("host"),
                               finishedSince: hours.map { Date().addingTimeInterval(-Double($0) * 3600) },
                               sourceContains: value("source").map { String($0.prefix(Self.searchLength)) })
        var cursor: JobCursor?
        if let seconds = value("before").flatMap(Double.init), seconds.isFinite, let id = value("before_id").flatMap(Int64.init) {
            cursor = JobCursor(finishedAt: Date(timeIntervalSince1970: seconds), id: id)
        }
        let page = try database.finishedJobs(filter, after: cursor, limit: Self.pageSize)
        // Live jobs on the first page only, and only when the filter can match them.
        var live = cursor == nil && filter.outcome == nil && filter.errorCode == nil && filter.sourceHost == nil && hours == nil
            ? try database.jobs(state: nil, queue: filter.queue, limit: Self.pageSize) : []
        // Waiting and running jobs matching a search: among the first page of them only.
        // (or, as for finished ones, by a file name recorded for their source at upload).
        if let text = filter.sourceContains {
            let sources = live.compactMap(Self.source)
            let names = try database.originalNames(of: sources)
            live = live.filter { job in
                guard let source = Self.source(job) else { return false }
                return source.contains(text) || (names[source] ?? []).contains { $0.contains(text) }
            }
        }
        let notice = Notice.from { request.query[$0] } ?? Notice.bulk { request.query[$0] }
        return Self.respond(Views.jobs(page, filter: filter, hours: hours, live: live, notice: notice, actions: actions(request),
                                       paused: try database.pausedQueues(), follow: cursor == nil))
    }

    func job(_ request: HTTPRequest) throws -> HTTPResponse {
        let text: String? = request.routeParameters["id"]
        guard let id = text.flatMap(Int64.init), let job = try database.job(id) else {
            let tried = request.query["done"] == "not-retried" ? Notice("Nothing was queued: there is no such job.", warning: true) : nil
            return Self.respond(Views.notFound("There is no job \(text ?? "").", notice: tried), status: .notFound)
        }
        let names = try Self.source(job).map { try database.originalNames(of: [$0])[$0] ?? [] } ?? []
        return Self.respond(Views.job(job, actions: actions(request), images: store != nil, notice: Notice.from({ request.query[$0] }, job: id),
                                      originalNames: names, context: try context(of: job)))
    }

    /// How many other jobs of one piece of work a job's page lists.
    static let generationsShown = 20

    /// What a job's page shows from beyond the job's row: the asset its source became, the
    /// other jobs of its work (by the dedupe key its retries carry) and, while it runs, the
    /// stage its worker last reported.
    func context(of job: JobSnapshot) throws -> Views.JobContext {
        let now = Date()
        var context = Views.JobContext(now: now)
        if let records, case .string(let sha)? = job.result?["source"]?["sha256"] {
            context.assetID = try records.assetID(sha256: sha)
        }
        context.generations = try database.jobs(dedupeKey: job.dedupeKey ?? "retry:\(job.id)", limit: Self.generationsShown + 2)
        if job.state == .running, let owner = job.leaseOwner {
            let report = try database.workers(seenSince: now.addingTimeInterval(-liveness.goneAfter)).first { $0.id == owner }
            context.stage = report?.running.first { $0.id == job.id }
        }
        return context
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

    /// The most groups (bucket × queue × worker × outcome) the totals page reads: bounded
    /// however many workers a day saw.
    static let totalsLimit = 20_000

    /// `/totals?hours=1|24`: finished jobs per queue and per worker over time.
    func totals(_ request: HTTPRequest) throws -> HTTPResponse {
        let hours = request.query["hours"].flatMap(Int.init) ?? 24
        let window = Views.TotalsWindow.all.first { $0.hours == hours } ?? .lastDay
        let now = Date()
        let rows = try database.finishedTotals(since: window.start(at: now), bucket: window.bucket, limit: Self.totalsLimit)
        return Self.respond(Views.totals(rows, window: window, now: now, capped: rows.count >= Self.totalsLimit))
    }

    /// An output's bytes, read from the store by the key its job recorded.
    func output(_ request: HTTPRequest) throws -> HTTPResponse {
        let idText: String? = request.routeParameters["id"], indexText: String? = request.routeParameters["index"]
        guard let store, let id = idText.flatMap(Int64.init), let index = indexText.flatMap(Int.init), let job = try database.job(id),
              case .array(let outputs)? = job.result?["outputs"], outputs.indices.contains(index),
              case .string(let key)? = outputs[index]["key"] else {
            return Self.respond(Views.notFound("There is no such output."), status: .notFound)
        }
        var format = OutputFormat.jpeg
        if case .string(let name)? = outputs[index]["format"], let known = OutputFormat(rawValue: name) { format = known }
        return try object(key, format: format, from: store)
    }

    /// How long a presigned URL the dashboard hands out works: long enough for a page's images
    /// to load, short enough that a copied link soon stops working.
    static let presignedSeconds = 300

    /// A stored object: a redirect to a short-lived presigned URL where the store makes them
    /// (S3: the browser fetches from S3, the credentials stay here), else its bytes.
    func object(_ key: String, format: OutputFormat, from store: any AssetStore) throws -> HTTPResponse {
        // A key the store would refuse (recorded by hand, or by an older version) names nothing
        // that can be served: 404, not the 503 of a database that does not answer.
        guard let key = try? StorageKey(key) else {
            return Self.respond(Views.notFound("The recorded key \(key) is not one the store can hold."), status: .notFound)
        }
        if let url = store.temporaryURL(for: key, expiresIn: Self.presignedSeconds) {
            var response = Self.redirect(url)
            response.statusCode = .found
            return response
        }
        guard let bytes = try store.get(key) else {
            return Self.respond(Views.notFound("The store no longer has \(key)."), status: .notFound)
        }
        var headers = DashboardServer.securityHeaders
        headers[.contentType] = format.mediaType
        // Keys name content (they hold the same bytes for ever): the browser may keep them.
        headers[.cacheControl] = "private, max-age=3600"
        return HTTPResponse(statusCode: .ok, headers: headers, body: Data(bytes))
    }

    func actions(_ request: HTTPRequest) -> Views.Actions {
        guard access.canAct else { return .readOnly }
        if let session = access.session(request) { return .allowed(csrf: session.csrf) }
        return .logIn
    }

    /// The login form, or for a browser already logged in, the way out; 404 when there is no
    /// token to log in with.
    func loginPage(_ request: HTTPRequest) -> HTTPResponse {
        guard access.canAct else { return Self.noLogin }
        if let session = access.session(request) { return Self.respond(Views.loggedIn(csrf: session.csrf)) }
        return Self.respond(Views.login(failed: false))
    }

    /// The token from the login form: right, a new session's cookie and back to the overview;
    /// wrong, the form again (403); too many wrong ones from this client (or in all) in the last
    /// minute, 429 until the minute has passed, without looking at the token.
    func login(_ request: HTTPRequest, form: [String: String]) -> HTTPResponse {
        guard access.canAct else { return Self.noLogin }
        guard access.sameOrigin(request) else { return refusal() }
        let client = access.client(request)
        if let wait = access.throttle.retryAfter(client) {
            var response = Self.respond(HTML.page(title: "Too many attempts", HTML.element("p", [], .text("Too many wrong tokens: try again in \(wait) s."))),
                                        status: .tooManyRequests)
            response.headers[HTTPHeader("Retry-After")] = "\(wait)"
            return response
        }
        guard access.tokenMatches(form["token"] ?? "") else {
            access.throttle.failed(client)
            logger.warning("dashboard login refused: wrong token", metadata: ["client": "\(LogText.oneLine(client))"])
            return Self.respond(Views.login(failed: true), status: .forbidden)
        }
        var response = Self.redirect("/")
        response.headers[.setCookie] = access.startSession(secure: access.isSecure(request)).cookie
        return response
    }

    /// Ends this browser's session (a form with its CSRF value, so another site cannot log it out).
    func logout(_ request: HTTPRequest, form: [String: String]) -> HTTPResponse {
        guard let session = access.session(request), access.sameOrigin(request), DashboardAccess.same(form["csrf"] ?? "", session.csrf) else {
            return refusal()
        }
        access.sessions.end(session.id)
        var response = Self.redirect("/login")
        response.headers[.setCookie] = access.cookie("", maxAge: 0, secure: access.isSecure(request))
        return response
    }

    /// One job's action, allowed only with the session and CSRF field (or the bearer token).
    func act(_ request: HTTPRequest, form: [String: String], _ action: (JobID) throws(DeriveError) -> String) throws -> HTTPResponse {
        guard access.mayAct(request, form: form) else { return refusal() }
        let text: String? = request.routeParameters["id"]
        guard let id = text.flatMap(Int64.init) else { return Self.respond(Views.notFound("There is no job \(text ?? "")."), status: .notFound) }
        return Self.redirect(try action(id))
    }

    /// Retries a job and lands on the live job with what happened: queued again (on the new
    /// job's page, which links back), already waiting (a duplicate), run now (a scheduled one),
    /// or nothing and why (on the job's own page).
    func retry(_ id: JobID) throws(DeriveError) -> String {
        let asked = Date()
        guard let before = try database.job(id) else { return "/jobs/\(id)?done=not-retried&state=missing" }
        let live = try database.retry(id)
        logger.info("dashboard: job retried", metadata: ["job": "\(id)", "as": "\(live.map(String.init) ?? "-")"])
        guard let live else { return "/jobs/\(id)?done=not-retried&state=\(before.state.rawValue)" }
        if live == id { return "/jobs/\(id)?done=run-now" }
        return "/jobs/\(live)?done=\(try isNew(live, since: asked) ? "retried" : "retry-waiting")&from=\(id)"
    }

    /// Whether the live job a retry answered with was made by it, or was already waiting with
    /// the same dedupe key (the queue returns that one's id and enqueues nothing): by its
    /// creation time, with a few seconds' leeway for a database clock a little behind this one.
    func isNew(_ live: JobID, since asked: Date) throws(DeriveError) -> Bool {
        guard let job = try database.job(live) else { return true }
        return job.createdAt >= asked.addingTimeInterval(-Self.clockLeeway)
    }

    static let clockLeeway = 5.0

    func cancel(_ id: JobID) throws(DeriveError) -> String {
        let result = try database.cancel(id)
        logger.info("dashboard: job cancel", metadata: ["job": "\(id)", "result": "\(result.rawValue)"])
        return "/jobs/\(id)?" + Notice.Done.cancel(result)
    }

    static let retryLimit = 1000

    /// Runs every failed job of one error code in the window again (at most a thousand a click).
    func retryGroup(_ request: HTTPRequest, form: [String: String]) throws -> HTTPResponse {
        guard access.mayAct(request, form: form) else { return refusal() }
        guard let code = form["code"], !code.isEmpty else { return Self.respond(Views.notFound("Say which error code."), status: .badRequest) }
        let hours = min(24 * 30, max(1, form["hours"].flatMap(Int.init) ?? 24))
        let filter = JobFilter(outcome: .failed, errorCode: code, finishedSince: Date().addingTimeInterval(-Double(hours) * 3600))
        // Failed jobs that are generations of one piece of work share a dedupe key: the first
        // queues it, the others answer with that job and are counted as skipped, as are those
        // whose work was already waiting before the click.
        let asked = Date()
        var cursor: JobCursor?, retried = 0, queued = Set<JobID>(), skipped = 0
        repeat {
            let page = try database.finishedJobs(filter, after: cursor, limit: 200)
            for job in page.jobs where retried < Self.retryLimit {
                guard let live = try database.retry(job.id) else { continue }
                retried += 1
                let fresh = try !queued.contains(live) && isNew(live, since: asked)
                if fresh { queued.insert(live) } else { skipped += 1 }
            }
            cursor = page.next
        } while cursor != nil && retried < Self.retryLimit
        logger.info("dashboard: failures retried", metadata: ["code": "\(LogText.oneLine(code))", "jobs": "\(retried)", "queued": "\(queued.count)",
                                                             "skipped": "\(skipped)"])
        let capped = retried >= Self.retryLimit && cursor != nil ? String(Self.retryLimit) : nil
        return Self.redirect("/jobs?" + HTML.query([("outcome", "failed"), ("code", code), ("done", "group-retried"), ("queued", String(queued.count)),
                                                    ("skipped", String(skipped)), ("capped", capped)]))
    }

    static let readOnlyNote = "This dashboard is read-only: no DERIVE_DASHBOARD_TOKEN is set."

    /// `/login` where there is no token to log in with.
    static var noLogin: HTTPResponse { respond(Views.notFound(readOnlyNote), status: .notFound) }

    func refusal() -> HTTPResponse {
        Self.respond(HTML.page(title: "Not allowed", HTML.element("p", [], .text(access.canAct
            ? "Log in first (the form must come from this dashboard), or send Authorization: Bearer with the token."
            : Self.readOnlyNote))), status: .forbidden)
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
