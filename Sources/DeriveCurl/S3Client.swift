import DeriveLanguage
import DeriveJobs
import DeriveDigest
import Foundation

/// The S3 requests Derive needs, signed with SigV4 by libcurl (`CURLOPT_AWS_SIGV4`): get, put
/// (in one request, or multipart in parts of a configured size), delete. Server errors (5xx)
/// and throttling are retried with jittered backoff.
final class S3Client: Sendable {
    let settings: S3Settings
    let client: HTTPClient
    let attempts: Int
    let backoff: Backoff
    let timeout: Double

    init(settings: S3Settings, client: HTTPClient, attempts: Int = 4, backoff: Backoff = Backoff(base: 0.2, factor: 2, maximum: 5),
         timeout: Double = 120) {
        self.settings = settings
        self.client = client
        self.attempts = attempts
        self.backoff = backoff
        self.timeout = timeout
    }

    /// Path segments percent-encoded so the URL and the signature agree on every byte.
    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? String($0) }.joined(separator: "/")
    }

    /// A query name or value percent-encoded as SigV4's canonical query string has it: `/`
    /// too (a listing's prefix carries them).
    static func encodeQueryComponent(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    func url(bucket: String, key: String, query: [(String, String)] = []) -> String {
        Self.url(settings: settings, bucket: bucket, key: key, query: query)
    }

    /// A request's URL, path style or virtual-host style as configured: what curl signs for
    /// requests and what `S3Presigner` signs for presigned URLs, so both sign the bytes sent.
    static func url(settings: S3Settings, bucket: String, key: String, query: [(String, String)] = []) -> String {
        var base: String
        if settings.pathStyle {
            base = "\(settings.endpoint)/\(Self.encode(bucket))/\(Self.encode(key))"
        } else if let components = URLComponents(string: settings.endpoint), let host = components.host, let scheme = components.scheme {
            let port = components.port.map { ":\($0)" } ?? ""
            base = "\(scheme)://\(bucket).\(host)\(port)/\(Self.encode(key))"
        } else {
            base = "\(settings.endpoint)/\(Self.encode(bucket))/\(Self.encode(key))"
        }
        guard !query.isEmpty else { return base }
        // Sorted and encoded as SigV4's canonical query string expects.
        return base + "?" + query.sorted { $0.0 < $1.0 }
            .map { "\(Self.encodeQueryComponent($0.0))=\(Self.encodeQueryComponent($0.1))" }.joined(separator: "&")
    }

    func request(_ method: String, bucket: String, key: String, query: [(String, String)] = [], headers: [String] = [],
                 body: [UInt8]? = nil, maxResponseBytes: Int = 16 << 20) throws(DeriveError) -> HTTPResponse {
        var lines = headers
        lines.append("x-amz-content-sha256: " + ContentHash.sha256(body ?? []))
        if let token = settings.sessionToken { lines.append("x-amz-security-token: \(token)") }
        let request = HTTPRequest(method: method, url: url(bucket: bucket, key: key, query: query), headers: lines, body: body,
                                  maxResponseBytes: maxResponseBytes, connectTimeout: 10, totalTimeout: timeout, stallTimeout: 30,
                                  userAgent: "Derive/0.1", policy: nil, credentials: "\(settings.accessKey):\(settings.secretKey)",
                                  awsSigV4: "aws:amz:\(settings.region):s3")
        var attempt = 1
        while true {
            do {
                let response = try client.perform(request)
                if (response.status >= 500 || response.status == 429) && attempt < attempts {
                    Thread.sleep(forTimeInterval: RetryAfter.seconds(response.header("retry-after") ?? "").map { min($0, backoff.maximum) }
                        ?? backoff.delay(attempt: attempt))
                    attempt += 1
                    continue
                }
                return response
            } catch {
                guard error.isRetryable, attempt < attempts else { throw error }
                Thread.sleep(forTimeInterval: backoff.delay(attempt: attempt))
                attempt += 1
            }
        }
    }

    /// What S3 said, for error messages: its error code and message, or the HTTP status.
    static func failure(_ response: HTTPResponse, _ action: String, _ location: String) -> DeriveError {
        let text = String(decoding: response.body.prefix(2000), as: UTF8.self)
        let code = XMLText.first("Code", in: text) ?? "HTTP \(response.status)"
        let message = XMLText.first("Message", in: text).map { ": \($0)" } ?? ""
        let retryable = response.status >= 500 || response.status == 429
        let kind: DeriveError.Code = action == "get" ? (retryable ? .sourceUnavailable : .sourceRefused) : .storageFailed
        return DeriveError(kind, "S3 \(action) \(location) failed with \(code)\(message)", retryable: retryable)
    }

    func get(bucket: String, key: String, maxBytes: Int) throws(DeriveError) -> [UInt8]? {
        let response = try request("GET", bucket: bucket, key: key, maxResponseBytes: maxBytes)
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw Self.failure(response, "get", "s3://\(bucket)/\(key)") }
        return response.body
    }

    func put(bucket: String, key: String, body: [UInt8], headers: [String]) throws(DeriveError) {
        let response = try request("PUT", bucket: bucket, key: key, headers: headers, body: body)
        guard response.status == 200 else { throw Self.failure(response, "put", "s3://\(bucket)/\(key)") }
    }

    func exists(bucket: String, key: String) throws(DeriveError) -> Bool {
        let response = try request("HEAD", bucket: bucket, key: key)
        if response.status == 404 { return false }
        guard response.status == 200 else { throw Self.failure(response, "head", "s3://\(bucket)/\(key)") }
        return true
    }

    func delete(bucket: String, key: String) throws(DeriveError) {
        let response = try request("DELETE", bucket: bucket, key: key)
        guard response.status == 204 || response.status == 200 || response.status == 404 else {
            throw Self.failure(response, "delete", "s3://\(bucket)/\(key)")
        }
    }

    /// A multipart upload begun and neither completed nor aborted, as ListMultipartUploads
    /// tells it.
    struct Upload: Sendable, Equatable {
        var key: String
        var id: String
        /// When it began, by the server's clock; nil when the server's time cannot be read.
        var initiated: Date?
    }

    /// One page of a ListMultipartUploadsResult: its uploads, and the markers of the next page
    /// when it is truncated.
    static func uploads(in document: String) -> (uploads: [Upload], next: (key: String, id: String)?) {
        let uploads = XMLText.all("Upload", in: document).compactMap { entry -> Upload? in
            guard let key = XMLText.first("Key", in: entry), let id = XMLText.first("UploadId", in: entry) else { return nil }
            return Upload(key: XMLText.unescape(key), id: XMLText.unescape(id), initiated: XMLText.first("Initiated", in: entry).flatMap(Self.date))
        }
        guard XMLText.first("IsTruncated", in: document) == "true",
              let key = XMLText.first("NextKeyMarker", in: document), let id = XMLText.first("NextUploadIdMarker", in: document) else {
            return (uploads, nil)
        }
        return (uploads, (XMLText.unescape(key), XMLText.unescape(id)))
    }

    /// An S3 timestamp: ISO 8601, with or without fractions of a second.
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }

    /// Every unfinished multipart upload of keys starting with `prefix`, page by page.
    ///
    /// The server is asked only for keys starting with the prefix's first segment, and the
    /// whole prefix is checked here: a `/` in a signed query value is where S3 servers
    /// disagree (AWS and MinIO sign it as `%2F`, as it is sent here, moto as `/`), while a
    /// store's prefix always ends in one. (Page markers can hold one too; moto never pages.)
    func multipartUploads(bucket: String, prefix: String) throws(DeriveError) -> [Upload] {
        let asked = String(prefix.prefix { $0 != "/" })
        var uploads: [Upload] = []
        var marker: (key: String, id: String)?
        while true {
            var query = [("uploads", "")]
            if !asked.isEmpty { query.append(("prefix", asked)) }
            if let marker { query += [("key-marker", marker.key), ("upload-id-marker", marker.id)] }
            let response = try request("GET", bucket: bucket, key: "", query: query)
            guard response.status == 200 else { throw Self.failure(response, "list multipart uploads in", "s3://\(bucket)/\(prefix)") }
            let page = Self.uploads(in: String(decoding: response.body, as: UTF8.self))
            uploads += page.uploads.filter { $0.key.hasPrefix(prefix) }
            // A server that repeats its marker would page forever.
            guard let next = page.next, next.key != marker?.key || next.id != marker?.id else { return uploads }
            marker = next
        }
    }

    /// Aborts an unfinished multipart upload, freeing its parts. False when there was no such
    /// upload (completed or aborted meanwhile).
    func abortMultipart(bucket: String, key: String, uploadID: String) throws(DeriveError) -> Bool {
        let response = try request("DELETE", bucket: bucket, key: key, query: [("uploadId", uploadID)])
        if response.status == 404 { return false }
        guard response.status == 204 || response.status == 200 else {
            throw Self.failure(response, "multipart abort", "s3://\(bucket)/\(key)")
        }
        return true
    }

    /// A multipart upload: the parts come from `part(n)` (1-based, nil after the last). On any
    /// failure the upload is aborted so no half object and no orphaned parts remain.
    func putMultipart(bucket: String, key: String, headers: [String], part: (Int) throws(DeriveError) -> [UInt8]?) throws(DeriveError) -> Int {
        let location = "s3://\(bucket)/\(key)"
        let created = try request("POST", bucket: bucket, key: key, query: [("uploads", "")], headers: headers)
        guard created.status == 200, let uploadID = XMLText.first("UploadId", in: String(decoding: created.body, as: UTF8.self)) else {
            throw Self.failure(created, "multipart start", location)
        }
        do throws(DeriveError) {
            var etags: [String] = []
            var total = 0
            var number = 1
            while let bytes = try part(number) {
                let response = try request("PUT", bucket: bucket, key: key,
                                           query: [("partNumber", String(number)), ("uploadId", uploadID)], body: bytes)
                guard response.status == 200, let etag = response.header("etag") else {
                    throw Self.failure(response, "multipart part \(number)", location)
                }
                etags.append(etag)
                total += bytes.count
                number += 1
            }
            let parts = etags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(XMLText.escape($0.element))</ETag></Part>" }
            let document = "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>"
            let completed = try request("POST", bucket: bucket, key: key, query: [("uploadId", uploadID)],
                                        headers: ["Content-Type: application/xml"], body: Array(document.utf8))
            // S3 can report a failed completion inside a 200 response.
            let text = String(decoding: completed.body, as: UTF8.self)
            guard completed.status == 200, !text.contains("<Error>") else { throw Self.failure(completed, "multipart completion", location) }
            return total
        } catch {
            _ = try? request("DELETE", bucket: bucket, key: key, query: [("uploadId", uploadID)])
            throw error
        }
    }
}

