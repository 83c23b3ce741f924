import DeriveDigest
import FlyingFox
import Foundation

/// Who may act (retry, cancel). With a token configured (`DERIVE_DASHBOARD_TOKEN`): a browser
/// that logged in with it, holding a cookie with a digest of it (HttpOnly, SameSite=Strict, so
/// another site's page cannot send it), and sending a form that carries a second digest (the
/// CSRF field, which another site cannot read); or a script sending `Authorization: Bearer`
/// with the token itself. Without a token nobody acts: the dashboard is read-only. The token
/// itself never appears in a page, a cookie or a log.
public struct DashboardAccess: Sendable {
    let token: String?

    public init(token: String?) {
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
    }

    public var canAct: Bool { token != nil }

    static let cookieName = "derive_dashboard"

    var session: String? { token.map { ContentHash.sha256(Array("derive-dashboard-session\u{0}\($0)".utf8)) } }
    /// The value every action form carries.
    var csrf: String? { token.map { ContentHash.sha256(Array("derive-dashboard-csrf\u{0}\($0)".utf8)) } }

    /// The request comes from a browser that logged in.
    func isLoggedIn(_ request: HTTPRequest) -> Bool {
        guard let session, let cookies = request.headers[.cookie] else { return false }
        return cookies.split(separator: ";").contains { pair in
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            return parts.count == 2 && parts[0] == Self.cookieName && Self.same(String(parts[1]), session)
        }
    }

    /// The request may act: a logged-in browser's form with the CSRF field, or the bearer token.
    func mayAct(_ request: HTTPRequest, form: [String: String]) -> Bool {
        guard let token, let csrf else { return false }
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") {
            return Self.same(String(authorization.dropFirst(7)), token)
        }
        return isLoggedIn(request) && Self.same(form["csrf"] ?? "", csrf)
    }

    func tokenMatches(_ candidate: String) -> Bool {
        guard let token else { return false }
        return Self.same(candidate, token)
    }

    /// Compares in time that depends on the lengths only, not on where they first differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<min(x.count, y.count) { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
