/// Routes tried in the order they were added, the first that matches answering:
/// `"GET /jobs/:id"` (a method, then a path whose `:name` segments match any one segment and are
/// handed to the handler in `routeParameters`), `"/path"` (any method), `"GET /static/*"`
/// (a final `*` matches every remaining segment, or none) and `"*"` (everything). Segments
/// compare without regard to case; empty segments (`//`, a trailing `/`) are ignored.
public struct HTTPRoutes: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse

    struct Route: Sendable {
        enum Segment: Sendable, Equatable {
            case literal(String)
            case parameter(String)
            case rest
        }

        let method: HTTPMethod?
        let segments: [Segment]
        let handler: Handler

        init(_ pattern: String, handler: @escaping Handler) {
            let words = pattern.split(separator: " ", maxSplits: 1).map(String.init)
            let path: String
            if words.count == 2 {
                method = HTTPMethod(words[0].uppercased())
                path = words[1]
            } else {
                method = nil
                path = words.first ?? "*"
            }
            segments = path.split(separator: "/").map { segment in
                if segment == "*" { return .rest }
                if segment.hasPrefix(":") { return .parameter(String(segment.dropFirst())) }
                return .literal(segment.lowercased())
            }
            self.handler = handler
        }

        /// The route's parameters when it matches `method` and `path`.
        func match(_ method: HTTPMethod, _ path: String) -> [String: String]? {
            if let expected = self.method, expected != method { return nil }
            let nodes = path.split(separator: "/")
            var parameters: [String: String] = [:]
            for (index, segment) in segments.enumerated() {
                if segment == .rest { return parameters }
                guard index < nodes.count else { return nil }
                switch segment {
                case .literal(let text): guard nodes[index].lowercased() == text else { return nil }
                case .parameter(let name): parameters[name] = String(nodes[index])
                case .rest: return parameters
                }
            }
            return nodes.count == segments.count ? parameters : nil
        }
    }

    private(set) var routes: [Route] = []

    public init() {}

    public mutating func append(_ pattern: String, _ handler: @escaping Handler) {
        routes.append(Route(pattern, handler: handler))
    }

    public mutating func append(contentsOf other: HTTPRoutes) {
        routes += other.routes
    }

    /// The first matching route's answer; 404 when none matches, 500 when a handler throws (a
    /// handler answers its own failures; a throw is a defect, not a client's error).
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        for route in routes {
            guard let parameters = route.match(request.method, request.path) else { continue }
            var request = request
            request.routeParameters = parameters
            do {
                return try await route.handler(request)
            } catch {
                return HTTPResponse(statusCode: .internalServerError, headers: [.contentType: "text/plain; charset=utf-8"],
                                    body: Data("Internal error\n".utf8))
            }
        }
        return HTTPResponse(statusCode: .notFound, headers: [.contentType: "text/plain; charset=utf-8"], body: Data("Not found\n".utf8))
    }
}

import Foundation
