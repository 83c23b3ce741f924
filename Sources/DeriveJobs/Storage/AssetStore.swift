import DeriveLanguage
import Foundation

/// Where derived outputs (and uploaded originals) are written.
public protocol AssetStore: Sendable {
    /// Writes the object atomically: a reader sees the old object or the whole new one.
    func put(_ data: [UInt8], key: StorageKey, contentType: String) throws(DeriveError) -> StoredObject
    /// Writes a file's contents without reading it all into memory (large originals).
    func put(file: URL, key: StorageKey, contentType: String) throws(DeriveError) -> StoredObject
    /// The object's bytes, or nil when there is none.
    func get(_ key: StorageKey) throws(DeriveError) -> [UInt8]?
    /// Whether the object is there, without reading it: a worker checks before it reuses what
    /// an earlier run recorded.
    func exists(_ key: StorageKey) throws(DeriveError) -> Bool
    func delete(_ key: StorageKey) throws(DeriveError)
    /// A source location the fetcher reads the object back from (`file:///…`, `s3://bucket/…`):
    /// what a job names after `derive submit` or `derive upload` stored its original.
    func sourceLocation(of key: StorageKey) -> String
    /// Removes what writes interrupted by a kill left behind and begun before `cutoff` (a
    /// folder store's temporary files, an S3 store's unfinished multipart uploads); see
    /// `AbandonedWrites`. Throws only when the store cannot be looked through at all.
    func removeAbandonedWrites(olderThan cutoff: Date) throws(DeriveError) -> AbandonedWriteSweep
    /// A short-lived URL a browser can fetch the object from without credentials (a presigned
    /// S3 GET), valid for `seconds` (at most 7 days, SigV4's limit: longer is capped); nil when
    /// `seconds` < 1, or when the store has no such URLs: a folder store's bytes are served by
    /// whoever reads them (the dashboard serves them itself). Nothing is checked on the server:
    /// the URL of a missing object is refused when fetched.
    func temporaryURL(for key: StorageKey, expiresIn seconds: Int) -> String?
    /// The origin (`scheme://host[:port]`) every `temporaryURL` points at, for a
    /// Content-Security-Policy to allow exactly that (`img-src`); nil when there are none.
    var temporaryURLOrigin: String? { get }
    /// A description for logs and reports; never carries credentials.
    var description: String { get }
    /// The same store whichever way a worker reaches it (`s3://bucket/prefix/`, `folder
    /// /path`): the write ledger's notes are kept, and swept, per store.
    var identity: String { get }
}

extension AssetStore {
    public var identity: String { description }
    public func temporaryURL(for key: StorageKey, expiresIn seconds: Int) -> String? { nil }
    public var temporaryURLOrigin: String? { nil }
}

public struct StoredObject: Sendable, Hashable {
    public var key: StorageKey
    /// Where the object can be fetched: the configured public URL, or the store's own address.
    public var url: String
    public var bytes: Int

    public init(key: StorageKey, url: String, bytes: Int) {
        self.key = key
        self.url = url
        self.bytes = bytes
    }
}

/// A relative object key that cannot escape its store: segments of letters, digits and
/// `. _ -` (the characters every S3 implementation signs and serves alike), no empty, `.` or
/// `..` segment, no leading slash, at most 1024 bytes.
public struct StorageKey: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    public init(_ value: String) throws(DeriveError) {
        guard !value.isEmpty, value.utf8.count <= 1024 else {
            throw DeriveError(.invalidJob, "storage key must be 1 to 1024 bytes, got \(value.utf8.count)")
        }
        for segment in value.split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty, segment != ".", segment != "..",
                  segment.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
                throw DeriveError(.invalidJob, "storage key \(Quoted(value)) has an unsafe segment \(Quoted(String(segment))); keys are /-separated segments of A-Z a-z 0-9 . _ -")
            }
        }
        self.value = value
    }

    public var description: String { value }
}

