import DeriveLanguage
import DeriveJobs
import Foundation

/// Fetches sources over libcurl: `http`/`https` (with the SSRF guard on every connection,
/// redirects followed and checked hop by hop, retries, the disk cache and merged concurrent
/// fetches), `s3://bucket/key` (SigV4), `file://` under configured roots, and `data:` URIs.
/// Whatever arrives must be an image Derive recognises by its bytes.
public final class CurlFetcher: SourceFetcher {
    public let settings: FetchSettings
    public let cache: DiskSourceCache?
    let client: HTTPClient
    let s3: S3Client?
    let merger = RequestMerger<FetchedSource>()

    public init(settings: FetchSettings, cache: DiskSourceCache? = nil) throws(DeriveError) {
        try CurlRuntime.start()
        self.settings = settings
        self.cache = cache
        self.client = HTTPClient()
        // S3 requests go to a configured endpoint without the address guard; on a pool of
        // their own, a source URL can never reuse one of their unchecked connections.
        self.s3 = settings.s3.map { S3Client(settings: $0, client: HTTPClient(), timeout: settings.totalTimeout) }
    }

    public func fetch(_ source: String) throws(DeriveError) -> FetchedSource {
        let location = try SourceAddress(source)
        switch location {
        case .web:
            return try merger.run(source) { () throws(DeriveError) -> FetchedSource in try fetchHTTP(source) }.value
        case .s3(let bucket, let key):
            return try fetchS3(source, bucket: bucket, key: key)
        case .data:
            let bytes = try DataURI.decode(source, maxBytes: settings.maxBytes)
            return try identified(bytes, location: "data: URI", origin: .data, transferred: 0)
        case .fileURL(let path):
            return try fetchFile(path)
        case .path(let path):
            if location.isAbsolutePath { return try fetchFile(path) }
            let scheme = source.split(separator: ":", maxSplits: 1).first.map(String.init) ?? source
            throw DeriveError(.sourceRefused, "unsupported source \(Quoted(Redacted.url(source))); Derive fetches http, https, s3, file (under DERIVE_FILE_ROOTS) and data URIs, not \(scheme)")
        }
    }

    /// An http(s) source is asked with `If-None-Match` / `If-Modified-Since` (bypassing the
    /// disk cache): a `304` costs one request and no transfer. Other sources are fetched.
    public func revalidate(_ source: String, etag: String?, lastModified: String?) throws(DeriveError) -> FetchedSource? {
        guard case .web = try SourceAddress(source), etag != nil || lastModified != nil else {
            return try fetch(source)
        }
        let (response, finalURL) = try requestWithRetries(source, extraHeaders: Self.conditional(etag: etag, lastModified: lastModified))
        if response.status == 304 { return nil }
        return try fetched(source, response: response, finalURL: finalURL)
    }

    static func conditional(etag: String?, lastModified: String?) -> [String] {
        (etag.map { ["If-None-Match: \($0)"] } ?? []) + (lastModified.map { ["If-Modified-Since: \($0)"] } ?? [])
    }

    /// A 200's body as a source, kept in the disk cache when its freshness allows.
    func fetched(_ url: String, response: HTTPResponse, finalURL: String) throws(DeriveError) -> FetchedSource {
        let freshness = Freshness(headers: response.headers)
        let source = try identified(response.body, location: url, origin: .network, transferred: response.body.count,
                                    finalLocation: finalURL, contentType: response.header("content-type"),
                                    etag: freshness.etag, lastModified: freshness.lastModified)
        cache?.store(url, body: response.body, freshness: freshness)
        return source
    }

