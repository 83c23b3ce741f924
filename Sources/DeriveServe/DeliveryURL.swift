import DeriveJobs
import DeriveLanguage
import Foundation

extension CloudinaryService {
    /// A delivery URL's parts after its route (`/<cloud>/image/upload/`, `/<cloud>/iu/`, the
    /// SEO form `/<cloud>/images/`, the root path `/<cloud>/`).
    public struct DeliveryPath: Equatable, Sendable {
        public var signature: String?
        public var transformation: String
        public var version: Int?
        public var publicID: String
        public var format: String?
        /// What the signature covers: `<transformation>/<public_id>.<ext>` as written in the URL
        /// (without the version, and without an SEO suffix).
        public var signed: String
        /// Other readings of the same URL, tried in order when this one names no asset: a
        /// versionless URL whose leading segments read as a transformation may instead name
        /// folders (`w_300/photo.jpg` is the transformation `w_300` or the id `w_300/photo`).
        public var otherReadings: [DeliveryPath] = []

        /// Every reading, this one first.
        public var readings: [DeliveryPath] { [self] + otherReadings }
    }

    /// Which route a delivery URL came by (the pinned Python SDK's `cloudinary_url` writes each).
    public enum DeliveryRoute: Equatable, Sendable {
        /// `/<cloud>/image/upload/...`, `/<cloud>/iu/...` (`shorten`), `/<cloud>/...`
        /// (`use_root_path`), `/image/upload/...` (`private_cdn`: no cloud name in the path).
        case upload
        /// `/<cloud>/images/.../<public_id>/<suffix>.<ext>` (`url_suffix`, the SEO form).
        case suffixed
        /// `/<cloud>/image/fetch/[s--<sig>--/][<transformation>/]<remote URL>` (`type="fetch"`).
        case fetch
    }

    /// Every parameter prefix of Cloudinary's transformation reference: a URL segment is read
    /// as a transformation when each of its comma-separated parts starts with one and `_` (or is
    /// a `$variable`). The language's own list (`CloudinaryVocabulary.cloudinaryParameters`);
    /// `DeliveryURLTests` holds the two equal.
    public static let transformationKeys: Set<String> = [
        "a", "ac", "af", "ar", "b", "bl", "bo", "br", "c", "co", "cs", "d", "dl", "dn", "dpr", "du", "e", "eo",
        "f", "fl", "fn", "fps", "g", "h", "if", "ki", "l", "o", "p", "pg", "q", "r", "so", "sp", "t", "u", "vc",
        "vs", "w", "x", "y", "z",
    ]

    /// Whether a URL segment reads as a transformation component (`c_fill,w_300`, `t_thumb`,
    /// `$w_100`) rather than a folder name; the language is not asked (authorised before parsed).
    public static func looksLikeTransformation(_ segment: String) -> Bool {
        let parts = segment.split(separator: ",", omittingEmptySubsequences: false)
        return !parts.isEmpty && parts.allSatisfy { part in
            guard let underscore = part.firstIndex(of: "_"), underscore != part.startIndex else { return false }
            let key = part[..<underscore]
            return key.first == "$" || transformationKeys.contains(String(key))
        }
    }

    /// The delivery route of a request path's segments and the segments after it, nil when the
    /// path is no delivery URL. The forms the pinned Python SDK writes for an image:
    /// `/<cloud>/image/upload/...`, `/<cloud>/iu/...` (`shorten`), `/<cloud>/images/...`
    /// (`url_suffix`), `/<cloud>/...` (`use_root_path`), and each without the cloud name
    /// (`private_cdn`, where the host names the cloud). Other types and resource types are
    /// refused with the reason.
    func deliveryRoute(_ segments: [String]) throws -> (DeliveryRoute, [String])? {
        var rest = segments[...]
        if rest.first == settings.cloudName {
            rest = rest.dropFirst()
        } else if !["image", "images", "iu"].contains(rest.first ?? "") || segments.first == "v1_1" {
            return nil
        }
        guard let first = rest.first, !first.isEmpty else { return nil }
        switch first {
        case "image":
            guard rest.count >= 3 else { throw ServeError(404, "Resource not found") }
            let type = rest[rest.startIndex + 1]
            if type == "fetch" { return (.fetch, Array(rest.dropFirst(2))) }
            guard type == "upload" else {
                throw ServeError(404, "Derive delivers uploaded images (/image/upload/); type \(Quoted(String(type.prefix(40)))) is not served")
            }
            return (.upload, Array(rest.dropFirst(2)))
        case "images":
            return (.suffixed, Array(rest.dropFirst()))
        case "iu":
            return (.upload, Array(rest.dropFirst()))
        case "video", "videos", "raw", "files":
            throw ServeError(404, "Derive delivers images only; \(first) is not served")
        default:
            // use_root_path: the transformation and public id right after the cloud name.
            return (.upload, Array(rest))
        }
    }

    /// A `type=fetch` URL's parts: `[s--<sig>--/][<transformation>/...]<http(s) URL>`, the URL as
    /// the SDK writes it (its unsafe characters percent-encoded, `?` included), decoded.
    public struct FetchPath: Equatable, Sendable {
        public var signature: String?
        public var transformation: String
        public var url: String
        /// What the signature covers: `<transformation>/<URL as written>`.
        public var signed: String
    }

