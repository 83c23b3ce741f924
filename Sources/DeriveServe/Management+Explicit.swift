import DeriveDigest
import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import Foundation

/// The Upload API's `explicit` (signed like uploads): eager outputs of an asset already
/// uploaded, made from its stored original by one job queued with the asset's record
/// (`addEagerJob`, the upload's eager path), and its `tags` (replaced) and `context` (set).
extension CloudinaryService {
    /// `POST /v1_1/<cloud>/image/explicit`: the asset as an upload answers it, with `eager`.
    func explicit(_ request: HTTPRequest) async throws -> HTTPResponse {
        let fields = try await signedFields(request)
        guard let signature = fields["signature"], !signature.isEmpty else { throw ServeError(401, "Must supply api_key") }
        let (_, secret) = try verifySigned(fields, signature: signature)
        if let type = fields["type"], !type.isEmpty { try Self.uploadTypeOnly(type) }
        guard let id = fields["public_id"], !id.isEmpty else { throw ServeError(400, "Missing required parameter - public_id") }
        guard Self.validPublicID(id), var asset = try records.get(id) else { throw ServeError(404, "Resource not found - \(id)") }
        guard let original = ImageFormat.allCases.first(where: { $0.fileExtension == asset.format }) ?? ImageFormat(rawValue: asset.format) else {
            throw ServeError(400, "The original's format \(Quoted(asset.format)) cannot be derived from")
        }
        let eager = try Self.eagerOutputs(fields["eager"] ?? "", originalFormat: original)
        let eagerAsync = Self.flag(fields["eager_async"]) ?? false

        // Tags and context first, refused as an upload refuses them (a job reads them in conditions).
        let tags = fields["tags"].map { Self.tags($0) }
        let context = fields["context"].map { Self.context($0) } ?? [:]
        let facts = AssetFacts(tags: tags ?? asset.tags, context: asset.context.merging(context) { $1 })
        if let issue = facts.issues.first { throw ServeError(400, "Invalid tags or context: \(issue)") }
        if let tags { _ = try database.changeTags(.replace(tags), cloud: settings.cloudName, publicIDs: [id]) }
        if !context.isEmpty { _ = try database.changeContext(.add(context), cloud: settings.cloudName, publicIDs: [id]) }

        var pending: EagerJob?
        if !eager.isEmpty {
            let spec = JobSpec(source: store.sourceLocation(of: try StorageKey(asset.originalKey)), outputs: eager.enumerated().map { index, item in
                var output = item.spec
                output.name = "eager\(index)"
                return output
            }, asset: facts)
            let job = NewJob(payload: ChainEncoder.json(spec), queue: settings.queue, priority: 0, runAt: nil, maxAttempts: 3, dedupeKey: nil)
            let outputs = eager.map { EagerOutput(transformation: $0.transformation, format: $0.format, identity: $0.identity) }
            let added = try await Self.offPool { [database, settings, asset] () throws(DeriveError) in
                try database.addEagerJob(cloud: settings.cloudName, publicID: id, version: asset.version, job: job, outputs: outputs)
            }
            guard let added else { throw ServeError(404, "Resource not found - \(id)") }
            queued()
            pending = EagerJob(jobID: added, outputs: outputs)
        }
        asset = try records.get(id) ?? asset
        if let pending {
            if eagerAsync {
                finishLater(pending, asset: asset)
            } else {
                asset = try await finish(pending, asset: asset) ?? asset
            }
        }
        var members = Self.assetJSON(asset, base: base(request), cloud: settings.cloudName,
                                     eager: eager.isEmpty ? nil : eager.map { ($0.transformation, $0.format, $0.identity) }, processing: eagerAsync)
        members.append(JSONMember(key: "signature", value: .string(MessageDigest.hex("public_id=\(asset.publicID)&version=\(asset.version)" + secret, .sha1))))
        return Self.json(.object(members))
    }
}
