import DeriveLanguage
import DeriveJobs
import DeriveDigest
import Foundation

/// Presigned S3 GET URLs: SigV4 in the query string (AWS S3 API reference, "Authenticating
/// Requests: Using Query Parameters"), so a browser can fetch one object for a short time
/// without any credential. The URL carries the access key ID (in `X-Amz-Credential`, as every
/// presigned URL does) and, with temporary credentials, the session token S3 requires beside
/// it; never the secret key.
///
/// The URL is built by `S3Client.url` (path or virtual-host style, the same percent-encoding
/// and query order as the store's own requests), and the canonical request is read back from
/// that very string, so the signature and the URL agree on every byte.
public enum S3Presigner {
    /// SigV4's limit for presigned URLs: 7 days.
    public static let maximumExpiry = 604_800

    /// A presigned GET of `key` in `bucket` valid for `expires` seconds from `now`; nil when
    /// `expires` is outside 1...604800 or the endpoint is not an absolute http(s) URL. A pure
    /// function of its arguments.
    public static func presignedGET(settings: S3Settings, bucket: String, key: String, now: Date, expires: Int) -> String? {
        guard (1...maximumExpiry).contains(expires) else { return nil }
        let time = timestamp(now)
        let day = String(time.prefix(8))
        let scope = "\(day)/\(settings.region)/s3/aws4_request"
        var query = [("X-Amz-Algorithm", "AWS4-HMAC-SHA256"), ("X-Amz-Credential", "\(settings.accessKey)/\(scope)"),
                     ("X-Amz-Date", time), ("X-Amz-Expires", String(expires)), ("X-Amz-SignedHeaders", "host")]
        if let token = settings.sessionToken { query.append(("X-Amz-Security-Token", token)) }
        let url = S3Client.url(settings: settings, bucket: bucket, key: key, query: query)
        guard let parts = Parts(url) else { return nil }
        let canonicalRequest = ["GET", parts.path, parts.query, "host:\(parts.signedHost)", "", "host", "UNSIGNED-PAYLOAD"]
            .joined(separator: "\n")
        let stringToSign = ["AWS4-HMAC-SHA256", time, scope, ContentHash.sha256(Array(canonicalRequest.utf8))].joined(separator: "\n")
        let signature = HMACSHA256.hex(HMACSHA256.authenticate(stringToSign, key: signingKey(settings, day: day)))
        return url + "&X-Amz-Signature=" + signature
    }

    /// The origin (`scheme://host[:port]`, the port only when not the scheme's default) the
    /// store's presigned URLs point at: what a Content-Security-Policy must allow to show them.
    public static func origin(settings: S3Settings, bucket: String) -> String? {
        guard let parts = Parts(S3Client.url(settings: settings, bucket: bucket, key: "")) else { return nil }
        return "\(parts.scheme)://\(parts.signedHost.lowercased())"
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC, whole seconds.
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var fields = tm()
        gmtime_r(&seconds, &fields)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return String(fields.tm_year + 1900) + two(fields.tm_mon + 1) + two(fields.tm_mday) + "T"
            + two(fields.tm_hour) + two(fields.tm_min) + two(fields.tm_sec) + "Z"
    }

    static func signingKey(_ settings: S3Settings, day: String) -> [UInt8] {
        var key = Array("AWS4\(settings.secretKey)".utf8)
        for part in [day, settings.region, "s3", "aws4_request"] { key = HMACSHA256.authenticate(part, key: key) }
        return key
    }

    /// A built URL split the way SigV4 needs it: the path and the query exactly as written,
    /// and the host as a client sends it in `Host` (without the scheme's default port).
    struct Parts {
        var scheme: String
        var signedHost: String
        var path: String
        var query: String

        init?(_ url: String) {
            guard let separator = url.range(of: "://") else { return nil }
            let scheme = url[..<separator.lowerBound].lowercased()
            guard scheme == "http" || scheme == "https" else { return nil }
            let rest = url[separator.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            var host = String(rest[..<authorityEnd])
            guard !host.isEmpty, !host.contains("@") else { return nil }
            let defaultPort = scheme == "https" ? ":443" : ":80"
            if host.hasSuffix(defaultPort) { host.removeLast(defaultPort.count) }
            let target = rest[authorityEnd...]
            let queryStart = target.firstIndex(of: "?")
            let path = String(target[..<(queryStart ?? target.endIndex)])
            self.scheme = scheme
            self.signedHost = host
            self.path = path.isEmpty ? "/" : path
            self.query = queryStart.map { String(target[target.index(after: $0)...]) } ?? ""
        }
    }
}
