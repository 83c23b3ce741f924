import DeriveLanguage
import Foundation

/// How sources are fetched: time and size bounds, redirects, retries, who may be reached, what
/// to send, and where `file://` and `s3://` sources may come from.
public struct FetchSettings: Sendable {
    public var connectTimeout: Double
    /// The whole transfer, redirects included.
    public var totalTimeout: Double
    /// A transfer that moves fewer than one byte a second for this long is abandoned.
    public var stallTimeout: Double
    public var maxRedirects: Int
    /// Attempts per fetch for connection errors, 5xx and 429 (the job is retried later too).
    public var attempts: Int
    public var backoff: Backoff
    /// A `Retry-After` longer than this is not waited out here: the job goes back to the queue.
    public var maxRetryAfter: Double
    public var userAgent: String
    public var addressPolicy: AddressPolicy
    /// Headers and credentials per host name; never logged.
    public var hosts: [String: HostCredentials]
    /// Folders `file://` sources (and absolute paths) may be read from; none by default.
    public var fileRoots: [URL]
    public var s3: S3Settings?
    /// Buckets `s3://` sources may name (`*` for any); the store's own bucket by default.
    public var s3SourceBuckets: Set<String>
    public var maxBytes: Int
    /// Formats named in `Accept`: what the engine decodes.
    public var acceptedFormats: [ImageFormat]

    public init(connectTimeout: Double = 5, totalTimeout: Double = 30, stallTimeout: Double = 10, maxRedirects: Int = 5,
                attempts: Int = 3, backoff: Backoff = Backoff(base: 0.25, factor: 2, maximum: 5), maxRetryAfter: Double = 10,
                userAgent: String = "Derive/0.1 (image derivation worker)", addressPolicy: AddressPolicy = AddressPolicy(),
                hosts: [String: HostCredentials] = [:], fileRoots: [URL] = [], s3: S3Settings? = nil,
                s3SourceBuckets: Set<String>? = nil, maxBytes: Int = SourceLimits.default.maxInputBytes,
                acceptedFormats: [ImageFormat] = [.avif, .webp, .jpeg, .png, .gif, .jxl, .heif, .tiff]) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.stallTimeout = stallTimeout
        self.maxRedirects = maxRedirects
        self.attempts = attempts
        self.backoff = backoff
        self.maxRetryAfter = maxRetryAfter
        self.userAgent = userAgent
        self.addressPolicy = addressPolicy
        self.hosts = hosts
        self.fileRoots = fileRoots.map(\.standardizedFileURL)
        self.s3 = s3
        self.s3SourceBuckets = s3SourceBuckets ?? (s3?.bucket.map { [$0] } ?? [])
        self.maxBytes = maxBytes
        self.acceptedFormats = acceptedFormats
    }

    /// `Accept`: the image types the engine decodes, then anything at low priority so an origin
    /// that cannot negotiate still answers.
    public var acceptHeader: String {
        (acceptedFormats.map(\.mediaType) + ["image/*;q=0.8", "*/*;q=0.1"]).joined(separator: ",")
    }

    /// Per-host settings from JSON: `{"cdn.example.com": {"bearer": "..."}, "img.example.org":
    /// {"basic": {"user": "u", "password": "p"}, "headers": {"X-Key": "v"}}}`.
    public static func hosts(json text: String) throws(ValidationError) -> [String: HostCredentials] {
        let value = try JSONChainDecoder.parse(text)
        let log = IssueCollector()
        var hosts: [String: HostCredentials] = [:]
        guard let entries = log.object(value, at: .root, allowed: [String](Self.jsonKeys(value))) else { throw ValidationError(log.issues) }
        for (host, entry) in entries {
            let path = JSONPath.root.appending(host)
            guard let fields = log.object(entry, at: path, allowed: ["bearer", "basic", "headers"]) else { continue }
            var credentials = HostCredentials()
            credentials.bearer = log.string(fields["bearer"], at: path.appending("bearer"))
            if let basic = fields["basic"], let parts = log.object(basic, at: path.appending("basic"), allowed: ["user", "password"]) {
                if let user = log.string(parts["user"], at: path.appending("basic").appending("user")),
                   let password = log.string(parts["password"], at: path.appending("basic").appending("password")) {
                    credentials.basic = (user, password)
                }
            }
            if let headers = fields["headers"], let list = log.object(headers, at: path.appending("headers"), allowed: [String](Self.jsonKeys(headers))) {
                for (name, value) in list {
                    guard let text = log.string(value, at: path.appending("headers").appending(name)) else { continue }
                    guard !name.contains(":"), !name.contains("\n"), !text.contains("\n"), !text.contains("\r") else {
                        log.add(path.appending("headers").appending(name), "header names and values must be one line without ':' in the name")
                        continue
                    }
                    credentials.headers[name] = text
                }
            }
            hosts[AddressPolicy.normalised(host)] = credentials
        }
        if !log.isEmpty { throw ValidationError(log.issues) }
        return hosts
    }

    private static func jsonKeys(_ value: JSONValue) -> [String] {
        if case .object(let members) = value { return members.map(\.key) }
        return []
    }
}

