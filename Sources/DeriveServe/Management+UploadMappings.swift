import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import Foundation

/// The Admin API's `upload_mappings` calls, as the pinned PyPI `cloudinary` package's
/// `cloudinary/api.py` sends them: `upload_mappings` (GET, `max_results`, `next_cursor`),
/// `upload_mapping` (GET with `folder`), and `create_upload_mapping`, `update_upload_mapping`,
/// `delete_upload_mapping` (POST, PUT, DELETE with a JSON body of `folder` and `template`).
/// The mapping is used by delivery (`Delivery.swift`): the first request for an unrecorded
/// public id in a mapped folder fetches it from the template.
extension CloudinaryService {
    func uploadMappings(_ request: HTTPRequest) async throws -> HTTPResponse {
        let cloud = settings.cloudName
        switch request.method {
        case .GET:
            if let folder = request.query["folder"] {
                let folder = try Self.mappedFolder(folder)
                guard let mapping = try database.uploadMapping(cloud: cloud, folder: folder) else {
                    throw ServeError(404, "Mapping for folder \(Quoted(folder)) not found")
                }
                return Self.json(Self.mappingJSON(mapping))
            }
            let (limit, after) = try Self.namePage(request)
            // One more than asked: whether there is a next page.
            let found = try database.uploadMappings(cloud: cloud, after: after, limit: limit + 1)
            var members = [JSONMember(key: "mappings", value: .array(found.prefix(limit).map(Self.mappingJSON)))]
            if found.count > limit, let last = found.prefix(limit).last {
                members.append(JSONMember(key: "next_cursor", value: .string(Self.encodeTagCursor(last.folder))))
            }
            return Self.json(.object(members))
        case .POST, .PUT:
            let body = try await Self.jsonBody(request)
            let folder = try Self.mappedFolder(Self.text(body["folder"]))
            let template = try Self.mappingTemplate(Self.text(body["template"]))
            let mapping = UploadMapping(folder: folder, template: template)
            if request.method == .POST {
                guard try database.createUploadMapping(mapping, cloud: cloud) else { throw ServeError(409, "Folder \(Quoted(folder)) is already mapped") }
                return Self.json(.object(["message": .string("created")]))
            }
            guard try database.updateUploadMapping(mapping, cloud: cloud) else { throw ServeError(404, "Mapping for folder \(Quoted(folder)) not found") }
            return Self.json(.object(["message": .string("updated")]))
        case .DELETE:
            let body = try await Self.jsonBody(request)
            let folder = try Self.mappedFolder(Self.text(body["folder"]) ?? request.query["folder"])
            guard try database.deleteUploadMapping(cloud: cloud, folder: folder) else { throw ServeError(404, "Mapping for folder \(Quoted(folder)) not found") }
            return Self.json(.object(["message": .string("deleted")]))
        default:
            throw ServeError(405, "Use GET, POST, PUT or DELETE on upload_mappings")
        }
    }

    static func mappingJSON(_ mapping: UploadMapping) -> JSONValue {
        .object([JSONMember(key: "folder", value: .string(mapping.folder)), JSONMember(key: "template", value: .string(mapping.template))])
    }

    static func text(_ value: JSONValue?) -> String? {
        if case .string(let text)? = value { return text }
        return nil
    }

    /// A folder as public ids are written (letters, digits, `_-.`, segments joined by `/`),
    /// slashes at either end dropped.
    static func mappedFolder(_ given: String?) throws -> String {
        guard let given, !given.isEmpty else { throw ServeError(400, "Missing required parameter - folder") }
        let folder = given.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard validPublicID(folder) else {
            throw ServeError(400, "folder \(Quoted(given)) is not a folder Derive keeps (letters, digits, _ - . between slashes, at most 255 bytes)")
        }
        return folder
    }

    /// An http or https URL prefix with a host; what is fetched through it still passes the
    /// fetcher's address rules (a private or loopback host only as `DERIVE_FETCH_ALLOW` says).
    static func mappingTemplate(_ given: String?) throws -> String {
        guard let given, !given.isEmpty else { throw ServeError(400, "Missing required parameter - template") }
        guard given.utf8.count <= 1024, let url = URLComponents(string: given), let scheme = url.scheme?.lowercased(),
              ["http", "https"].contains(scheme), url.host?.isEmpty == false, url.query == nil, url.fragment == nil else {
            throw ServeError(400, "template \(Quoted(String(given.prefix(200)))) is not an http or https URL prefix (at most 1,024 bytes, no query)")
        }
        return given
    }
}
