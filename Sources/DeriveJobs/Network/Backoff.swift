import DeriveLanguage
import Foundation

/// Exponential backoff with full jitter: attempt n waits a random time up to
/// min(maximum, base · factor^(n-1)), so retries from many workers spread out instead of
/// arriving together.
public struct Backoff: Sendable, Hashable {
    public var base: Double
    public var factor: Double
    public var maximum: Double

    public init(base: Double = 0.5, factor: Double = 2, maximum: Double = 30) {
        self.base = base
        self.factor = factor
        self.maximum = maximum
    }

    /// The ceiling for attempt `n` (1-based).
    public func ceiling(attempt: Int) -> Double {
        min(maximum, base * pow(factor, Double(max(0, attempt - 1))))
    }

    public func delay<R: RandomNumberGenerator>(attempt: Int, using random: inout R) -> Double {
        Double.random(in: 0...ceiling(attempt: attempt), using: &random)
    }

    public func delay(attempt: Int) -> Double {
        var random = SystemRandomNumberGenerator()
        return delay(attempt: attempt, using: &random)
    }
}

/// `Retry-After`: delta seconds, or an HTTP date (IMF-fixdate, RFC 850 or asctime).
public enum RetryAfter {
    public static func seconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let delta = Int(text), delta >= 0 { return Double(delta) }
        guard let date = HTTPDate.parse(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

/// HTTP dates, for `Retry-After`, `Date`, `Expires` and `Last-Modified`.
public enum HTTPDate {
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]

    public static func parse(_ text: String) -> Date? {
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    public static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

/// How long a response may be served from cache, from its headers (RFC 9111, the parts a
/// private cache of image sources needs).
public struct Freshness: Sendable, Hashable {
    public var noStore: Bool
    /// Must be revalidated before every use.
    public var noCache: Bool
    /// Seconds the response stays fresh after it was received.
    public var lifetime: Double
    public var etag: String?
    public var lastModified: String?

    /// From response headers (names lowercased).
    public init(headers: [String: String], now: Date = Date()) {
        let directives = (headers["cache-control"] ?? "").lowercased().split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        noStore = directives.contains("no-store")
        noCache = directives.contains("no-cache")
        etag = headers["etag"]
        lastModified = headers["last-modified"]
        if let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }).flatMap({ Double($0.dropFirst(8)) }) {
            lifetime = max(0, maxAge)
        } else if let expires = headers["expires"] {
            let date = headers["date"].flatMap(HTTPDate.parse) ?? now
            lifetime = HTTPDate.parse(expires).map { max(0, $0.timeIntervalSince(date)) } ?? 0
        } else {
            lifetime = 0
        }
    }

    public init(noStore: Bool = false, noCache: Bool = false, lifetime: Double, etag: String? = nil, lastModified: String? = nil) {
        self.noStore = noStore
        self.noCache = noCache
        self.lifetime = lifetime
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Worth keeping: it may be served fresh, or revalidated with a validator.
    public var isCacheable: Bool { !noStore && (lifetime > 0 || etag != nil || lastModified != nil) }

    public func isFresh(storedAt: Date, now: Date = Date()) -> Bool {
        !noCache && now.timeIntervalSince(storedAt) < lifetime
    }
}