    public static func parseFetch(_ segments: [String]) throws -> FetchPath {
        var rest = segments[...]
        var signature: String?
        if let first = rest.first, first.hasPrefix("s--"), first.hasSuffix("--"), first.count >= 6 {
            signature = String(first.dropFirst(3).dropLast(2))
            rest = rest.dropFirst()
        }
        guard let start = rest.firstIndex(where: { ["http:", "https:"].contains($0.lowercased()) }) else {
            throw ServeError(400, "A fetch URL ends in the http(s) URL of the image to fetch")
        }
        let transformation = rest[..<start]
        guard transformation.allSatisfy(looksLikeTransformation) else {
            throw ServeError(400, "A fetch URL is [<transformation>/]<http(s) URL>; \(Quoted(transformation.joined(separator: "/"), limit: 100)) is no transformation")
        }
        let written = rest[start...].joined(separator: "/")
        guard written.utf8.count <= 2048, let url = written.removingPercentEncoding, let components = URLComponents(string: url),
              let host = components.host, !host.isEmpty else {
            throw ServeError(400, "The fetch URL is not an http(s) URL of at most 2048 characters")
        }
        let text = transformation.joined(separator: "/")
        return FetchPath(signature: signature, transformation: text, url: url, signed: text.isEmpty ? written : text + "/" + written)
    }

    /// Whether an unsigned fetch may name `host`: listed, or under a listed `.domain`.
    static func fetchAllowed(host: String, domains: Set<String>) -> Bool {
        let host = host.lowercased()
        return domains.contains(host) || domains.contains { $0.hasPrefix(".") && (host.hasSuffix($0) || "." + host == $0) }
    }

    static func isVersion(_ segment: String) -> Bool {
        segment.count > 1 && segment.count < 12 && segment.hasPrefix("v") && segment.dropFirst().allSatisfy(\.isASCIIDigit)
    }

    /// `[s--<sig>--/][<transformation>/...][v<version>/]<public_id>[.<ext>]` (and for the SEO
    /// route `.../<public_id>/<suffix>[.<ext>]`). With a version, everything between the
    /// signature and it is the transformation and everything after it the public id (the SDKs
    /// add `v1` to ids with folders). Without one, the leading segments that read as
    /// transformation components are the transformation and the rest the public id; the other
    /// readings (fewer of them a transformation, more of them folders) follow in
    /// `otherReadings`, so a folder named like a transformation is still found.
    public static func parseDelivery(_ segments: [String], route: DeliveryRoute = .upload) throws -> DeliveryPath {
        var rest = segments
        guard !rest.isEmpty, !rest.contains(where: \.isEmpty) else { throw ServeError(404, "Resource not found") }
        var signature: String?
        if let first = rest.first, first.hasPrefix("s--"), first.hasSuffix("--"), first.count >= 6 {
            signature = String(first.dropFirst(3).dropLast(2))
            rest.removeFirst()
        }
        // The SEO form: the last segment is only a name for search engines, with the extension.
        var suffixFormat: String?
        if route == .suffixed {
            guard rest.count >= 2, let suffix = rest.popLast() else {
                throw ServeError(404, "An SEO URL (/images/) ends in <public_id>/<suffix>.<ext>")
            }
            if let dot = suffix.lastIndex(of: "."), dot != suffix.startIndex {
                suffixFormat = String(suffix[suffix.index(after: dot)...])
            }
        }
        guard !rest.isEmpty else { throw ServeError(404, "Resource not found") }
        func reading(_ transformationSegments: ArraySlice<String>, _ idSegments: ArraySlice<String>, version: Int?) -> DeliveryPath {
            var source = idSegments.joined(separator: "/")
            var format: String?
            if let suffixFormat {
                format = suffixFormat
            } else if let last = idSegments.last, let dot = last.lastIndex(of: "."), dot != last.startIndex {
                format = String(last[last.index(after: dot)...])
                source = String(source.dropLast(format!.count + 1))
            }
            let signedSource = source + (format.map { "." + $0 } ?? "")
            let transformation = transformationSegments.joined(separator: "/")
            return DeliveryPath(signature: signature, transformation: transformation, version: version,
                                publicID: source.removingPercentEncoding ?? source, format: format,
                                signed: transformation.isEmpty ? signedSource : transformation + "/" + signedSource)
        }
        var readings: [DeliveryPath] = []
        if let index = rest.firstIndex(where: isVersion), index < rest.count - 1 {
            readings.append(reading(rest[..<index], rest[(index + 1)...], version: Int(rest[index].dropFirst())))
            // A folder named like a version (`v2/photo.jpg`) is the other reading.
            readings.append(reading(rest[..<index], rest[index...], version: nil))
        } else {
            let leading = rest.dropLast().prefix(while: looksLikeTransformation).count
            for split in stride(from: leading, through: 0, by: -1) {
                readings.append(reading(rest[..<split], rest[split...], version: nil))
            }
        }
        var first = readings.removeFirst()
        first.otherReadings = readings
        return first
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
