@testable import DeriveHTTP
import DeriveTestSupport
import Foundation
import Testing

/// DeriveHTTP's plain values (issue 39 moved the layer under them): routes match as FlyingFox's
/// did, and a request target is decoded the same way, so no handler saw a change.
@Suite struct HTTPRoutesTests {
    static func routes() -> HTTPRoutes {
        var routes = HTTPRoutes()
        for pattern in ["GET /", "GET /jobs", "GET /jobs/:id", "GET /jobs/:id/outputs/:index", "POST /jobs/:id/retry", "GET /static/*", "/any", "*"] {
            routes.append(pattern) { request in
                let parameters = request.routeParameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                return HTTPResponse(statusCode: .ok, body: Data((pattern + (parameters.isEmpty ? "" : " " + parameters)).utf8))
            }
        }
        return routes
    }

    @Test(arguments: [
        ("GET", "/", "GET /"), ("GET", "/jobs", "GET /jobs"), ("GET", "/jobs/", "GET /jobs"), ("GET", "/JOBS", "GET /jobs"),
        ("GET", "/jobs/42", "GET /jobs/:id id=42"), ("GET", "/jobs/42/outputs/3", "GET /jobs/:id/outputs/:index id=42,index=3"),
        ("POST", "/jobs/42", "*"), ("POST", "/jobs/7/retry", "POST /jobs/:id/retry id=7"), ("GET", "/jobs/7/retry", "*"),
        ("GET", "/static/a/b.css", "GET /static/*"), ("GET", "/static", "GET /static/*"), ("DELETE", "/any", "/any"),
        ("GET", "/jobs/42/outputs", "*"), ("GET", "//jobs//42", "GET /jobs/:id id=42"),
    ])
    func routesMatchInOrder(method: String, path: String, expected: String) async {
        let response = await Self.routes().respond(to: HTTPRequest(method: HTTPMethod(method), path: path))
        #expect(String(decoding: response.body, as: UTF8.self) == expected)
    }

    /// A prepared response (the delivery cache's) is answered again and again with the same
    /// bytes as the response it was made from, and a change after preparing is what is sent.
    @Test func aPreparedResponseAnswersAsItsResponseAndAChangeDropsIt() async throws {
        var prepared = HTTPResponse(statusCode: .ok, headers: [.contentType: "image/webp", HTTPHeader("ETag"): "\"abc\"", HTTPHeader("Vary"): "Accept"],
                                    body: Data((0..<20_000).map { UInt8($0 % 251) }))
        let plain = prepared
        prepared.prepare()
        #expect(prepared.wire != nil)
        var changed = prepared
        changed.headers[HTTPHeader("ETag")] = "\"def\""
        #expect(changed.wire == nil, "a change drops the prepared form")
        var routes = HTTPRoutes()
        routes.append("GET /plain") { [plain] _ in plain }
        routes.append("GET /prepared") { [prepared] _ in prepared }
        routes.append("GET /changed") { [changed] _ in changed }
        let listener = try await HTTPListener.start(address: "127.0.0.1", port: 0, timeout: 30, logger: .init(label: "test"), routes: routes)
        func body(_ path: String) async -> (head: String, body: [UInt8]) {
            let reply = await RawHTTP.send(RawHTTP.request("GET", path), port: listener.port)
            let end = reply.bytes.indices.first { reply.bytes[$0...].starts(with: Array("\r\n\r\n".utf8)) } ?? reply.bytes.count
            let head = String(decoding: reply.bytes[..<end], as: UTF8.self).split(separator: "\r\n").filter { !$0.lowercased().hasPrefix("date:") }
            return (head.joined(separator: "\n"), Array(reply.bytes.dropFirst(end + 4)))
        }
        let expected = await body("/plain")
        #expect(expected.body.count == 20_000 && expected.head.contains("Vary: Accept"), "\(expected.head)")
        for _ in 0..<3 {
            let answer = await body("/prepared")
            #expect(answer.head == expected.head && answer.body == expected.body)
        }
        let other = await body("/changed")
        #expect(other.head.contains("\"def\"") && !other.head.contains("\"abc\"") && other.body == expected.body, "\(other.head)")
        await listener.stop()
    }

    @Test func noRouteIs404AndAThrowingHandler500() async {
        #expect(await HTTPRoutes().respond(to: HTTPRequest(method: .GET, path: "/x")).statusCode.code == 404)
        var routes = HTTPRoutes()
        routes.append("*") { _ in throw CancellationError() }
        #expect(await routes.respond(to: HTTPRequest(method: .GET, path: "/x")).statusCode.code == 500)
    }

    @Test func aTargetIsDecodedAndStandardised() {
        let request = HTTPRequest(method: .GET, target: "/a%20b/./c/../d?x=1&y=a%2Bb&y=2&z")
        #expect(request.path == "/a b/d")
        #expect(request.query["x"] == "1" && request.query["y"] == "a+b" && request.query["z"] == "" && request.query["w"] == nil)
        #expect(HTTPRequest(method: .GET, target: "no path at all ::").path == "")
        // The plain path's shortcut reads every target as Foundation does, or leaves it to it.
        for target in ["/", "/a", "/demo/image/upload/c_fill,w_200,h_200,g_auto/v1700000000/folder/photo.jpg", "/a/", "/a/.", "/a/..", "/./a",
                       "/a/../b", "/a/.b", "/a/..b", "/a/b.", "/.well-known/x", "/a//b", "//a", "/a%20b", "/a b", "/a|b", "/a\"b", "/é",
                       "/a?x=1", "/a#f", "/l_text:Arial_20:Hi!/x.png", "/$x;y=z/@a", "/...", "/a/...", "relative", ""] {
            let shortcut = HTTPRequest.plainPath(target)
            let standard = HTTPRequest.standardComponents(of: target)
            #expect(shortcut == nil || (shortcut == standard.path && standard.query.isEmpty), "\(target): \(String(describing: shortcut)) vs \(standard)")
        }
        #expect(HTTPRequest.plainPath("/demo/image/upload/c_fill,w_200/v1/p.jpg") != nil && HTTPRequest.plainPath("/a/./b") == nil)
        // Header names compare without regard to case.
        let headers: HTTPHeaders = [HTTPHeader("content-TYPE"): "text/plain"]
        #expect(headers[.contentType] == "text/plain")
    }
}
