import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import Foundation
import Synchronization

/// The Admin API (issue 38): `ping`, `config`, `resource_types`, the listings (`resources`,
/// `resources_by_tag`, `resources_by_context`), one resource and its `update`, `tags`, and
/// the deletions (Management+Delete.swift),
/// with the routes, parameters and answers of the pinned PyPI `cloudinary` package's
/// `cloudinary/api.py`, over `ServedAssetCatalog`. Every call is authorised by HTTP basic
/// auth with an API key and its secret, and answered with Cloudinary's rate-limit headers.
extension CloudinaryService {
    /// The Admin and Search API's answer to a request under `/v1_1/<cloud>/` (`rest` is the
    /// path after the cloud), or the Upload API's management calls; nil when `rest` is none of them.
    func management(_ request: HTTPRequest, rest: [String]) async throws -> HTTPResponse? {
        switch (request.method, rest.first) {
        case (.POST, "image") where rest.count == 2 && ["tags", "context"].contains(rest[1]):
            return try await uploadManagement(request, command: rest[1])
        case (.POST, "image") where rest == ["image", "destroy"]:
            return try await destroy(request)
        case (.POST, "image") where rest == ["image", "rename"]:
            return try await rename(request)
        case (.POST, "image") where rest == ["image", "explicit"]:
            return try await explicit(request)
        case (_, "ping"), (_, "config"), (_, "resources"), (_, "tags"), (_, "derived_resources"), (_, "folders"), (_, "usage"), (_, "upload_mappings"):
            break
        default:
            return nil
        }
        try authorizeAdmin(request)
        let rate = adminRate.take()
        var response: HTTPResponse
        if rate.allowed {
            do {
                response = try await admin(request, rest: rest)
            } catch let error as ServeError {
                response = Self.error(error)
            }
        } else {
            response = Self.error(ServeError(420, "Rate Limit Exceeded: at most \(adminRate.limit) Admin API calls an hour; try again after the hour"))
        }
        response.headers[HTTPHeader("X-FeatureRateLimit-Limit")] = String(adminRate.limit)
        response.headers[HTTPHeader("X-FeatureRateLimit-Remaining")] = String(rate.remaining)
        response.headers[HTTPHeader("X-FeatureRateLimit-Reset")] = IMFDate.format(rate.reset)
        return response
    }