    /// Only bytes that start like an image Derive decodes are accepted; the extension and
    /// `Content-Type` are not trusted.
    func identified(_ bytes: [UInt8], location: String, origin: FetchedSource.Origin, transferred: Int,
                    finalLocation: String? = nil, contentType: String? = nil, etag: String? = nil, lastModified: String? = nil) throws(DeriveError) -> FetchedSource {
        guard let format = ImageSniffer.format(of: Array(bytes.prefix(4096))) else {
            let claimed = contentType.map { " (the server called it \($0))" } ?? ""
            throw DeriveError(.unsupportedFormat, "\(Redacted.url(location)) is not an image Derive recognises by its content\(claimed): \(bytes.isEmpty ? "it is empty" : "it starts with \(Quoted(String(decoding: bytes.prefix(16), as: UTF8.self), limit: 16))")")
        }
        return FetchedSource(image: SourceImage(bytes: bytes, location: location), format: format,
                             finalLocation: finalLocation ?? location, etag: etag, lastModified: lastModified,
                             origin: origin, transferredBytes: transferred)
    }

    // MARK: - HTTP

    func fetchHTTP(_ url: String) throws(DeriveError) -> FetchedSource {
        let entry = cache?.entry(url)
        if let entry, entry.isFresh(), let body = cache?.body(entry) {
            return try identified(body, location: url, origin: .cache, transferred: 0, etag: entry.etag, lastModified: entry.lastModified)
        }
        let (response, finalURL) = try requestWithRetries(url, extraHeaders: Self.conditional(etag: entry?.etag, lastModified: entry?.lastModified))
        // A stale entry's body is read only once the origin says it is still good.
        if response.status == 304, let entry, let body = cache?.body(entry) {
            let freshness = Freshness(headers: response.headers)
            cache?.refresh(url, entry: entry, freshness: freshness)
            return try identified(body, location: url, origin: .revalidated, transferred: 0, finalLocation: finalURL,
                                  etag: freshness.etag ?? entry.etag, lastModified: freshness.lastModified ?? entry.lastModified)
        }
        return try fetched(url, response: response, finalURL: finalURL)
    }

    /// Retries connection failures, 5xx and 429 with jittered backoff, honouring a short
    /// `Retry-After`; a long one is handed to the queue. Other 4xx fail at once.
    func requestWithRetries(_ url: String, extraHeaders: [String]) throws(DeriveError) -> (HTTPResponse, String) {
        var attempt = 1
        while true {
            do throws(DeriveError) {
                let (response, finalURL) = try followRedirects(url, extraHeaders: extraHeaders)
                switch response.status {
                case 200, 304:
                    return (response, finalURL)
                case 429, 500...599:
                    let wait = response.header("retry-after").flatMap { RetryAfter.seconds($0) }
                    throw DeriveError(.sourceUnavailable, "\(Redacted.url(finalURL)) answered HTTP \(response.status)\(wait.map { " (Retry-After \(Int($0)) s)" } ?? "")",
                                      retryable: true, retryAfter: wait)
                case 404, 410:
                    throw DeriveError.missing("\(Redacted.url(finalURL)) answered HTTP \(response.status); not retried")
                default:
                    throw DeriveError(.sourceRefused, "\(Redacted.url(finalURL)) answered HTTP \(response.status); not retried")
                }
            } catch {
                guard error.isRetryable, (error.retryAfter ?? 0) <= settings.maxRetryAfter, attempt < settings.attempts else { throw error }
                Thread.sleep(forTimeInterval: error.retryAfter ?? settings.backoff.delay(attempt: attempt))
                attempt += 1
            }
        }
    }

