import DeriveHTTP
import Foundation
import Synchronization

/// Who may read and act. With a token configured (`DERIVE_DASHBOARD_TOKEN`, at least
/// `minimumTokenLength` characters): a browser that logged in with it holds a random session id
/// (HttpOnly, SameSite=Strict cookie, expiring after `sessionLifetime`, ended by logging out)
/// and every action form carries that session's own random CSRF value; a script sends
/// `Authorization: Bearer` with the token itself. Without a token nobody acts: the dashboard is
/// read-only. With `privatePages`, reading needs the login too. Requests must name an allowed
/// host (no DNS rebinding of a loopback dashboard) and actions from a browser must come from
/// the dashboard's own origin; failed logins are throttled. The token never appears in a page,
/// a cookie or a log.
public struct DashboardAccess: Sendable {
    let token: String?
    /// Pages need a login too, not only actions (needs a token).
    public let privatePages: Bool
    /// The Host names (without port) requests may carry; nil: any.
    public let allowedHosts: Set<String>?
    /// Cookies are marked Secure when a proxy in front says the request came over HTTPS
    /// (`X-Forwarded-Proto: https`); trusted only when set, since a client can send it too.
    public let trustProxy: Bool
    let sessions = SessionBook()
    let throttle = LoginThrottle()

    public static let minimumTokenLength = 16
    /// How long a login lasts.
    public static let sessionLifetime: TimeInterval = 12 * 3600
    static let cookieName = "derive_dashboard"
    /// The names a browser on this machine uses for a server on loopback.
    public static let loopbackHosts: Set<String> = ["localhost", "127.0.0.1", "::1"]

    public init(token: String?, privatePages: Bool = false, allowedHosts: Set<String>? = nil, trustProxy: Bool = false) {
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.privatePages = privatePages
        self.allowedHosts = allowedHosts.map { Set($0.map { $0.lowercased() }) }
        self.trustProxy = trustProxy
    }

    public var canAct: Bool { token != nil }

    /// The hosts a dashboard listening on `address` answers to: on loopback, the loopback
    /// names only (a page elsewhere that rebinds its own name to 127.0.0.1 is refused);
    /// beyond it, `configured` (DERIVE_DASHBOARD_HOSTS) or, when none is, any.
    public static func hosts(listeningOn address: String, configured: [String]) -> Set<String>? {
        if !configured.isEmpty { return loopbackHosts.union(configured.map { $0.lowercased() }) }
        return isLoopback(address) ? loopbackHosts : nil
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.") || address == "localhost"
    }

    /// Refuses what would be unsafe to serve: a token too short to resist guessing, pages
    /// private without a token to log in with, and a listener beyond loopback that anyone on
    /// the network could use without a token, unless `insecureOpen` says so on purpose.
    public func check(address: String, insecureOpen: Bool) throws(DashboardError) {
        if let token, token.count < Self.minimumTokenLength {
            throw DashboardError("DERIVE_DASHBOARD_TOKEN must be at least \(Self.minimumTokenLength) characters (say: openssl rand -hex 24)")
        }
        if privatePages && token == nil {
            throw DashboardError("private pages need DERIVE_DASHBOARD_TOKEN to log in with")
        }
        if !Self.isLoopback(address) && token == nil && !insecureOpen {
            throw DashboardError("the dashboard would serve \(address) to the network with no token: set DERIVE_DASHBOARD_TOKEN, or pass --insecure-open if something in front authenticates")
        }
    }

    // MARK: Requests

    /// The Host header names an allowed host (or any is allowed).
    func hostAllowed(_ request: HTTPRequest) -> Bool {
        guard let allowedHosts else { return true }
        guard let host = request.headers[.host].flatMap(Self.hostName) else { return false }
        return allowedHosts.contains(host)
    }

    /// A browser's action comes from a page of this dashboard: its Origin, when it sends one,
    /// names the same host and port as its Host header.
    func sameOrigin(_ request: HTTPRequest) -> Bool {
        guard let origin = request.headers[HTTPHeader("Origin")] else { return true }
        guard let host = request.headers[.host], let url = URLComponents(string: origin), let originHost = url.host else { return false }
        let originAuthority = (originHost.contains(":") ? "[\(originHost)]" : originHost) + (url.port.map { ":\($0)" } ?? "")
        return originAuthority.lowercased() == host.lowercased()
    }

    /// The name in a Host header, without its port or IPv6 brackets.
    static func hostName(_ header: String) -> String? {
        let value = header.trimmingCharacters(in: .whitespaces).lowercased()
        if value.hasPrefix("[") { return value.dropFirst().split(separator: "]", maxSplits: 1).first.map(String.init) }
        return value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
    }