    /// HTTP basic auth with an API key and its secret (the Admin API's; the SDK sends it on
    /// every call). Refused with 401 and the reason.
    func authorizeAdmin(_ request: HTTPRequest) throws {
        guard let authorization = request.headers[HTTPHeader("Authorization")], authorization.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":") else {
            throw ServeError(401, "Must supply api_key")
        }
        let key = String(pair[..<colon]), secret = String(pair[pair.index(after: colon)...])
        guard let expected = settings.credentials[key], CloudinarySigning.constantTimeEqual(expected, secret) else {
            throw ServeError(401, "Invalid credentials")
        }
    }

    func admin(_ request: HTTPRequest, rest: [String]) async throws -> HTTPResponse {
        func only(_ method: HTTPMethod, _ what: String) throws {
            guard request.method == method else { throw ServeError(405, "Use \(method == .POST ? "POST" : "GET") to \(what)") }
        }
        switch rest.count {
        case 1 where rest[0] == "ping":
            try only(.GET, "ping")
            return Self.json(.object(["status": .string("ok")]))
        case 1 where rest[0] == "config":
            try only(.GET, "read the configuration")
            var members: [JSONMember] = [JSONMember(key: "cloud_name", value: .string(settings.cloudName))]
            if Self.flag(request.query["settings"]) == true {
                // Derive keeps public ids as paths: Cloudinary's "fixed" folder mode.
                members.append(JSONMember(key: "settings", value: .object(["folder_mode": .string("fixed")])))
            }
            return Self.json(.object(members))
        case 1 where rest[0] == "resources":
            try only(.GET, "list the resource types")
            return Self.json(.object(["resource_types": .array([.string("image")])]))
        case 1 where rest[0] == "upload_mappings":
            return try await uploadMappings(request)
        case 1 where rest[0] == "derived_resources":
            guard request.method == .DELETE else { throw ServeError(405, "Use DELETE to delete derived resources") }
            return try await deleteDerivedResources(request)
        case 2 where rest[0] == "tags":
            try only(.GET, "list tags")
            try Self.imagesOnly(rest[1])
            return try tagList(request)
        default:
            break
        }
        if rest[0] == "folders" { return try folders(request, path: Array(rest.dropFirst())) }
        if rest[0] == "usage", rest.count <= 2 {
            try only(.GET, "read the usage")
            return try await usage()
        }
        guard rest[0] == "resources", rest.count >= 2 else { throw ServeError(404, "There is no such API: \(Quoted(request.path))") }
        if rest == ["resources", "search"] {
            try only(.POST, "search")
            return try await search(request)
        }
        try Self.imagesOnly(rest[1])
        switch rest.count {
        case 2:
            try only(.GET, "list resources")
            return try listing(request, filter: nil)
        case 3 where rest[2] == "context":
            try only(.GET, "list resources by context")
            guard let key = request.query["key"], !key.isEmpty else { throw ServeError(400, "Missing required parameter - key") }
            return try listing(request, filter: .context(key: key, value: request.query["value"]))
        case 3 where request.method == .DELETE:
            try Self.uploadTypeOnly(rest[2])
            return try await deleteResources(request, tag: nil)
        case 4... where rest[2] == "tags" && request.method == .DELETE:
            let tag = rest.dropFirst(3).joined(separator: "/")
            return try await deleteResources(request, tag: tag.removingPercentEncoding ?? tag)
        case 3:
            try only(.GET, "list resources")
            try Self.uploadTypeOnly(rest[2])
            let ids = Self.queryValues(request, "public_ids[]") + Self.queryValues(request, "public_ids")
            guard ids.count <= 100 else { throw ServeError(400, "At most 100 public_ids, got \(ids.count)") }
            return try listing(request, filter: ids.isEmpty ? nil : .publicIDs(ids))
        case 4... where rest[2] == "tags":
            try only(.GET, "list resources by tag")
            let tag = rest.dropFirst(3).joined(separator: "/")
            return try listing(request, filter: .tag(tag.removingPercentEncoding ?? tag))
        default:
            try Self.uploadTypeOnly(rest[2])
            let id = rest.dropFirst(3).joined(separator: "/")
            let publicID = id.removingPercentEncoding ?? id
            switch request.method {
            case .GET: return try await resource(request, publicID: publicID)
            case .POST: return try await update(request, publicID: publicID)
            default: throw ServeError(405, "Use GET to read a resource or POST to update it")
            }
        }
    }

    static func imagesOnly(_ resourceType: String) throws {
        guard resourceType == "image" else { throw ServeError(404, "Derive serves images only: resource_type \(Quoted(resourceType)) has no resources") }
    }

    static func uploadTypeOnly(_ type: String) throws {
        guard type == "upload" else { throw ServeError(404, "Derive records uploaded assets only: type \(Quoted(type)) has no resources") }
    }

    /// Every value of a query parameter the SDKs repeat for a list (`public_ids[]=a&public_ids[]=b`).
    /// The one place that reads the query as a list of items.
    static func queryValues(_ request: HTTPRequest, _ name: String) -> [String] {
        request.query.filter { $0.name == name }.map(\.value)
    }

    // MARK: Listings

    /// `resources`, `resources_by_tag` and `resources_by_context`: one keyset page, with
    /// `max_results` (1 to 500, default 10), `next_cursor`, `direction` (`asc`/`desc`, `1`/`-1`),
    /// `start_at` (created since; for a plain listing), `tags=true` and `context=true`.
    func listing(_ request: HTTPRequest, filter given: ServedAssetQuery.Filter?) throws -> HTTPResponse {
        var filter = given ?? .all
        var order = ServedAssetQuery.Order.createdAt
        if given == nil, let prefix = request.query["prefix"], !prefix.isEmpty {
            filter = .prefix(prefix)
            order = .publicID
        }
        if let startAt = request.query["start_at"], !startAt.isEmpty {
            guard filter == .all else { throw ServeError(400, "start_at is supported only when listing without prefix, public_ids, tag or context") }
            guard let date = Self.adminDate(startAt) else {
                throw ServeError(400, "start_at must be a date (yyyy-mm-dd hh:mm:ss or ISO 8601), got \(Quoted(startAt))")
            }
            filter = .search(.term(SearchTerm(field: .createdAt, condition: .compare(.greaterOrEqual, date.timeIntervalSince1970))))
        }
        let ascending = try Self.direction(request.query["direction"], default: order == .publicID)
        let query = try Self.query(cloud: settings.cloudName, filter: filter, order: order, ascending: ascending,
                                   maxResults: request.query["max_results"], defaultLimit: 10, cursor: request.query["next_cursor"])
        let page = try database.listServedAssets(query)
        let base = base(request)
        let tags = Self.flag(request.query["tags"]) == true, context = Self.flag(request.query["context"]) == true
        var members: [JSONMember] = [JSONMember(key: "resources", value: .array(page.assets.map {
            .object(Self.listedJSON($0, base: base, cloud: settings.cloudName, tags: tags, context: context))
        }))]
        if let next = page.next { members.append(JSONMember(key: "next_cursor", value: .string(next.token))) }
        return Self.json(.object(members))
    }

    /// A listing's query from the request's text parameters, refused with 400 naming the problem.
    static func query(cloud: String, filter: ServedAssetQuery.Filter, order: ServedAssetQuery.Order, ascending: Bool, maxResults: String?,
                      defaultLimit: Int, cursor: String?) throws -> ServedAssetQuery {
        var limit = defaultLimit
        if let text = maxResults, !text.isEmpty {
            guard let number = Int(text), (1...500).contains(number) else { throw ServeError(400, "max_results must be 1 to 500, got \(Quoted(text))") }
            limit = number
        }
        var after: ServedAssetCursor?
        if let token = cursor, !token.isEmpty {
            guard let read = ServedAssetCursor(token: token) else {
                throw ServeError(400, "Invalid next_cursor (\(token.count) characters): send back the next_cursor of the previous answer")
            }
            guard read.order == order else { throw ServeError(400, "Invalid next_cursor: it belongs to a listing in another order") }
            after = read
        }
        return ServedAssetQuery(cloud: cloud, filter: filter, order: order, ascending: ascending, limit: limit, after: after)
    }

    static func direction(_ text: String?, default ascending: Bool) throws -> Bool {
        switch text?.lowercased() {
        case nil, "": ascending
        case "asc", "1": true
        case "desc", "-1": false
        case let other?: throw ServeError(400, "direction must be asc or desc, got \(Quoted(other))")
        }
    }

    /// `yyyy-mm-dd hh:mm:ss` (UTC, as the Admin API writes them) or ISO 8601.
    static func adminDate(_ text: String) -> Date? {
        // The space between date and time may arrive as a `+` (a query string's space).
        var text = text
        if text.count > 10, text[text.index(text.startIndex, offsetBy: 10)] == "+" {
            text.replaceSubrange(text.index(text.startIndex, offsetBy: 10)...text.index(text.startIndex, offsetBy: 10), with: " ")
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        for format in ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// An asset as a listing gives it: Cloudinary's fields, its tags and context only when asked.
    static func listedJSON(_ asset: ServedAsset, base: String, cloud: String, tags: Bool, context: Bool) -> [JSONMember] {
        var members = assetJSON(asset, base: base, cloud: cloud).filter { $0.key != "tags" && $0.key != "context" }
        if tags { members.append(JSONMember(key: "tags", value: .array(asset.tags.map(JSONValue.string)))) }
        if context, !asset.context.isEmpty {
            members.append(JSONMember(key: "context", value: .object(["custom": .object(asset.context.sorted { $0.key < $1.key }.map {
                JSONMember(key: $0.key, value: .string($0.value))
            })])))
        }
        return members
    }

    /// `tags`: the distinct tags in code-point order, `prefix`, `max_results` (1 to 500,
    /// default 10) and `next_cursor`.
    func tagList(_ request: HTTPRequest) throws -> HTTPResponse {
        let (limit, after) = try Self.namePage(request)
        let prefix = request.query["prefix"].flatMap { $0.isEmpty ? nil : $0 }
        let found = try database.servedTags(cloud: settings.cloudName, prefix: prefix, limit: limit, after: after)
        var members: [JSONMember] = [JSONMember(key: "tags", value: .array(found.tags.map(JSONValue.string)))]
        if let next = found.next { members.append(JSONMember(key: "next_cursor", value: .string(Self.encodeTagCursor(next)))) }
        return Self.json(.object(members))
    }

    /// A listing of names' page (tags, upload mappings' folders): `max_results` (1 to 500,
    /// default 10) and the name `next_cursor` carries, after which the page starts.
    static func namePage(_ request: HTTPRequest) throws -> (limit: Int, after: String?) {
        var limit = 10
        if let text = request.query["max_results"], !text.isEmpty {
            guard let number = Int(text), (1...500).contains(number) else { throw ServeError(400, "max_results must be 1 to 500, got \(Quoted(text))") }
            limit = number
        }
        guard let token = request.query["next_cursor"], !token.isEmpty else { return (limit, nil) }
        guard let name = decodeTagCursor(token) else { throw ServeError(400, "Invalid next_cursor (\(token.count) characters)") }
        return (limit, name)
    }

    static func encodeTagCursor(_ tag: String) -> String {
        Data(("t:" + tag).utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeTagCursor(_ token: String) -> String? {
        guard token.count <= 2048, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8), text.hasPrefix("t:"), text.count > 2 else { return nil }
        return String(text.dropFirst(2))
    }

    // MARK: Update

    /// `update` (POST on the resource, a JSON body): `tags` replaces the tags; `context` sets
    /// the keys given a value and removes those given an empty one. Answers the resource.
    func update(_ request: HTTPRequest, publicID: String) async throws -> HTTPResponse {
        let body = try await Self.jsonBody(request)
        guard Self.validPublicID(publicID), let asset = try records.get(publicID) else { throw ServeError(404, "Resource not found - \(publicID)") }
        var tags: [String]?
        if let value = body["tags"] {
            switch value {
            case .string(let text): tags = Self.tags(text)
            case .array(let items): tags = try items.map { item in
                guard case .string(let text) = item else { throw ServeError(400, "tags must be strings") }
                return text
            }
            case .null: tags = nil
            default: throw ServeError(400, "tags must be a comma-separated string or a list")
            }
        }
        var setContext: [String: String] = [:], removeContext: [String] = []
        if let value = body["context"] {
            let pairs: [String: String]
            switch value {
            case .string(let text): pairs = Self.context(text)
            case .object(let members): pairs = try Dictionary(members.map { member in
                guard case .string(let text) = member.value else { throw ServeError(400, "context.\(member.key) must be a string") }
                return (member.key, text)
            }, uniquingKeysWith: { $1 })
            case .null: pairs = [:]
            default: throw ServeError(400, "context must be key=value pairs separated by | or an object")
            }
            for (key, value) in pairs { if value.isEmpty { removeContext.append(key) } else { setContext[key] = value } }
        }
        var changed = asset
        if let tags { changed.tags = TagChange.replace(tags).applied(to: []) }
        changed.context = ContextChange.add(setContext).applied(to: ContextChange.remove(removeContext).applied(to: asset.context))
        if let issue = AssetFacts(tags: changed.tags, context: changed.context).issues.first { throw ServeError(400, "Invalid tags or context: \(issue)") }
        if let tags { _ = try database.changeTags(.replace(tags), cloud: settings.cloudName, publicIDs: [publicID]) }
        if !removeContext.isEmpty { _ = try database.changeContext(.remove(removeContext), cloud: settings.cloudName, publicIDs: [publicID]) }
        if !setContext.isEmpty { _ = try database.changeContext(.add(setContext), cloud: settings.cloudName, publicIDs: [publicID]) }
        return try await resource(request, publicID: publicID)
    }

    /// A JSON object body (the Admin API's POST and DELETE bodies), at most 1 MiB.
    static func jsonBody(_ request: HTTPRequest, limit: Int = 1 << 20) async throws -> JSONValue {
        let bytes: [UInt8]
        switch await BoundedBody.read(request, limit: limit) {
        case .success(let read): bytes = read
        case .failure(.tooLarge): throw ServeError(413, "The request's body is larger than \(limit) bytes")
        case .failure(.unreadable): throw ServeError(400, "The request's body could not be read")
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .object([]) }
        let value: JSONValue
        do {
            value = try JSONParser().parse(bytes)
        } catch {
            throw ServeError(400, "The body is not JSON: \(error)")
        }
        guard case .object = value else { throw ServeError(400, "The body must be a JSON object, got \(value.typeDescription)") }
        return value
    }
}

/// Cloudinary's Admin API rate limit, counted per process and clock hour (`X-FeatureRateLimit-*`
/// on every Admin answer; 420 once the hour's calls are used up). Derive's limit protects the
/// database from a runaway client; it is `DERIVE_SERVE_ADMIN_RATE_LIMIT` (5,000 by default).
final class AdminRateLimit: Sendable {
    let limit: Int
    private let window = Mutex<(hour: Int, used: Int)>((hour: 0, used: 0))

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Counts one call; whether it is allowed, the calls left this hour and when the hour ends
    /// (seconds since 1970).
    func take(now: Date = Date()) -> (allowed: Bool, remaining: Int, reset: Int) {
        let hour = Int(now.timeIntervalSince1970) / 3600
        return window.withLock { window in
            if window.hour != hour { window = (hour, 0) }
            let allowed = window.used < limit
            if allowed { window.used += 1 }
            return (allowed, limit - window.used, (hour + 1) * 3600)
        }
    }
}
