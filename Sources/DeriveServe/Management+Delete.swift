import DeriveJobs
import DeriveLanguage
import DeriveHTTP
import Foundation

/// Deleting assets: the Upload API's `destroy` (signed like uploads) and the Admin API's
/// `delete_resources` by public ids, by prefix, all of them, or by tag. An asset is forgotten
/// whole, in one transaction (`ServedAssetCatalog.deleteServedAssets`): from the moment it
/// answers, neither the asset nor any of its derivatives is listed or delivered. The store's
/// objects stay: originals and derivatives are content-addressed and may be shared by other
/// public ids, versions or jobs, and deleting one that a concurrent upload of the same bytes is
/// about to record would leave a row pointing at nothing. Reclaiming objects nothing references
/// is a sweep of its own (not built yet).
extension CloudinaryService {
    /// At most this many assets a `delete_resources` call deletes; past it the answer is
    /// `partial` with a `next_cursor` to send back (Cloudinary's shape for large deletions).
    static let deletionBatch = 500

    /// `POST /v1_1/<cloud>/image/destroy`: `{"result": "ok"}`, or `"not found"`.
    func destroy(_ request: HTTPRequest) async throws -> HTTPResponse {
        let fields = try await signedFields(request)
        guard let signature = fields["signature"], !signature.isEmpty else { throw ServeError(401, "Must supply api_key") }
        _ = try verifySigned(fields, signature: signature)
        if let type = fields["type"], !type.isEmpty { try Self.uploadTypeOnly(type) }
        guard let id = fields["public_id"], !id.isEmpty else { throw ServeError(400, "Missing required parameter - public_id") }
        let deleted = Self.validPublicID(id) ? try forget([id]) : []
        return Self.json(.object(["result": .string(deleted.isEmpty ? "not found" : "ok")]))
    }

    /// The Admin API's deletions (`DELETE`, a JSON body): `public_ids` (up to 100), `prefix`,
    /// `all`, or the tag in the path; `keep_original` and `transformations` (deleting only
    /// derivatives) are refused, not built.
    func deleteResources(_ request: HTTPRequest, tag: String?) async throws -> HTTPResponse {
        let body = try await Self.jsonBody(request)
        if body["keep_original"] == .bool(true) || body["keep_original"] == .string("true") {
            throw ServeError(400, "keep_original is not supported yet: Derive deletes an asset with its derivatives")
        }
        if let transformations = body["transformations"], transformations != .null, transformations != .string(""), transformations != .array([]) {
            throw ServeError(400, "Deleting derivatives by transformation is not supported yet")
        }
        var ids: [String]?
        switch body["public_ids"] {
        case nil, .null?: break
        case .array(let items)?:
            ids = try items.map { item in
                guard case .string(let id) = item else { throw ServeError(400, "public_ids must be strings") }
                return id
            }
        case .string(let text)?: ids = text.split(separator: ",").map(String.init)
        case let other?: throw ServeError(400, "public_ids must be a list, got \(other.typeDescription)")
        }
        if let ids {
            guard !ids.isEmpty, ids.count <= 100 else { throw ServeError(400, "public_ids must list 1 to 100 ids, got \(ids.count)") }
            let deleted = Set(try forget(ids.filter(Self.validPublicID)))
            return Self.deletionAnswer(ids.map { ($0, deleted.contains($0)) }, next: nil)
        }
        let filter: ServedAssetQuery.Filter
        var order = ServedAssetQuery.Order.createdAt
        if let tag {
            filter = .tag(tag)
        } else if case .string(let prefix)? = body["prefix"], !prefix.isEmpty {
            filter = .prefix(prefix)
            order = .publicID
        } else if body["all"] == .bool(true) || body["all"] == .string("true") {
            filter = .all
        } else {
            throw ServeError(400, "Missing required parameter - public_ids, prefix or all")
        }
        var cursor: String?
        if case .string(let text)? = body["next_cursor"] { cursor = text }
        let query = try Self.query(cloud: settings.cloudName, filter: filter, order: order, ascending: true, maxResults: String(Self.deletionBatch),
                                   defaultLimit: Self.deletionBatch, cursor: cursor)
        let page = try database.listServedAssets(query)
        let deleted = Set(try forget(page.assets.map(\.publicID)))
        return Self.deletionAnswer(page.assets.map { ($0.publicID, deleted.contains($0.publicID)) }, next: page.next)
    }

    /// Forgets the recorded assets of `ids` (and any record of theirs left in the store from
    /// before the rows, which would otherwise be migrated back on the next read); the ids found.
    func forget(_ ids: [String]) throws -> [String] {
        for id in ids { try store.delete(try records.legacyKey(id)) }
        return try database.deleteServedAssets(cloud: settings.cloudName, publicIDs: ids)
    }

    static func deletionAnswer(_ results: [(String, Bool)], next: ServedAssetCursor?) -> HTTPResponse {
        var members: [JSONMember] = [
            JSONMember(key: "deleted", value: .object(results.map { JSONMember(key: $0.0, value: .string($0.1 ? "deleted" : "not_found")) })),
            JSONMember(key: "partial", value: .bool(next != nil)),
        ]
        if let next { members.append(JSONMember(key: "next_cursor", value: .string(next.token))) }
        return json(.object(members))
    }
}
