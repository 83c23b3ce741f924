import DeriveJobs
import DeriveLanguage
import DeriveHTTP
import Foundation

/// Deleting: the Upload API's `destroy` (signed like uploads), the Admin API's
/// `delete_resources` by public ids, by prefix, all of them, or by tag (whole assets, or only
/// their derivatives with `keep_original` or `transformations`, as `delete_derived_by_transformation`
/// sends them), and `delete_derived_resources` by derived ids. What goes is forgotten in one
/// transaction (`ServedAssetCatalog.deleteServedAssets`): from the answer on it is neither listed
/// nor delivered. Then each object the forgotten rows named leaves the store once nothing names
/// it any more (`releaseServedObject`): originals and derivatives are content-addressed and may
/// be shared by other public ids or jobs, which keep theirs. An object that cannot be deleted
/// now is logged and left noted for `derive prune` (the answer is the rows' deletion's).
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
        let deletion = Self.validPublicID(id) ? try await forget([id], scope: .whole) : ServedDeletion()
        return Self.json(.object(["result": .string(deletion.found.isEmpty ? "not found" : "ok")]))
    }

    /// The Admin API's deletions (`DELETE`, a JSON body): `public_ids` (up to 100), `prefix`,
    /// `all`, or the tag in the path; `keep_original` deletes only the derivatives,
    /// `transformations` (`|`-separated, each optionally `/<extension>`) only those derivatives.
    func deleteResources(_ request: HTTPRequest, tag: String?) async throws -> HTTPResponse {
        let body = try await Self.jsonBody(request)
        let scope = try Self.deletionScope(body)
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
            let deletion = try await forget(ids.filter(Self.validPublicID), scope: scope)
            return Self.deletionAnswer(ids, deletion, scope: scope, next: nil)
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
        let listed = page.assets.map(\.publicID)
        let deletion = try await forget(listed, scope: scope)
        return Self.deletionAnswer(listed, deletion, scope: scope, next: page.next)
    }

    /// What a deletion's body asks to forget: the whole asset, unless `keep_original` is true
    /// (every derivative) or `transformations` names some (those derivatives only, in whatever
    /// format when no extension is given).
    static func deletionScope(_ body: JSONValue) throws -> ServedDeletionScope {
        var transformations: [String] = []
        switch body["transformations"] {
        case nil, .null?: break
        case .string(let text)?: transformations = text.isEmpty ? [] : [text]
        case .array(let items)?:
            transformations = try items.map { item in
                guard case .string(let text) = item else { throw ServeError(400, "transformations must be strings") }
                return text
            }
        case let other?: throw ServeError(400, "transformations must be a string, got \(other.typeDescription)")
        }
        let joined = transformations.joined(separator: "|")
        if !joined.isEmpty {
            // Without an extension a transformation names its derivative in any format: its
            // identity is computed for each format an output can have.
            var identities: Set<String> = []
            for format in ImageFormat.allCases {
                guard let outputs = try? eagerOutputs(joined, originalFormat: format) else { continue }
                identities.formUnion(outputs.map(\.identity))
            }
            // A transformation no format makes is refused with the language's reason.
            if identities.isEmpty { _ = try eagerOutputs(joined, originalFormat: .jpeg) }
            return .derivatives(identities: identities)
        }
        switch body["keep_original"] {
        case .bool(true)?, .string("true")?, .string("1")?: return .derivatives(identities: nil)
        case .number(let number)? where number.intValue == 1: return .derivatives(identities: nil)
        default: return .whole
        }
    }

    /// `DELETE /v1_1/<cloud>/derived_resources` (`delete_derived_resources`): derivatives by
    /// the ids `resource` gives them (`derived[].id`).
    func deleteDerivedResources(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try await Self.jsonBody(request)
        var ids: [String] = []
        switch body["derived_resource_ids"] {
        case .array(let items)?:
            ids = try items.map { item in
                guard case .string(let id) = item else { throw ServeError(400, "derived_resource_ids must be strings") }
                return id
            }
        case .string(let text)?: ids = text.split(separator: ",").map(String.init)
        default: throw ServeError(400, "Missing required parameter - derived_resource_ids")
        }
        guard !ids.isEmpty, ids.count <= 100 else { throw ServeError(400, "derived_resource_ids must list 1 to 100 ids, got \(ids.count)") }
        // Grouped by asset: one deletion each, of the identities its ids name.
        var wanted: [String: [(id: String, prefix: String)]] = [:]
        for id in ids {
            guard let (publicID, prefix) = Self.derivedID(id) else { continue }
            wanted[publicID, default: []].append((id, prefix))
        }
        var deleted: Set<String> = []
        for (publicID, items) in wanted.sorted(by: { $0.key < $1.key }) {
            guard let asset = try await Self.offPool({ [database, settings] () throws(DeriveError) in
                try database.servedAsset(cloud: settings.cloudName, publicID: publicID)
            }) else { continue }
            var identities: Set<String> = []
            for item in items {
                let matching = asset.derivatives.keys.filter { $0.hasPrefix(item.prefix) }
                if !matching.isEmpty { deleted.insert(item.id) }
                identities.formUnion(matching)
            }
            if !identities.isEmpty { _ = try await forget([publicID], scope: .derivatives(identities: identities)) }
        }
        return Self.json(.object(["deleted": .object(ids.map { JSONMember(key: $0, value: .string(deleted.contains($0) ? "deleted" : "not_found")) })]))
    }

    /// A derivative's id in the Admin API: the first 32 characters of its identity, then its
    /// asset's public id in hex, so the id alone finds it (Cloudinary's ids are opaque).
    static func derivedID(publicID: String, identity: String) -> String {
        String(identity.prefix(32)) + publicID.utf8.map { String(format: "%02x", $0) }.joined()
    }

    /// The public id and identity prefix a derived id names; nil for one Derive did not write.
    static func derivedID(_ id: String) -> (publicID: String, identityPrefix: String)? {
        let characters = Array(id.utf8)
        guard characters.count > 32, characters.count % 2 == 0, characters.count <= 32 + 2 * 1024,
              characters.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        var bytes: [UInt8] = []
        var index = 32
        while index < characters.count {
            guard let byte = UInt8(String(decoding: characters[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
            index += 2
        }
        guard let publicID = String(bytes: bytes, encoding: .utf8), validPublicID(publicID) else { return nil }
        return (publicID, String(decoding: characters[0..<32], as: UTF8.self))
    }

    /// Forgets what `scope` names of the recorded assets of `ids` (and, deleting whole, any
    /// record of theirs left in the store from before the rows, which would otherwise be
    /// migrated back on the next read); then releases the objects nothing names any more.
    func forget(_ ids: [String], scope: ServedDeletionScope) async throws -> ServedDeletion {
        guard !ids.isEmpty else { return ServedDeletion() }
        if scope == .whole { for id in ids { try store.delete(try records.legacyKey(id)) } }
        let deletion = try await Self.offPool { [database, settings, store] () throws(DeriveError) in
            try database.deleteServedAssets(cloud: settings.cloudName, publicIDs: ids, scope: scope, store: store.identity)
        }
        let sweep = try await Self.offPool { [database, store] () throws(DeriveError) in
            database.releaseServedObjects(deletion.keys, in: store)
        }
        if !sweep.failures.isEmpty {
            logger.warning("objects of deleted assets were left for derive prune", metadata: [
                "count": "\(sweep.failures.count)", "first": "\(sweep.failures[0])"])
        }
        return deletion
    }

    /// Cloudinary's answer: `deleted` per id (`"deleted"` or `"not_found"`), `deleted_counts`
    /// (the original and derivatives each id lost), `partial` and the `next_cursor` to send back.
    static func deletionAnswer(_ ids: [String], _ deletion: ServedDeletion, scope: ServedDeletionScope, next: ServedAssetCursor?) -> HTTPResponse {
        let found = Set(deletion.found)
        var members: [JSONMember] = [
            JSONMember(key: "deleted", value: .object(ids.map { JSONMember(key: $0, value: .string(found.contains($0) ? "deleted" : "not_found")) })),
            JSONMember(key: "deleted_counts", value: .object(deletion.found.map { id in
                JSONMember(key: id, value: .object(["original": .int(scope == .whole ? 1 : 0), "derived": .int(deletion.derived[id] ?? 0)]))
            })),
            JSONMember(key: "partial", value: .bool(next != nil)),
        ]
        if let next { members.append(JSONMember(key: "next_cursor", value: .string(next.token))) }
        return json(.object(members))
    }
}
