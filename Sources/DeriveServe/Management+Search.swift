import DeriveJobs
import DeriveLanguage
import DeriveHTTP
import Foundation

/// The Search API (`POST /v1_1/<cloud>/resources/search`, a JSON body as `cloudinary.Search`
/// sends it): `expression` (`SearchExpression`), `sort_by` (`created_at` or `public_id`,
/// `asc`/`desc`), `max_results` (1 to 500, default 50), `next_cursor`, `with_field` (`tags`,
/// `context`) and `aggregate` (`format`).
extension CloudinaryService {
    func search(_ request: HTTPRequest) async throws -> HTTPResponse {
        let started = ContinuousClock.now
        let body = try await Self.jsonBody(request)
        func string(_ name: String) throws -> String? {
            switch body[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            case .number(let number)?: return number.text
            case let other?: throw ServeError(400, "\(name) must be a string, got \(other.typeDescription)")
            }
        }
        func names(_ name: String) throws -> [String] {
            switch body[name] {
            case nil, .null?: return []
            case .string(let text)?: return [text]
            case .array(let items)?:
                return try items.map { item in
                    switch item {
                    case .string(let text): return text
                    case .object where item["type"] != nil:
                        guard case .string(let text)? = item["type"] else { throw ServeError(400, "\(name)[].type must be a string") }
                        return text
                    default: throw ServeError(400, "\(name) must list names, got \(item.typeDescription)")
                    }
                }
            case let other?: throw ServeError(400, "\(name) must be a list of names, got \(other.typeDescription)")
            }
        }
        let text = try string("expression") ?? ""
        let expression: SearchExpression
        do {
            expression = try SearchExpression.parse(text)
        } catch {
            throw ServeError(400, "Invalid search expression: \(error.detail)")
        }
        // sort_by: [{"created_at": "desc"}] (Derive sorts by one field; Cloudinary's default is created_at desc).
        var order = ServedAssetQuery.Order.createdAt, ascending = false
        switch body["sort_by"] {
        case nil, .null?: break
        case .array(let items)?:
            guard items.count <= 1 else { throw ServeError(400, "sort_by: Derive sorts by one field (created_at or public_id), got \(items.count)") }
            if let item = items.first {
                guard case .object(let members) = item, members.count == 1, case .string(let direction) = members[0].value else {
                    throw ServeError(400, "sort_by must be [{\"<field>\": \"asc\" or \"desc\"}]")
                }
                switch members[0].key {
                case "created_at", "uploaded_at": order = .createdAt
                case "public_id": order = .publicID
                default: throw ServeError(400, "sort_by: Derive sorts by created_at or public_id, not \(Quoted(members[0].key))")
                }
                ascending = try Self.direction(direction, default: false)
            }
        case let other?: throw ServeError(400, "sort_by must be a list, got \(other.typeDescription)")
        }
        let withFields = Set(try names("with_field"))
        for field in withFields.sorted() where !["tags", "context"].contains(field) {
            throw ServeError(400, "with_field: Derive adds tags and context, not \(Quoted(field))")
        }
        let aggregates = try names("aggregate")
        for field in aggregates where field != "format" { throw ServeError(400, "aggregate: Derive aggregates by format only, not \(Quoted(field))") }

        let query = try Self.query(cloud: settings.cloudName, filter: .search(expression), order: order, ascending: ascending,
                                   maxResults: try string("max_results"), defaultLimit: 50, cursor: try string("next_cursor"))
        let page = try database.listServedAssets(query)
        let formats = try database.countServedAssets(query)
        let counted = (count: formats.values.reduce(0, +), formats: formats)
        let base = base(request)
        var members: [JSONMember] = []
        members.append(JSONMember(key: "total_count", value: .int(counted.count)))
        members.append(JSONMember(key: "resources", value: .array(page.assets.map { asset in
            var fields = Self.listedJSON(asset, base: base, cloud: settings.cloudName, tags: withFields.contains("tags"), context: withFields.contains("context"))
            fields += [JSONMember(key: "folder", value: .string(SearchTerm.folder(asset.publicID))),
                       JSONMember(key: "filename", value: .string(SearchTerm.filename(asset.publicID))),
                       JSONMember(key: "pixels", value: .int(asset.width * asset.height)),
                       JSONMember(key: "uploaded_at", value: .string(ISO8601DateFormatter().string(from: asset.createdAt)))]
            return .object(fields)
        })))
        if let next = page.next { members.append(JSONMember(key: "next_cursor", value: .string(next.token))) }
        if !aggregates.isEmpty {
            members.append(JSONMember(key: "aggregations", value: .object(["format": .object(counted.formats.sorted { $0.key < $1.key }.map {
                JSONMember(key: $0.key, value: .int($0.value))
            })])))
        }
        let elapsed = ContinuousClock.now - started
        members.insert(JSONMember(key: "time", value: .int(Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000))),
                       at: 0)
        return Self.json(.object(members))
    }
}
