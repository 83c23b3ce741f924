import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import Foundation

/// The Upload API's `rename` (signed like uploads): `from_public_id` becomes `to_public_id`
/// in one transaction (`ServedAssetCatalog.renameServedAsset`), its derivatives, eager jobs and
/// notification records with it; the objects stay where they are (their keys name content).
/// Every server's delivery cache is dropped by the generation number the deleted row moves.
extension CloudinaryService {
    /// `POST /v1_1/<cloud>/image/rename`: the asset under its new id, as `resource` shows it.
    func rename(_ request: HTTPRequest) async throws -> HTTPResponse {
        let fields = try await signedFields(request)
        guard let signature = fields["signature"], !signature.isEmpty else { throw ServeError(401, "Must supply api_key") }
        _ = try verifySigned(fields, signature: signature)
        if let type = fields["type"], !type.isEmpty { try Self.uploadTypeOnly(type) }
        if let type = fields["to_type"], !type.isEmpty, type != "upload" {
            throw ServeError(400, "to_type \(Quoted(type)) is not supported: Derive records uploaded assets only (type upload)")
        }
        guard let from = fields["from_public_id"], !from.isEmpty else { throw ServeError(400, "Missing required parameter - from_public_id") }
        guard let to = fields["to_public_id"], !to.isEmpty else { throw ServeError(400, "Missing required parameter - to_public_id") }
        guard Self.validPublicID(to) else {
            throw ServeError(400, "to_public_id \(Quoted(to)) is not a public id Derive keeps: /-separated segments of A-Z a-z 0-9 _ - .")
        }
        guard Self.validPublicID(from) else { throw ServeError(404, "Resource not found - \(from)") }
        let overwrite = Self.flag(fields["overwrite"]) ?? false
        // Records from before the rows would be migrated back under the old id, or stand in the new one's way.
        _ = try records.get(from)
        _ = try records.get(to)
        let outcome = try await Self.offPool { [database, settings, store] () throws(DeriveError) in
            try database.renameServedAsset(cloud: settings.cloudName, from: from, to: to, overwrite: overwrite, store: store.identity)
        }
        switch outcome {
        case .notFound:
            throw ServeError(404, "Resource not found - \(from)")
        case .targetExists:
            throw ServeError(400, "to_public_id \(to) already exists")
        case .renamed(let replaced):
            // A record of the old id left from before the rows would be migrated back on its next read.
            try store.delete(try records.legacyKey(from))
            if !replaced.keys.isEmpty {
                let sweep = try await Self.offPool { [database, store] () throws(DeriveError) in database.releaseServedObjects(replaced.keys, in: store) }
                if !sweep.failures.isEmpty {
                    logger.warning("objects of a renamed-over asset were left for derive prune", metadata: [
                        "count": "\(sweep.failures.count)", "first": "\(sweep.failures[0])"])
                }
            }
        }
        guard let asset = try records.get(to) else { throw ServeError(404, "Resource not found - \(to)") }
        return Self.json(.object(Self.assetJSON(asset, base: base(request), cloud: settings.cloudName)))
    }
}