/// Just enough XML for S3's small responses.
enum XMLText {
    static func first(_ element: String, in text: String) -> String? {
        all(element, in: text).first
    }

    /// The contents of every `<element>…</element>`, in order (not nested in one another).
    static func all(_ element: String, in text: String) -> [String] {
        var found: [String] = []
        var rest = text.startIndex..<text.endIndex
        while let open = text.range(of: "<\(element)>", range: rest),
              let close = text.range(of: "</\(element)>", range: open.upperBound..<text.endIndex) {
            found.append(String(text[open.upperBound..<close.lowerBound]))
            rest = close.upperBound..<text.endIndex
        }
        return found
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// Outputs in an S3-compatible bucket, under an optional key prefix, with `Content-Type` and a
/// configurable `Cache-Control`. Objects above the multipart threshold are sent in parts.
public struct S3AssetStore: AssetStore {
    public let bucket: String
    public let prefix: String
    public let cacheControl: String?
    /// Prefix for object URLs (a CDN); without one, the endpoint URL.
    public let publicBaseURL: String?
    let client: S3Client

    public init(settings: S3Settings, bucket: String, prefix: String = "", cacheControl: String? = StoreSettings.defaultCacheControl,
                publicBaseURL: String? = nil) {
        self.bucket = bucket
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        self.cacheControl = cacheControl
        self.publicBaseURL = publicBaseURL
        self.client = S3Client(settings: settings, client: HTTPClient())
    }

    public var description: String { "s3://\(bucket)/\(prefix) at \(client.settings.endpoint)" }

    /// Without the endpoint: workers may reach one bucket through different addresses.
    public var identity: String { "s3://\(bucket)/\(prefix)" }

    func objectKey(_ key: StorageKey) -> String { prefix + key.value }

    public func sourceLocation(of key: StorageKey) -> String { "s3://\(bucket)/\(objectKey(key))" }

    func headers(_ contentType: String) -> [String] {
        ["Content-Type: \(contentType)"] + (cacheControl.map { ["Cache-Control: \($0)"] } ?? [])
    }

    func stored(_ key: StorageKey, bytes: Int) -> StoredObject {
        let url: String
        if let base = publicBaseURL {
            url = (base.hasSuffix("/") ? base : base + "/") + objectKey(key)
        } else {
            url = client.url(bucket: bucket, key: objectKey(key))
        }
        return StoredObject(key: key, url: url, bytes: bytes)
    }

    public func put(_ data: [UInt8], key: StorageKey, contentType: String) throws(DeriveError) -> StoredObject {
        let size = client.settings.partSize
        if data.count > client.settings.multipartThreshold {
            _ = try client.putMultipart(bucket: bucket, key: objectKey(key), headers: headers(contentType)) { number in
                let start = (number - 1) * size
                return start < data.count ? Array(data[start..<min(data.count, start + size)]) : nil
            }
        } else {
            try client.put(bucket: bucket, key: objectKey(key), body: data, headers: headers(contentType))
        }
        return stored(key, bytes: data.count)
    }

    public func put(file: URL, key: StorageKey, contentType: String) throws(DeriveError) -> StoredObject {
        guard let input = FileHandle(forReadingAtPath: file.path) else { throw DeriveError(.sourceRefused, "cannot read \(file.path)") }
        defer { try? input.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        if size <= client.settings.multipartThreshold {
            let data: [UInt8]
            do { data = [UInt8](try input.readToEnd() ?? Data()) } catch {
                throw DeriveError(.storageFailed, "cannot read \(file.lastPathComponent) to upload it: \(error.localizedDescription)")
            }
            try client.put(bucket: bucket, key: objectKey(key), body: data, headers: headers(contentType))
            return stored(key, bytes: data.count)
        }
        let partSize = client.settings.partSize
        let total = try client.putMultipart(bucket: bucket, key: objectKey(key), headers: headers(contentType)) { _ throws(DeriveError) in
            // The throwing read: Foundation's readData(ofLength:) traps on an I/O error.
            let chunk: Data?
            do { chunk = try input.read(upToCount: partSize) } catch {
                throw DeriveError(.storageFailed, "cannot read \(file.lastPathComponent) to upload it: \(error.localizedDescription)")
            }
            guard let chunk, !chunk.isEmpty else { return nil }
            return [UInt8](chunk)
        }
        return stored(key, bytes: total)
    }

    /// A presigned GET of the object at the endpoint (never `publicBaseURL`: a CDN in front
    /// would not pass the signature on), valid for `seconds` capped at 7 days; nil below 1.
    public func temporaryURL(for key: StorageKey, expiresIn seconds: Int) -> String? {
        temporaryURL(for: key, expiresIn: seconds, now: Date())
    }

    /// Signed as at `now`: tests sign in the past to get URLs that have expired.
    func temporaryURL(for key: StorageKey, expiresIn seconds: Int, now: Date) -> String? {
        guard seconds >= 1 else { return nil }
        return S3Presigner.presignedGET(settings: client.settings, bucket: bucket, key: objectKey(key), now: now,
                                        expires: min(seconds, S3Presigner.maximumExpiry))
    }

    public var temporaryURLOrigin: String? { S3Presigner.origin(settings: client.settings, bucket: bucket) }

    public func get(_ key: StorageKey) throws(DeriveError) -> [UInt8]? {
        do {
            return try client.get(bucket: bucket, key: objectKey(key), maxBytes: 1 << 30)
        } catch {
            // The same request as a source's, but here the store is at fault.
            throw DeriveError(.storageFailed, error.detail, retryable: error.isRetryable, retryAfter: error.retryAfter)
        }
    }

    public func exists(_ key: StorageKey) throws(DeriveError) -> Bool {
        try client.exists(bucket: bucket, key: objectKey(key))
    }

    public func delete(_ key: StorageKey) throws(DeriveError) {
        try client.delete(bucket: bucket, key: objectKey(key))
    }

    /// Aborts the multipart uploads under the store's prefix that began before `cutoff` (by
    /// the server's clock): a writer killed mid-upload leaves one, whose parts are kept, and
    /// billed, until it is aborted. Uploads elsewhere in the bucket are not looked at.
    public func removeAbandonedWrites(olderThan cutoff: Date) throws(DeriveError) -> AbandonedWriteSweep {
        var sweep = AbandonedWriteSweep()
        for upload in try client.multipartUploads(bucket: bucket, prefix: prefix) {
            guard let initiated = upload.initiated, initiated < cutoff else { continue }
            do {
                if try client.abortMultipart(bucket: bucket, key: upload.key, uploadID: upload.id) {
                    sweep.removed.append("\(upload.key) (upload \(upload.id))")
                }
            } catch {
                sweep.failures.append("\(upload.key) (upload \(upload.id)): \(error.detail)")
            }
        }
        return sweep
    }
}
