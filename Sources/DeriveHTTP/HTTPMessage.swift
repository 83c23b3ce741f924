import Foundation

// The request and response every Derive server handles (`derive serve`, the dashboard,
// `/metrics`): plain values, independent of the HTTP library underneath (HTTPListener is the one
// place that knows it), so handlers are tested and fuzzed without a socket.

/// A request method, as sent (upper case by convention; compared exactly).
public struct HTTPMethod: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let GET = HTTPMethod("GET")
    public static let HEAD = HTTPMethod("HEAD")
    public static let POST = HTTPMethod("POST")
    public static let PUT = HTTPMethod("PUT")
    public static let DELETE = HTTPMethod("DELETE")
    public static let PATCH = HTTPMethod("PATCH")
    public static let OPTIONS = HTTPMethod("OPTIONS")
}

/// A header's name, compared without regard to case.
public struct HTTPHeader: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let name: String
    private let folded: String

    public init(_ name: String) {
        self.name = name
        folded = name.lowercased()
    }

    public init(stringLiteral name: String) { self.init(name) }
    public var description: String { name }

    public static func == (a: HTTPHeader, b: HTTPHeader) -> Bool { a.folded == b.folded }
    public func hash(into hasher: inout Hasher) { hasher.combine(folded) }

    public static let acceptRanges = HTTPHeader("Accept-Ranges")
    public static let authorization = HTTPHeader("Authorization")
    public static let cacheControl = HTTPHeader("Cache-Control")
    public static let contentLength = HTTPHeader("Content-Length")
    public static let contentType = HTTPHeader("Content-Type")
    public static let cookie = HTTPHeader("Cookie")
    public static let eTag = HTTPHeader("ETag")
    public static let host = HTTPHeader("Host")
    public static let ifModifiedSince = HTTPHeader("If-Modified-Since")
    public static let ifNoneMatch = HTTPHeader("If-None-Match")
    public static let lastModified = HTTPHeader("Last-Modified")
    public static let location = HTTPHeader("Location")
    public static let range = HTTPHeader("Range")
    public static let setCookie = HTTPHeader("Set-Cookie")
    public static let xForwardedFor = HTTPHeader("X-Forwarded-For")
}

/// A message's headers, one value a name: a request's repeated header arrives joined with
/// ", " (`Cookie` with "; "), as RFC 9110 allows for lists.
public typealias HTTPHeaders = [HTTPHeader: String]

/// A status: its code and reason phrase.
public struct HTTPStatusCode: Hashable, Sendable, CustomStringConvertible {
    public let code: Int
    public let phrase: String

    public init(_ code: Int, phrase: String) {
        self.code = code
        self.phrase = phrase
    }

    public var description: String { "\(code) \(phrase)" }

    public static let ok = HTTPStatusCode(200, phrase: "OK")
    public static let created = HTTPStatusCode(201, phrase: "Created")
    public static let noContent = HTTPStatusCode(204, phrase: "No Content")
    public static let partialContent = HTTPStatusCode(206, phrase: "Partial Content")
    public static let movedPermanently = HTTPStatusCode(301, phrase: "Moved Permanently")
    public static let found = HTTPStatusCode(302, phrase: "Found")
    public static let seeOther = HTTPStatusCode(303, phrase: "See Other")
    public static let notModified = HTTPStatusCode(304, phrase: "Not Modified")
    public static let badRequest = HTTPStatusCode(400, phrase: "Bad Request")
    public static let unauthorized = HTTPStatusCode(401, phrase: "Unauthorized")
    public static let forbidden = HTTPStatusCode(403, phrase: "Forbidden")
    public static let notFound = HTTPStatusCode(404, phrase: "Not Found")
    public static let methodNotAllowed = HTTPStatusCode(405, phrase: "Method Not Allowed")
    public static let payloadTooLarge = HTTPStatusCode(413, phrase: "Payload Too Large")
    public static let misdirectedRequest = HTTPStatusCode(421, phrase: "Misdirected Request")
    public static let tooManyRequests = HTTPStatusCode(429, phrase: "Too Many Requests")
    public static let internalServerError = HTTPStatusCode(500, phrase: "Internal Server Error")
    public static let serviceUnavailable = HTTPStatusCode(503, phrase: "Service Unavailable")
}

/// Who sent a request: the peer's address (a proxy's, behind one).
public enum HTTPRemoteAddress: Sendable, Equatable {
    case ip4(String, port: Int)
    case ip6(String, port: Int)
    case unix(String)
}

public struct HTTPRequest: Sendable {
    /// One `name=value` of the query, decoded (`+` stays a plus, as in URLComponents).
    public struct QueryItem: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var method: HTTPMethod
    /// The path, percent-decoded, with `.` and `..` segments resolved.
    public var path: String
    public var query: [QueryItem]
    public var headers: HTTPHeaders
    public var remoteAddress: HTTPRemoteAddress?
    /// The values of a route's `:name` segments, set by HTTPRoutes.
    public var routeParameters: [String: String] = [:]
    /// The body, read once, in chunks as they arrive.
    public let bodySequence: HTTPRequestBody

