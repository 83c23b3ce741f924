import DeriveDigest
import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import Foundation

/// The Admin API's folders and usage. Derive's folders are the `/`-separated prefixes of public
/// ids (Cloudinary's "fixed" folder mode, which `config` reports): a folder exists while an
/// asset is under it, and Derive keeps no empty folder.
extension CloudinaryService {
    /// `GET /v1_1/<cloud>/folders[/<path>]` (`root_folders`, `subfolders`), `POST` (`create_folder`),
    /// `DELETE` (`delete_folder`, of an empty folder only, as Cloudinary's).
    func folders(_ request: HTTPRequest, path segments: [String]) throws -> HTTPResponse {
        let joined = segments.joined(separator: "/")
        let path = (joined.removingPercentEncoding ?? joined).split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        guard path.isEmpty || Self.validPublicID(path) else {
            throw ServeError(400, "Invalid folder path \(Quoted(path)): /-separated segments of A-Z a-z 0-9 _ - .")
        }
        let cloud = settings.cloudName
        func occupied() throws -> Bool {
            try !database.listServedAssets(ServedAssetQuery(cloud: cloud, filter: .prefix(path + "/"), order: .publicID, ascending: true, limit: 1))
                .assets.isEmpty
        }
        switch request.method {
        case .GET:
            let exists = try path.isEmpty || occupied()
            guard exists else { throw ServeError(404, "Can't find folder with path \(path)") }
            var limit = 10
            if let text = request.query["max_results"], !text.isEmpty {
                guard let value = Int(text), (1...500).contains(value) else { throw ServeError(400, "max_results must be 1 to 500, got \(Quoted(text))") }
                limit = value
            }
            var after: String?
            if let token = request.query["next_cursor"], !token.isEmpty {
                guard token.count <= 2048, let name = Self.folderCursor(token) else { throw ServeError(400, "Invalid next_cursor") }
                after = name
            }
            let (names, next) = try database.servedFolders(cloud: cloud, under: path, limit: limit, after: after)
            var members: [JSONMember] = [
                JSONMember(key: "folders", value: .array(names.map { name in
                    let full = path.isEmpty ? name : path + "/" + name
                    return .object(["name": .string(name), "path": .string(full),
                                    "external_id": .string(String(MessageDigest.hex("\(cloud)/\(full)", .sha256).prefix(32)))])
                })),
                JSONMember(key: "total_count", value: .int(names.count)),
            ]
            if let next { members.append(JSONMember(key: "next_cursor", value: .string(Self.folderCursor(name: next)))) }
            return Self.json(.object(members))
        case .POST:
            guard !path.isEmpty else { throw ServeError(400, "Missing required parameter - folder path") }
            // Nothing to keep: the folder is listed once an asset is under it.
            return Self.json(.object(["success": .bool(true), "path": .string(path), "name": .string(String(path.split(separator: "/").last ?? ""))]))
        case .DELETE:
            guard !path.isEmpty else { throw ServeError(400, "Missing required parameter - folder path") }
            guard try !occupied() else { throw ServeError(400, "Folder is not empty") }
            throw ServeError(404, "Can't find folder with path \(path)")
        default:
            throw ServeError(405, "Use GET to list folders, POST to create one or DELETE to delete one")
        }
    }

    /// A folder listing's cursor: the last name given, in base64url.
    static func folderCursor(name: String) -> String {
        Data(("f:" + name).utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func folderCursor(_ token: String) -> String? {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8), text.hasPrefix("f:") else { return nil }
        let name = String(text.dropFirst(2))
        return !name.isEmpty && !name.contains("/") && validPublicID(name) ? name : nil
    }

    /// `GET /v1_1/<cloud>/usage`: counts and bytes from the database (Derive meters no
    /// bandwidth or transformations: those keys are absent).
    func usage() async throws -> HTTPResponse {
        let usage = try await Self.offPool { [database, settings] () throws(DeriveError) in try database.servedUsage(cloud: settings.cloudName) }
        let day = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate, .withDashSeparatorInDate])
        return Self.json(.object([
            JSONMember(key: "plan", value: .string("Derive")),
            JSONMember(key: "last_updated", value: .string(day)),
            JSONMember(key: "resources", value: .int(usage.assets)),
            JSONMember(key: "derived_resources", value: .int(usage.derivatives)),
            JSONMember(key: "objects", value: .object(["usage": .int(usage.assets + usage.derivatives)])),
            JSONMember(key: "storage", value: .object(["usage": .int(usage.assetBytes + usage.derivativeBytes)])),
        ]))
    }
}
