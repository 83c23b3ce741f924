import DeriveLanguage
import Foundation

/// Where source images come from. The worker hands it the job's source; it returns the bytes,
/// checked to be an image Derive recognises, or a classified error.
public protocol SourceFetcher: Sendable {
    func fetch(_ source: String) throws(DeriveError) -> FetchedSource

    /// Asks the origin whether the source changed since it answered with these validators:
    /// nil when it says it has not (HTTP 304), otherwise the source as it is now.
    func revalidate(_ source: String, etag: String?, lastModified: String?) throws(DeriveError) -> FetchedSource?
}

extension SourceFetcher {
    /// Sources without validators (files, data, S3) are fetched again; their content hash
    /// tells whether they changed.
    public func revalidate(_ source: String, etag: String?, lastModified: String?) throws(DeriveError) -> FetchedSource? {
        try fetch(source)
    }
}

/// A fetched source: its bytes and what the origin said about them.
public struct FetchedSource: Sendable {
    public var image: SourceImage
    /// The format its bytes start like (never the extension or `Content-Type`).
    public var format: ImageFormat
    /// The URL after redirects, for http(s) sources.
    public var finalLocation: String
    public var etag: String?
    public var lastModified: String?
    /// How it was obtained: `network`, `cache` (fresh, no request), `revalidated` (304), `file`, `data`.
    public var origin: Origin
    /// Bytes transferred over the network for this fetch (0 from cache).
    public var transferredBytes: Int

    public enum Origin: String, Sendable {
        case network, cache, revalidated, file, data
    }

    public init(image: SourceImage, format: ImageFormat, finalLocation: String, etag: String? = nil, lastModified: String? = nil,
                origin: Origin, transferredBytes: Int) {
        self.image = image
        self.format = format
        self.finalLocation = finalLocation
        self.etag = etag
        self.lastModified = lastModified
        self.origin = origin
        self.transferredBytes = transferredBytes
    }
}

/// `data:[<mediatype>][;base64],<data>` (RFC 2397).
public enum DataURI {
    public static func decode(_ uri: String, maxBytes: Int) throws(DeriveError) -> [UInt8] {
        guard uri.lowercased().hasPrefix("data:"), let comma = uri.firstIndex(of: ",") else {
            throw DeriveError(.sourceRefused, "a data URI is data:[<type>][;base64],<data>")
        }
        let header = uri[uri.index(uri.startIndex, offsetBy: 5)..<comma].lowercased()
        let payload = uri[uri.index(after: comma)...]
        let bytes: [UInt8]?
        if header.hasSuffix(";base64") {
            // Tolerate URL-safe base64 and missing padding.
            var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                .filter { !$0.isWhitespace }
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            guard base64.count / 4 * 3 <= maxBytes + 3 else { throw SourceSizeLimit(maxBytes).refusal(of: "the data URI") }
            bytes = Data(base64Encoded: base64).map { [UInt8]($0) }
        } else {
            bytes = payload.removingPercentEncoding.map { Array($0.utf8) }
        }
        guard let bytes else { throw DeriveError(.sourceRefused, "the data URI's payload is not valid \(header.hasSuffix(";base64") ? "base64" : "percent-encoding")") }
        try SourceSizeLimit(maxBytes).check(bytes.count, of: "the data URI")
        return bytes
    }
}
