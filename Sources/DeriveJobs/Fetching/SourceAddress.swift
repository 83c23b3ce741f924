import DeriveLanguage
import Foundation

/// Where a source (or an overlay) is, parsed once from the text a job, a chain or a command
/// line gives. Fetchers, overlay loaders and commands decide by its case, never by looking for
/// `://` in the string, so they cannot disagree about what a text names.
public enum SourceAddress: Sendable, Hashable {
    /// `http://…` or `https://…`, as written.
    case web(String)
    /// `s3://bucket/key`; the key percent-decoded.
    case s3(bucket: String, key: String)
    /// A `file://` URL on this machine (`file:///path` or `file://localhost/path`).
    case fileURL(path: String)
    /// A `data:` URI, as written.
    case data(String)
    /// Text with no scheme: a path (`/srv/in/a.jpg`, `photos/a.jpg`) or an overlay's name
    /// (`logo`, `brand/logo`). What it means is the consumer's to say.
    case path(String)

    /// Parses `text`; an unknown scheme, a malformed `s3://` or a `file://` URL naming another
    /// host is a `source_refused` error that says what Derive fetches.
    public init(_ text: String) throws(DeriveError) {
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            self = .web(text)
        } else if lower.hasPrefix("s3://") {
            let rest = text.dropFirst(5)
            guard let slash = rest.firstIndex(of: "/"), slash != rest.startIndex, rest.index(after: slash) != rest.endIndex else {
                throw DeriveError(.sourceRefused, "an S3 source is s3://bucket/key, got \(Quoted(Redacted.url(text)))")
            }
            let bucket = String(rest[..<slash]), rawKey = String(rest[rest.index(after: slash)...])
            guard S3Settings.isValidBucket(bucket) else {
                throw DeriveError(.sourceRefused, "\(Quoted(bucket)) in \(Quoted(Redacted.url(text))) is not an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)")
            }
            self = .s3(bucket: bucket, key: rawKey.removingPercentEncoding ?? rawKey)
        } else if lower.hasPrefix("file://") {
            guard let url = URL(string: text), url.isFileURL, url.host == nil || url.host == "" || url.host == "localhost" else {
                throw DeriveError(.sourceRefused, "\(Quoted(Redacted.url(text))) is not a local file URL")
            }
            self = .fileURL(path: url.path)
        } else if lower.hasPrefix("data:") {
            self = .data(text)
        } else if let schemeEnd = text.range(of: "://") {
            let scheme = String(text[..<schemeEnd.lowerBound])
            throw DeriveError(.sourceRefused, "unsupported source \(Quoted(Redacted.url(text))); Derive fetches http, https, s3, file (under DERIVE_FILE_ROOTS) and data URIs, not \(scheme)")
        } else {
            self = .path(text)
        }
    }

    /// A path from the root (`/…`), which a fetcher may read under its allowed folders.
    public var isAbsolutePath: Bool {
        if case .path(let path) = self { return path.hasPrefix("/") }
        return false
    }

    /// A file on this machine: a `file://` URL or an absolute path.
    public var localFile: String? {
        switch self {
        case .fileURL(let path): path
        case .path(let path) where path.hasPrefix("/"): path
        default: nil
        }
    }
}

/// The most bytes a source may have (`DERIVE_MAX_INPUT_BYTES`), enforced the same way whichever
/// way a source arrives: before reading when the size is known, while reading when it is not
/// (a file read never takes more than the limit and one byte, even if it grows meanwhile), with
/// one message.
public struct SourceSizeLimit: Sendable, Hashable {
    public var bytes: Int

    public init(_ bytes: Int) {
        self.bytes = bytes
    }

    /// The error for `what`, which is `size` bytes (nil: more than the limit, counted so far).
    public func refusal(of what: String, size: Int? = nil) -> DeriveError {
        let amount = size.map { "is \($0) bytes" } ?? "is larger than \(bytes) bytes"
        let limit = size == nil ? "" : "; the limit is \(bytes)"
        return DeriveError(.limitExceeded, "\(what) \(amount)\(limit) (DERIVE_MAX_INPUT_BYTES)")
    }

    public func check(_ size: Int, of what: String) throws(DeriveError) {
        if size > bytes { throw refusal(of: what, size: size) }
    }

    /// Reads a whole file within the limit.
    public func read(file path: String) throws(DeriveError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            let detail = "cannot read \(path)\(exists ? "" : ": no such file")"
            throw exists ? DeriveError(.sourceRefused, detail) : DeriveError.missing(detail)
        }
        defer { try? handle.close() }
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int { try check(size, of: path) }
        let data: Data?
        do {
            data = try handle.read(upToCount: bytes + 1)
        } catch {
            throw DeriveError(.sourceRefused, "cannot read \(path): \(error.localizedDescription)")
        }
        let contents = [UInt8](data ?? Data())
        if contents.count > bytes { throw refusal(of: path) }
        return contents
    }
}

extension SourceAddress {
    /// The host a source URL names, lower-cased (an S3 source's bucket); nil for paths, file
    /// URLs, data URIs and anything without `scheme://`. The same rule as PostgreSQL's
    /// `derive.source_host` (Migrations/0007), which the archive is indexed by: the text after
    /// `://` up to `/`, `?` or `#`, without a user part before `@` and a port after `:`
    /// (an IPv6 host keeps its brackets).
    public static func host(of source: String) -> String? {
        guard let separator = source.range(of: "://") else { return nil }
        let scheme = source[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) else { return nil }
        var authority = source[separator.upperBound...].prefix { !"/?#".contains($0) }
        if let at = authority.firstIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host: Substring
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[...close]
        } else {
            host = authority.prefix { $0 != ":" }
        }
        return host.isEmpty ? nil : host.lowercased()
    }
}