    /// Follows redirects itself so that each hop's scheme, host and address are checked and
    /// credentials are only sent to the host they belong to.
    func followRedirects(_ url: String, extraHeaders: [String]) throws(DeriveError) -> (HTTPResponse, String) {
        var current = url
        var hops = 0
        while true {
            guard let components = URLComponents(string: current), let scheme = components.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty else {
                throw DeriveError(.sourceRefused, "\(Redacted.url(current)) is not an http or https URL\(hops > 0 ? " (redirected from \(Redacted.url(url)))" : "")")
            }
            // A literal address is refused before connecting, with the same rules the socket
            // guard applies to every address curl connects to.
            if let literal = IPAddress.parseHost(host), let reason = settings.addressPolicy.refusal(host: host, address: literal) {
                throw DeriveError(.sourceRefused, "refused \(Redacted.url(current)): \(reason)")
            }
            var headers = ["Accept: \(settings.acceptHeader)"] + extraHeaders
            // A host's credentials go with its requests, but not down a redirect to another
            // scheme or port of it (https to http would send them in clear), as curl does too.
            let original = URLComponents(string: url)
            if hops == 0 || (original?.scheme?.lowercased() == scheme && original?.port == components.port) {
                headers += settings.hosts[AddressPolicy.normalised(host)]?.headerLines ?? []
            }
            let request = HTTPRequest(url: current, headers: headers, maxResponseBytes: settings.maxBytes,
                                      connectTimeout: settings.connectTimeout, totalTimeout: settings.totalTimeout,
                                      stallTimeout: settings.stallTimeout, userAgent: settings.userAgent, policy: settings.addressPolicy)
            let response = try client.perform(request)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.header("location") else {
                return (response, current)
            }
            hops += 1
            guard hops <= settings.maxRedirects else {
                throw DeriveError(.sourceRefused, "\(Redacted.url(url)) redirected more than \(settings.maxRedirects) times (DERIVE_FETCH_MAX_REDIRECTS)")
            }
            guard let next = URL(string: location, relativeTo: URL(string: current))?.absoluteString else {
                throw DeriveError(.sourceRefused, "\(Redacted.url(current)) redirected to an invalid location")
            }
            current = next
        }
    }

    // MARK: - S3, files

    func fetchS3(_ source: String, bucket: String, key: String) throws(DeriveError) -> FetchedSource {
        guard let s3 else {
            throw DeriveError(.sourceRefused, "\(Redacted.url(source)): S3 sources need AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        guard settings.s3SourceBuckets.contains("*") || settings.s3SourceBuckets.contains(bucket) else {
            throw DeriveError(.sourceRefused, "bucket \(Quoted(bucket)) is not one sources may come from; allow it with DERIVE_S3_SOURCE_BUCKETS")
        }
        guard let bytes = try s3.get(bucket: bucket, key: key, maxBytes: settings.maxBytes) else {
            throw DeriveError.missing("\(source) does not exist")
        }
        return try identified(bytes, location: source, origin: .network, transferred: bytes.count)
    }

    /// A file on this machine (a `file://` URL's path or an absolute path), read only under
    /// the allowed folders.
    func fetchFile(_ path: String) throws(DeriveError) -> FetchedSource {
        // Symbolic links are resolved first, so a link inside a root cannot point outside it.
        let resolved = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath()
        let allowed = settings.fileRoots.contains { root in
            let rootPath = root.resolvingSymlinksInPath().path
            return resolved.path == rootPath || resolved.path.hasPrefix(rootPath.hasSuffix("/") ? rootPath : rootPath + "/")
        }
        guard allowed else {
            throw DeriveError(.sourceRefused, "\(path) is outside the folders file sources may come from (DERIVE_FILE_ROOTS)")
        }
        let image = try LocalFile.read(resolved, maxBytes: settings.maxBytes)
        return try identified(image.bytes, location: resolved.path, origin: .file, transferred: 0)
    }
}

/// Overlays named in chains, fetched like sources: URLs and `s3://` as they are, names
/// (`l_logo`) relative to a configured base (`https://cdn.example.com/overlays/`).
public struct FetchingOverlayLoader: OverlayLoader {
    public let fetcher: any SourceFetcher
    public let base: String?

    public init(fetcher: any SourceFetcher, base: String?) {
        self.fetcher = fetcher
        self.base = base
    }

    public func load(_ reference: String) throws(DeriveError) -> SourceImage {
        let location = try SourceAddress(reference)
        guard case .path = location, !location.isAbsolutePath else { return try fetcher.fetch(reference).image }
        guard let base else {
            throw DeriveError(.sourceRefused, "overlay \(Quoted(reference)) is a name, and no overlay location is configured (DERIVE_OVERLAY_BASE)")
        }
        guard !reference.split(separator: "/").contains("..") else {
            throw DeriveError(.sourceRefused, "overlay name \(Quoted(reference)) may not climb out of the overlay location")
        }
        return try fetcher.fetch(base.hasSuffix("/") ? base + reference : base + "/" + reference).image
    }
}
