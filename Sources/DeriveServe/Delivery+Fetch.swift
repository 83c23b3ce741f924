import DeriveDigest
import DeriveJobs
import DeriveLanguage
import DeriveHTTP
import Foundation

extension CloudinaryService {
    /// `/<cloud>/image/fetch/[s--<sig>--/][<transformation>/]<remote URL>`: an image Derive never
    /// had uploaded, fetched through the fetcher and its address rules (a loopback, private or
    /// link-local address only as `DERIVE_FETCH_ALLOW` says; no `file:`, `s3:` or `data:`), only
    /// for a signed URL or a host on `DERIVE_SERVE_FETCH_DOMAINS`. The first request records the
    /// fetched image as an asset of its own (public id `fetch/<SHA-256 of the URL>`), so later
    /// ones read the store; from there it is delivered as an upload is (the transformation
    /// authorised before parsed, derivatives recorded and reused).
    func deliverFetch(_ request: HTTPRequest, path segments: [String]) async throws -> HTTPResponse {
        let fetch = try Self.parseFetch(segments)
        if let signature = fetch.signature {
            guard settings.credentials.values.contains(where: { CloudinarySigning.verifyURL(fetch.signed, signature: signature, secret: $0) }) else {
                throw ServeError(401, "Invalid signature")
            }
        }
        guard let components = URLComponents(string: fetch.url), let scheme = components.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = components.host else {
            throw ServeError(400, "Only http and https URLs are fetched")
        }
        guard fetch.signature != nil || Self.fetchAllowed(host: host, domains: settings.fetchDomains) else {
            throw ServeError(401, "Fetching from \(Quoted(host)) is not allowed: sign the URL, or list the host in DERIVE_SERVE_FETCH_DOMAINS")
        }
        let publicID = "fetch/" + SHA256.hex(fetch.url)
        let asset: ServedAsset
        if let recorded = try records.get(publicID) {
            asset = recorded
        } else {
            asset = try await fetchAndRecord(fetch.url, publicID: publicID, name: "the fetched image", context: ["fetched_from": String(fetch.url.prefix(1000))])
        }
        let path = DeliveryPath(signature: fetch.signature, transformation: fetch.transformation, version: nil, publicID: publicID, format: nil,
                                signed: fetch.signed)
        return try await deliver(request, path: path, asset: asset)
    }

    /// Fetches `url` through the fetcher (its address rules and limits) and records it as the
    /// original of `publicID`. Two first requests at once: the first recorded stands, and the
    /// other is answered with it.
    func fetchAndRecord(_ url: String, publicID: String, name: String, context: [String: String]) async throws -> ServedAsset {
        let fetched: FetchedSource
        do {
            fetched = try await Self.offPool { [fetcher] () throws(DeriveError) -> FetchedSource in try fetcher.fetch(url) }
        } catch {
            throw error.sourceMissing ? ServeError(404, "Resource not found: \(error.detail)") : Self.refusal(error)
        }
        let bytes = fetched.image.bytes
        guard let facts = ImageSniffer.facts(of: bytes) else { throw ServeError(400, "The fetched resource is not an image Derive reads") }
        let new = try await storeOriginal(bytes, facts: facts, publicID: publicID, name: name, tags: [], context: context).asset
        let recorded = try await Self.offPool { [database, new] () throws(DeriveError) -> RecordedUpload in
            try database.recordUpload(new, overwrite: false, eager: nil)
        }
        if !recorded.existing { try await keepOriginal(bytes, asset: recorded.asset) }
        return recorded.asset
    }
}