    public init(method: HTTPMethod, path: String, query: [QueryItem] = [], headers: HTTPHeaders = [:],
                remoteAddress: HTTPRemoteAddress? = nil, body: HTTPRequestBody = HTTPRequestBody(Data())) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
        bodySequence = body
    }

    /// A request for a request target as sent on the request line (`/a%20b/./c?x=1`): the path
    /// decoded and standardised, the query split into items. A target that is not a URL's path
    /// has the empty path (no route matches it).
    public init(method: HTTPMethod, target: String, headers: HTTPHeaders = [:], remoteAddress: HTTPRemoteAddress? = nil,
                body: HTTPRequestBody = HTTPRequestBody(Data())) {
        let (path, query) = Self.components(of: target)
        self.init(method: method, path: path, query: query, headers: headers, remoteAddress: remoteAddress, body: body)
    }

    static func components(of target: String) -> (path: String, query: [QueryItem]) {
        plainPath(target).map { ($0, []) } ?? standardComponents(of: target)
    }

    /// A target that is already its own standard form: a path of URL characters with nothing
    /// to decode or resolve (no `%`, no `.` or `..` segment, no trailing `/`) and no query,
    /// as nearly every delivery URL is. Foundation's URL parsing is a good part of a request's
    /// cost (issue 39); this gives the same path without it (HTTPRoutesTests holds the two
    /// readings equal).
    static func plainPath(_ target: String) -> String? {
        var utf8 = target.utf8[...]
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        if utf8.count == 1 { return target }
        // `//a` names a host to Foundation, not a path.
        guard utf8.last != UInt8(ascii: "/"), utf8.dropFirst().first != UInt8(ascii: "/") else { return nil }
        var segmentStart = true, dots = 0
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "/") {
                if dots == 1 || dots == 2 { return nil }
                segmentStart = true
                dots = 0
                continue
            }
            if segmentStart && byte == UInt8(ascii: ".") || dots > 0 && byte == UInt8(ascii: ".") {
                dots += 1
            } else {
                dots = 3
            }
            segmentStart = false
            guard plainByte[Int(byte)] else { return nil }
        }
        return dots == 1 || dots == 2 ? nil : target
    }

    /// RFC 3986's unreserved and sub-delimiter characters, `:` and `@`: what a path may hold
    /// as it is (no `%`, no `?`, no `#`).
    private static let plainByte: [Bool] = (0..<256).map { byte in
        guard byte < 128, let scalar = Unicode.Scalar(byte) else { return false }
        let character = Character(scalar)
        return character.isASCII && (character.isLetter || character.isNumber) || "-._~!$&'()*+,;=:@/".contains(character)
    }

    /// The target read by Foundation: the path percent-decoded and standardised (dot segments
    /// resolved, a trailing `/` dropped), the query split into decoded items.
    static func standardComponents(of target: String) -> (path: String, query: [QueryItem]) {
        let components = URLComponents(string: target)
        let path = components.flatMap { URL(string: $0.percentEncodedPath)?.standardized.path } ?? ""
        let query = components?.queryItems?.map { QueryItem(name: $0.name, value: $0.value ?? "") } ?? []
        return (path, query)
    }
}

extension [HTTPRequest.QueryItem] {
    /// The first value of a query parameter.
    public subscript(_ name: String) -> String? {
        first { $0.name == name }?.value
    }
}

/// A request's body: chunks from the connection, or one chunk for a request made in process.
/// Read it once.
public struct HTTPRequestBody: AsyncSequence, Sendable {
    public typealias Element = Data
    public typealias Failure = any Error

    public struct AsyncIterator: AsyncIteratorProtocol {
        let nextChunk: () async throws -> Data?
        public mutating func next() async throws -> Data? { try await nextChunk() }
    }

    private let reader: @Sendable () -> () async throws -> Data?

    /// A body in memory.
    public init(_ data: Data) {
        reader = {
            var sent = data.isEmpty
            return {
                defer { sent = true }
                return sent ? nil : data
            }
        }
    }

    /// A body read by `reader`'s function, one chunk a call, nil at the end.
    public init(reader: @escaping @Sendable () -> () async throws -> Data?) {
        self.reader = reader
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(nextChunk: reader()) }
}

public struct HTTPResponse: Sendable {
    public var statusCode: HTTPStatusCode { didSet { wire = nil } }
    public var headers: HTTPHeaders { didSet { wire = nil } }
    public var body: Data { didSet { wire = nil } }
    /// The response as the listener writes it, made once by `prepare()` for a response answered
    /// many times (the delivery cache's): its headers converted and its body copied into the
    /// connection's buffer type on every request were most of what a cached answer cost. Any
    /// change to the response drops it.
    var wire: WireResponse?

    public init(statusCode: HTTPStatusCode, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
    }

    /// Converts the response to the listener's form now, so that each time it is answered
    /// costs no conversion.
    public mutating func prepare() {
        wire = WireResponse(self)
    }
}
