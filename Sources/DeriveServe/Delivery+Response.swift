import DeriveJobs
import DeriveLanguage
import DeriveHTTP
import Foundation

extension CloudinaryService {
    /// How a delivery is answered beyond its bytes.
    struct Answer {
        /// The URL names the asset's current version: cached a year, immutable.
        var versioned: Bool
        /// The asset's version (the Unix time of its upload): `Last-Modified`.
        var lastModified: Int
        /// The request headers the answer varies by.
        var vary: [String] = []
        /// The client hints to ask for.
        var acceptCH: String?
    }

    /// `If-None-Match` names the answer's ETag (or, without it, `If-Modified-Since` is no
    /// earlier than its `Last-Modified`): a 304 then.
    static func notModified(_ request: HTTPRequest, etag tag: String, lastModified: Int?) -> Bool {
        if let match = request.headers[.ifNoneMatch] {
            return match.split(separator: ",").contains { item in
                let item = item.trimmingCharacters(in: .whitespaces)
                return item == tag || item == "W/" + tag || item == "*"
            }
        }
        guard let since = request.headers[.ifModifiedSince].flatMap(IMFDate.parse), let lastModified else { return false }
        return lastModified <= since
    }

    /// A stored object, with its ETag, `Last-Modified` and caching: a year, immutable, for a URL
    /// naming the asset's version (a new upload has a new version); a day otherwise.
    /// `If-None-Match` (or, without it, `If-Modified-Since`) gets 304; a single `Range` 206 (416
    /// past the end; several ranges, or an `If-Range` that no longer matches, the whole).
    /// `Content-Type` is read from the bytes served, never from the URL or the record.
    func serve(_ request: HTTPRequest, key: StorageKey, etag: String, recordedFormat: String?, answer: Answer) async throws -> HTTPResponse {
        let tag = "\"\(etag.prefix(32))\""
        var headers: HTTPHeaders = [
            HTTPHeader("ETag"): tag,
            HTTPHeader("Cache-Control"): answer.versioned ? "public, max-age=31536000, immutable" : "public, max-age=86400",
            HTTPHeader("Last-Modified"): IMFDate.format(answer.lastModified),
            HTTPHeader("X-Content-Type-Options"): "nosniff",
            HTTPHeader("Accept-Ranges"): "bytes",
        ]
        if !answer.vary.isEmpty { headers[HTTPHeader("Vary")] = answer.vary.joined(separator: ", ") }
        if let acceptCH = answer.acceptCH { headers[HTTPHeader("Accept-CH")] = acceptCH }
        if Self.notModified(request, etag: tag, lastModified: answer.lastModified) {
            return HTTPResponse(statusCode: .notModified, headers: headers)
        }
        // With an S3 store and DERIVE_SERVE_REDIRECT=presigned: a redirect to a short-lived
        // presigned GET, so the bytes go from S3 to the client. The redirect may be reused for
        // half the URL's life (it is still valid then); the credentials never leave.
        if let seconds = settings.presignedRedirectSeconds, let location = store.temporaryURL(for: key, expiresIn: seconds) {
            var redirect: HTTPHeaders = [
                HTTPHeader("Location"): location, HTTPHeader("ETag"): tag, HTTPHeader("Cache-Control"): "private, max-age=\(seconds / 2)",
            ]
            if !answer.vary.isEmpty { redirect[HTTPHeader("Vary")] = answer.vary.joined(separator: ", ") }
            return HTTPResponse(statusCode: .found, headers: redirect)
        }
        let bytes: [UInt8]?
        do {
            bytes = try await Self.offPool { [store] () throws(DeriveError) -> [UInt8]? in try store.get(key) }
        } catch {
            throw ServeError(500, "The store could not be read")
        }
        guard let bytes else { throw ServeError(404, "Resource not found") }
        headers[HTTPHeader("Content-Type")] = ImageSniffer.format(of: bytes)?.mediaType
            ?? recordedFormat.flatMap(OutputFormat.parse).map(\.mediaType) ?? "application/octet-stream"
        var status = HTTPStatusCode.ok
        var body = bytes[...]
        if let range = request.headers[HTTPHeader("Range")],
           request.headers[HTTPHeader("If-Range")].map({ $0.trimmingCharacters(in: .whitespaces) == tag }) ?? true {
            switch ByteRange.parse(range, length: bytes.count) {
            case .whole: break
            case .unsatisfiable:
                headers[HTTPHeader("Content-Range")] = "bytes */\(bytes.count)"
                headers[HTTPHeader("Content-Type")] = nil
                return HTTPResponse(statusCode: HTTPStatusCode(416, phrase: "Range Not Satisfiable"), headers: headers)
            case .part(let part):
                status = HTTPStatusCode(206, phrase: "Partial Content")
                headers[HTTPHeader("Content-Range")] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(bytes.count)"
                body = bytes[part]
            }
        }
        if request.method == .HEAD {
            headers[HTTPHeader("Content-Length")] = String(body.count)
            return HTTPResponse(statusCode: status, headers: headers)
        }
        return HTTPResponse(statusCode: status, headers: headers, body: Data(body))
    }
}

/// A `Range` request header's reading for a body of `length` bytes: one range (`bytes=0-99`,
/// `bytes=100-`, `bytes=-100`), the whole body (no `bytes=` unit, several ranges, or anything
/// malformed: RFC 9110 lets a server ignore those), or unsatisfiable (starts past the end).
public enum ByteRange: Equatable, Sendable {
    case whole
    case part(Range<Int>)
    case unsatisfiable

    public static func parse(_ header: String, length: Int) -> ByteRange {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.count <= 200, text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .whole }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let sides = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2, sides.allSatisfy({ $0.count <= 18 && $0.allSatisfy(\.isASCIIDigit) }) else { return .whole }
        switch (Int(sides[0]), Int(sides[1])) {
        case (let first?, let last?):
            guard first <= last else { return .whole }
            guard first < length else { return .unsatisfiable }
            return .part(first..<(min(last, length - 1) + 1))
        case (let first?, nil):
            guard first < length else { return .unsatisfiable }
            return .part(first..<length)
        case (nil, let suffix?):
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .part(max(0, length - suffix)..<length)
        case (nil, nil):
            return .whole
        }
    }
}

/// HTTP dates (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`) for every delivery's
/// `Last-Modified`, written and read by arithmetic: `DeriveJobs.HTTPDate` makes a DateFormatter
/// per call, too slow for each response of a static-file path. `DeliveryGrammarTests` holds the
/// two to the same text.
public enum IMFDate {
    static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(_ seconds: Int) -> String {
        let day = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let time = seconds - day * 86400
        let (y, m, d) = civil(day)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }
        return "\(days[((day % 7) + 7) % 7]), \(two(d)) \(months[m - 1]) \(y) \(two(time / 3600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }

    /// Unix seconds of an IMF-fixdate; nil for anything else (the obsolete forms included).
    public static func parse(_ text: String) -> Int? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", parts[0].count == 4, let d = Int(parts[1]), (1...31).contains(d),
              let m = months.firstIndex(of: String(parts[2])), let y = Int(parts[3]), (1970...9999).contains(y) else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let h = Int(clock[0]), let mi = Int(clock[1]), let s = Int(clock[2]),
              (0...23).contains(h), (0...59).contains(mi), (0...60).contains(s) else { return nil }
        return daysFromCivil(y, m + 1, d) * 86400 + h * 3600 + mi * 60 + s
    }

    /// Howard Hinnant's days-from-civil and its inverse (proleptic Gregorian calendar).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civil(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