/// What is sent to one host: extra headers, and bearer or basic credentials.
public struct HostCredentials: Sendable {
    public var headers: [String: String] = [:]
    public var bearer: String?
    public var basic: (user: String, password: String)?

    public init(headers: [String: String] = [:], bearer: String? = nil, basic: (user: String, password: String)? = nil) {
        self.headers = headers
        self.bearer = bearer
        self.basic = basic
    }

    /// Header lines to send (the credential among them); never logged.
    public var headerLines: [String] {
        var lines = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        if let bearer { lines.append("Authorization: Bearer \(bearer)") }
        if let basic { lines.append("Authorization: Basic " + Data("\(basic.user):\(basic.password)".utf8).base64EncodedString()) }
        return lines
    }
}

/// An S3-compatible service: AWS, MinIO, moto. Requests are signed with SigV4 by libcurl.
public struct S3Settings: Sendable, Hashable {
    /// `https://s3.eu-west-1.amazonaws.com`, `http://127.0.0.1:9000`.
    public var endpoint: String
    public var region: String
    public var accessKey: String
    public var secretKey: String
    public var sessionToken: String?
    /// `endpoint/bucket/key` rather than `bucket.endpoint/key` (MinIO and moto need it).
    public var pathStyle: Bool
    /// The store's bucket (for outputs), if the store is S3.
    public var bucket: String?
    /// Objects larger than this are uploaded in parts of `partSize` (at least 5 MiB, S3's minimum).
    public var multipartThreshold: Int
    public var partSize: Int

    public init(endpoint: String, region: String, accessKey: String, secretKey: String, sessionToken: String? = nil,
                pathStyle: Bool = true, bucket: String? = nil, multipartThreshold: Int = 16 << 20, partSize: Int = 8 << 20) {
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.region = region
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
        self.pathStyle = pathStyle
        self.bucket = bucket
        self.multipartThreshold = multipartThreshold
        self.partSize = max(5 << 20, partSize)
    }

    /// Credentials are left out, so settings can be logged.
    public var description: String { "S3 \(endpoint) (\(region))\(bucket.map { " bucket \($0)" } ?? "")" }

    /// S3's bucket names: 3 to 63 of lowercase letters, digits, dots and hyphens, starting and
    /// ending with a letter or digit. A bucket becomes part of a host name in virtual-hosted
    /// requests, so nothing else may pass.
    public static func isValidBucket(_ name: String) -> Bool {
        guard (3...63).contains(name.count), let first = name.first, let last = name.last,
              first.isASCII && (first.isLowercase || first.isNumber), last.isASCII && (last.isLowercase || last.isNumber) else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == ".") }
    }
}
