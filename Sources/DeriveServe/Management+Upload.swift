import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import Foundation

/// The Upload API's management calls, signed like uploads (`cloudinary.uploader`'s
/// `add_tag`, `remove_tag`, `replace_tag`, `remove_all_tags`: `POST /v1_1/<cloud>/image/tags`;
/// `add_context`, `remove_all_context`: `POST /v1_1/<cloud>/image/context`). They answer the
/// public ids they changed, as Cloudinary does; ids not recorded are left out.
extension CloudinaryService {
    /// At most this many public ids in one call (Cloudinary's bound).
    static let managedIDsLimit = 1000

    func uploadManagement(_ request: HTTPRequest, command route: String) async throws -> HTTPResponse {
        let fields = try await signedFields(request)
        guard let signature = fields["signature"], !signature.isEmpty else { throw ServeError(401, "Must supply api_key") }
        _ = try verifySigned(fields, signature: signature)
        if let type = fields["type"], !type.isEmpty { try Self.uploadTypeOnly(type) }
        let ids = (fields["public_ids"] ?? "").split(separator: ",", omittingEmptySubsequences: true).map(String.init)
        guard !ids.isEmpty else { throw ServeError(400, "Missing required parameter - public_ids") }
        guard ids.count <= Self.managedIDsLimit else { throw ServeError(400, "At most \(Self.managedIDsLimit) public_ids, got \(ids.count)") }
        let command = fields["command"] ?? ""
        let valid = ids.filter(Self.validPublicID)
        let changed: [String]
        if route == "tags" {
            let tags = Self.tags(fields["tag"])
            let change: TagChange
            switch command {
            case "add": change = .add(tags)
            case "remove": change = .remove(tags)
            case "replace": change = .replace(tags)
            case "remove_all": change = .removeAll
            case "set_exclusive": throw ServeError(400, "Derive does not support the set_exclusive tag command yet")
            default: throw ServeError(400, "Invalid command \(Quoted(command)): add, remove, replace or remove_all")
            }
            guard !tags.isEmpty || command == "remove_all" else { throw ServeError(400, "Missing required parameter - tag") }
            if let issue = AssetFacts(tags: tags, context: [:]).issues.first { throw ServeError(400, "Invalid tags: \(issue)") }
            try checkFacts(after: .tags(change), publicIDs: valid)
            changed = try database.changeTags(change, cloud: settings.cloudName, publicIDs: valid)
        } else {
            let change: ContextChange
            switch command {
            case "add":
                let context = Self.context(fields["context"])
                guard !context.isEmpty else { throw ServeError(400, "Missing required parameter - context") }
                change = .add(context)
            case "remove_all": change = .removeAll
            default: throw ServeError(400, "Invalid command \(Quoted(command)): add or remove_all")
            }
            try checkFacts(after: .context(change), publicIDs: valid)
            changed = try database.changeContext(change, cloud: settings.cloudName, publicIDs: valid)
        }
        return Self.json(.object(["public_ids": .array(changed.map(JSONValue.string))]))
    }

    /// Refuses a change that would leave an asset with tags or context a job would refuse
    /// (too many, too long: `AssetFacts.issues`), before anything is written.
    func checkFacts(after change: AssetChange, publicIDs: [String]) throws {
        for id in publicIDs {
            guard let asset = try database.servedAsset(cloud: settings.cloudName, publicID: id) else { continue }
            let changed = change.applied(to: asset)
            if let issue = AssetFacts(tags: changed.tags, context: changed.context).issues.first {
                throw ServeError(400, "Invalid tags or context for \(Quoted(id)): \(issue)")
            }
        }
    }

    /// A management call's parameters (multipart, as the SDKs send them, or urlencoded), at
    /// most 1 MiB, with each list (`public_ids[]`) joined by commas under its bare name: the
    /// form the SDKs sign (`public_ids=a,b`).
    func signedFields(_ request: HTTPRequest) async throws -> [String: String] {
        let limit = 1 << 20
        let body: [UInt8]
        switch await BoundedBody.read(request, limit: limit) {
        case .success(let read): body = read
        case .failure(.tooLarge): throw ServeError(413, "The request's body is larger than \(limit) bytes")
        case .failure(.unreadable): throw ServeError(400, "The request's body could not be read")
        }
        var fields: [String: String] = [:], lists: [String: [String]] = [:]
        let type = request.headers[HTTPHeader("Content-Type")] ?? ""
        if let boundary = MultipartForm.boundary(contentType: type) {
            do {
                let form = try MultipartForm.parse(body, boundary: boundary)
                fields = form.fields
                lists = form.lists
            } catch {
                throw ServeError(400, "Malformed multipart body: \(error.description)")
            }
        } else if type.lowercased().hasPrefix("application/x-www-form-urlencoded") || type.isEmpty {
            for (name, value) in FormFields.pairs(body) {
                fields[name] = value
                if name.hasSuffix("[]") { lists[name, default: []].append(value) }
            }
        } else {
            throw ServeError(400, "Send the parameters as multipart/form-data or application/x-www-form-urlencoded")
        }
        for (name, values) in lists {
            fields[name] = nil
            fields[String(name.dropLast(2))] = values.joined(separator: ",")
        }
        return fields
    }
}