/// Output keys from a template with safe placeholders, so identical work maps to the identical
/// key. The default, `{source_hash}/{name}{variant}-{identity_short}.{ext}`, combines the
/// source's content hash, the output name and its canonical chain hash.
public struct KeyTemplate: Sendable, Hashable {
    public static let placeholders = ["source_hash", "source_hash_short", "name", "identity", "identity_short",
                                      "variant", "width", "height", "ext", "format"]
    public static let `default` = KeyTemplate(checked: "{source_hash}/{name}{variant}-{identity_short}.{ext}")

    public let text: String

    private init(checked text: String) {
        self.text = text
    }

    public init(_ text: String) throws(ValidationError) {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw ValidationError(location: "DERIVE_KEY_TEMPLATE", reason: "unclosed { in \(Quoted(text))")
            }
            let name = String(rest[rest.index(after: open)..<close])
            guard Self.placeholders.contains(name) else {
                throw ValidationError(location: "DERIVE_KEY_TEMPLATE", reason: "unknown placeholder {\(name)}\(Suggest.hint(for: name, among: Self.placeholders)); known: \(Self.placeholders.map { "{\($0)}" }.joined(separator: ", "))")
            }
            rest = rest[rest.index(after: close)...]
        }
        guard text.contains("{identity") && text.contains("{source_hash") else {
            throw ValidationError(location: "DERIVE_KEY_TEMPLATE", reason: "must contain {source_hash...} and {identity...}, or different work could share a key")
        }
        self.text = text
    }

    public struct Values: Sendable {
        public var sourceHash: String
        public var name: String
        public var identity: String
        public var breakpointWidth: Int?
        public var width: Int
        public var height: Int
        public var format: OutputFormat

        public init(sourceHash: String, name: String, identity: String, breakpointWidth: Int?, width: Int, height: Int, format: OutputFormat) {
            self.sourceHash = sourceHash
            self.name = name
            self.identity = identity
            self.breakpointWidth = breakpointWidth
            self.width = width
            self.height = height
            self.format = format
        }
    }

    public func key(_ v: Values) throws(DeriveError) -> StorageKey {
        var key = text
        let replacements: [String: String] = [
            "source_hash": v.sourceHash, "source_hash_short": String(v.sourceHash.prefix(16)), "name": v.name,
            "identity": v.identity, "identity_short": String(v.identity.prefix(16)),
            "variant": v.breakpointWidth.map { "-\($0)w" } ?? "", "width": String(v.width), "height": String(v.height),
            "ext": v.format.fileExtension, "format": v.format.rawValue,
        ]
        for (name, value) in replacements { key = key.replacingOccurrences(of: "{\(name)}", with: value) }
        return try StorageKey(key)
    }
}

/// MIME types of the output formats.
extension OutputFormat {
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .avif: "image/avif"
        case .gif: "image/gif"
        case .jxl: "image/jxl"
        case .tiff: "image/tiff"
        case .jp2: "image/jp2"
        case .jpc: "image/x-jp2-codestream"
        case .bmp: "image/bmp"
        case .ico: "image/vnd.microsoft.icon"
        case .heic: "image/heic"
        case .svg: "image/svg+xml"
        case .pdf, .ai: "application/pdf"
        case .auto, .original: "application/octet-stream"
        }
    }
}

extension ImageFormat {
    public var mediaType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .gif: "image/gif"
        case .avif: "image/avif"
        case .heif: "image/heic"
        case .jxl: "image/jxl"
        case .tiff: "image/tiff"
        case .svg: "image/svg+xml"
        case .pdf: "application/pdf"
        case .bmp: "image/bmp"
        case .jp2: "image/jp2"
        case .pnm: "image/x-portable-anymap"
        case .hdr: "image/vnd.radiance"
        case .exr: "image/x-exr"
        case .svgz: "image/svg+xml"
        case .ico: "image/vnd.microsoft.icon"
        case .tga: "image/x-tga"
        case .psd: "image/vnd.adobe.photoshop"
        }
    }
}