    /// The session this request's cookie names, when it is live.
    func session(_ request: HTTPRequest) -> Session? {
        guard token != nil, let cookies = request.headers[.cookie] else { return nil }
        for pair in cookies.split(separator: ";") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == Self.cookieName, let session = sessions.live(String(parts[1])) { return session }
        }
        return nil
    }

    func isLoggedIn(_ request: HTTPRequest) -> Bool { session(request) != nil }

    /// The request may be shown a page.
    func mayRead(_ request: HTTPRequest) -> Bool {
        !privatePages || isLoggedIn(request) || hasBearer(request)
    }

    /// The request may act: a logged-in browser's form with its session's CSRF field, from
    /// this dashboard's origin, or the bearer token.
    func mayAct(_ request: HTTPRequest, form: [String: String]) -> Bool {
        guard token != nil else { return false }
        if hasBearer(request) { return true }
        guard let session = session(request), sameOrigin(request) else { return false }
        return Self.same(form["csrf"] ?? "", session.csrf)
    }

    func hasBearer(_ request: HTTPRequest) -> Bool {
        guard let token, let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else { return false }
        return Self.same(String(authorization.dropFirst(7)), token)
    }

    func tokenMatches(_ candidate: String) -> Bool {
        guard let token else { return false }
        return Self.same(candidate, token)
    }

    /// The cookie that starts a new session, and the session.
    func startSession(secure: Bool) -> (cookie: String, session: Session) {
        let session = sessions.start(lifetime: Self.sessionLifetime)
        return (cookie(session.id, maxAge: Int(Self.sessionLifetime), secure: secure), session)
    }

    func cookie(_ value: String, maxAge: Int, secure: Bool) -> String {
        "\(Self.cookieName)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// Who is logging in, for throttling: the peer's address, or behind a trusted proxy the
    /// first address it forwarded for (a client could send X-Forwarded-For itself otherwise).
    func client(_ request: HTTPRequest) -> String {
        if trustProxy, let forwarded = request.headers[HTTPHeader("X-Forwarded-For")]?.split(separator: ",").first {
            return forwarded.trimmingCharacters(in: .whitespaces)
        }
        switch request.remoteAddress {
        case .ip4(let ip, _)?, .ip6(let ip, _)?: return ip
        case .unix(let path)?: return path
        case nil: return "unknown"
        }
    }

    /// The request reached the dashboard over HTTPS, as a trusted proxy says.
    func isSecure(_ request: HTTPRequest) -> Bool {
        trustProxy && request.headers[HTTPHeader("X-Forwarded-Proto")]?.lowercased() == "https"
    }

    /// Compares in time that depends on the lengths only, not on where they first differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<min(x.count, y.count) { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

/// A browser's login: its id (the cookie) and the CSRF value its forms carry, both random.
struct Session: Sendable {
    let id: String
    let csrf: String
    let expires: Date
}

/// The live sessions of this process (a dashboard behind a load balancer needs sticky
/// sessions, or logs in on each instance). At most `limit`: the oldest go first.
final class SessionBook: Sendable {
    private let sessions = Mutex<[String: Session]>([:])
    static let limit = 1000

    func start(lifetime: TimeInterval, now: Date = Date()) -> Session {
        let session = Session(id: Self.random(), csrf: Self.random(), expires: now.addingTimeInterval(lifetime))
        sessions.withLock { book in
            book = book.filter { $0.value.expires > now }
            if book.count >= Self.limit, let oldest = book.min(by: { $0.value.expires < $1.value.expires }) { book[oldest.key] = nil }
            book[session.id] = session
        }
        return session
    }

    func live(_ id: String, now: Date = Date()) -> Session? {
        sessions.withLock { book in
            guard let session = book[id] else { return nil }
            if session.expires <= now { book[id] = nil; return nil }
            return session
        }
    }

    func end(_ id: String) {
        sessions.withLock { $0[id] = nil }
    }

    /// 32 random bytes from the system's generator, as hex.
    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
    }
}

/// Failed logins, counted per client address and in all, over a sliding minute: past
/// `perClient` from one address or `overall` from all, logins are refused (429) until the
/// minute has passed, so a token cannot be guessed at the speed of the network.
final class LoginThrottle: Sendable {
    private let failures = Mutex<[(client: String, at: Date)]>([])
    static let window: TimeInterval = 60
    static let perClient = 5
    static let overall = 30

    /// Seconds to wait before trying again, or nil when a login may be tried now.
    func retryAfter(_ client: String, now: Date = Date()) -> Int? {
        failures.withLock { list in
            list.removeAll { now.timeIntervalSince($0.at) >= Self.window }
            let mine = list.filter { $0.client == client }
            guard mine.count >= Self.perClient || list.count >= Self.overall else { return nil }
            let oldest = (mine.count >= Self.perClient ? mine : list).map(\.at).min() ?? now
            return max(1, Int((Self.window - now.timeIntervalSince(oldest)).rounded(.up)))
        }
    }

    func failed(_ client: String, now: Date = Date()) {
        failures.withLock { $0.append((client, now)) }
    }
}

/// Text from a request, made safe for one log line: control characters (a CR or LF would
/// start a forged line) written as escapes, and at most 200 characters.
enum LogText {
    static func oneLine(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(200) {
            if scalar.properties.generalCategory == .control { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}
