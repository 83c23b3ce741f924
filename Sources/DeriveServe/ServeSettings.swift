import DeriveLanguage
import Foundation

/// What `derive serve` answers as: the cloud name in its URLs, the API keys and secrets that
/// sign, the upload presets, and its bounds.
public struct ServeSettings: Sendable {
    public var cloudName: String
    /// API key to secret (several pairs: a key can be rotated without a moment's refusal).
    public var credentials: [String: String]
    public var presets: [String: UploadPreset]
    /// The largest upload accepted, in bytes (a larger Content-Length is refused unread).
    public var maxUploadBytes: Int
    /// Seconds an upload without `eager_async`, or a signed URL's first request, waits for its job.
    public var wait: Double
    /// The queue the jobs go to.
    public var queue: String
    /// The delivery URLs' base (`https://img.example.com`); nil: the request's Host, over http.
    public var deliveryBase: String?
    /// Transformations an unsigned delivery URL may have derived, as written in the URL
    /// (`c_fill,w_200,h_200`, or a named preset `t_thumb`): Cloudinary's "allowed for strict
    /// transformations". Any other new transformation needs a signed URL.
    public var allowedTransformations: Set<String> = []
    /// Seconds a delivery's presigned redirect is valid (`DERIVE_SERVE_REDIRECT=presigned`):
    /// delivery answers 302 to a presigned GET of the object in the S3 store instead of
    /// streaming it through `derive serve`. Nil: streamed.
    public var presignedRedirectSeconds: Int?
    /// The formats the workers' `f_auto` chooses among (`DERIVE_AUTO_FORMATS`): delivery's
    /// `f_auto` chooses among those a browser accepts, and only a browser that accepts them all
    /// gets the workers' own `f_auto` output.
    public var autoFormats: [OutputFormat] = EngineSettings.defaultAutoFormats
    /// The hosts an unsigned `type=fetch` URL may fetch from (`DERIVE_SERVE_FETCH_DOMAINS`):
    /// `example.com` that host only, `.example.com` its subdomains too. A signed fetch URL may
    /// name any host; the fetcher's address rules apply to both.
    public var fetchDomains: Set<String> = []
    /// The bytes of delivery answers kept in memory (`DERIVE_SERVE_CACHE_BYTES`, 64 MiB; 0
    /// keeps none): see DeliveryCache.
    public var cacheBytes: Int = 64 << 20
    /// Admin API calls answered per clock hour (`DERIVE_SERVE_ADMIN_RATE_LIMIT`), counted per
    /// process and reported in Cloudinary's `X-FeatureRateLimit-*` headers; past it, 420.
    public var adminRateLimit = 5000

    public init(cloudName: String, credentials: [String: String], presets: [String: UploadPreset] = [:], maxUploadBytes: Int = 100 << 20,
                wait: Double = 60, queue: String = "default", deliveryBase: String? = nil) {
        self.cloudName = cloudName
        self.credentials = credentials
        self.presets = presets
        self.maxUploadBytes = maxUploadBytes
        self.wait = wait
        self.queue = queue
        self.deliveryBase = deliveryBase
    }

    /// `key:secret` pairs separated by commas or spaces (`DERIVE_API_KEY`/`DERIVE_API_SECRET`
    /// name one pair; `DERIVE_API_KEYS` more).
    public static func credentials(key: String?, secret: String?, pairs: String?) throws(ServeError) -> [String: String] {
        var result: [String: String] = [:]
        switch (key, secret) {
        case let (key?, secret?) where !key.isEmpty && !secret.isEmpty: result[key] = secret
        case (nil, nil): break
        default: throw ServeError(400, "DERIVE_API_KEY and DERIVE_API_SECRET go together")
        }
        for pair in (pairs ?? "").split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" }) {
            let parts = pair.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw ServeError(400, "DERIVE_API_KEYS holds key:secret pairs, got \(pair.count) characters without one") }
            result[String(parts[0])] = String(parts[1])
        }
        return result
    }
}

/// An upload preset: defaults for signed uploads, and for unsigned ones (only when `unsigned`)
/// the whole of what may be done, the client choosing only the public id, folder, tags and
/// context.
public struct UploadPreset: Sendable, Equatable, Codable {
    public var unsigned: Bool
    public var folder: String?
    public var tags: String?
    public var eager: String?
    public var eagerAsync: Bool?
    public var overwrite: Bool?
    public var uniqueFilename: Bool?
    public var useFilename: Bool?

    public init(unsigned: Bool = false, folder: String? = nil, tags: String? = nil, eager: String? = nil, eagerAsync: Bool? = nil,
                overwrite: Bool? = nil, uniqueFilename: Bool? = nil, useFilename: Bool? = nil) {
        self.unsigned = unsigned
        self.folder = folder
        self.tags = tags
        self.eager = eager
        self.eagerAsync = eagerAsync
        self.overwrite = overwrite
        self.uniqueFilename = uniqueFilename
        self.useFilename = useFilename
    }

    enum CodingKeys: String, CodingKey {
        case unsigned, folder, tags, eager, overwrite
        case eagerAsync = "eager_async", uniqueFilename = "unique_filename", useFilename = "use_filename"
    }

    /// Presets from a JSON object `{"name": {"unsigned": true, "eager": "c_fill,w_200,h_200", ...}}`.
    public static func parse(_ json: String) throws(ServeError) -> [String: UploadPreset] {
        do {
            return try JSONDecoder().decode([String: UploadPreset].self, from: Data(json.utf8))
        } catch {
            throw ServeError(400, "upload presets must be a JSON object of presets (unsigned, folder, tags, eager, eager_async, overwrite, unique_filename, use_filename): \(error)")
        }
    }
}

/// A refusal with Cloudinary's HTTP status and message (`{"error": {"message": ...}}`).
public struct ServeError: Error, CustomStringConvertible {
    public let status: Int
    public let message: String
    public init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }
    public var description: String { message }
}
