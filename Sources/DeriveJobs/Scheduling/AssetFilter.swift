import DeriveLanguage
import Foundation

/// Which assets a reprocess or revalidation is about. Empty means every asset.
public struct AssetFilter: Sendable, Equatable {
    public var createdBefore: Date?
    public var createdAfter: Date?
    /// Sources on this host (or its subdomains).
    public var sourceHost: String?
    /// With a preset: only assets whose newest outputs of it are from an older version.
    public var stale = false
    /// With a preset: only assets lacking some output of its current version.
    public var missing = false
    /// With a preset: only assets with some current output of it (what the presets page counts
    /// as "assets with its outputs"); without it, every asset.
    public var derived = false
    /// Only sources not checked with their origin since this time (revalidation).
    public var checkedBefore: Date?

    public init(createdBefore: Date? = nil, createdAfter: Date? = nil, sourceHost: String? = nil, stale: Bool = false, missing: Bool = false,
                checkedBefore: Date? = nil, derived: Bool = false) {
        self.derived = derived
        self.createdBefore = createdBefore
        self.createdAfter = createdAfter
        self.sourceHost = sourceHost
        self.stale = stale
        self.missing = missing
        self.checkedBefore = checkedBefore
    }

    /// Whether `url`'s host is `sourceHost` or below it (`images.example.com` for `example.com`).
    public func hostMatches(_ url: String) -> Bool {
        guard let wanted = sourceHost?.lowercased() else { return true }
        guard let host = URLComponents(string: url)?.host?.lowercased() else { return false }
        return host == wanted || host.hasSuffix("." + wanted)
    }

    public var json: JSONValue {
        var members: [JSONMember] = []
        if let createdBefore { members.append(JSONMember(key: "createdBefore", value: .decimal(createdBefore.timeIntervalSince1970))) }
        if let createdAfter { members.append(JSONMember(key: "createdAfter", value: .decimal(createdAfter.timeIntervalSince1970))) }
        if let sourceHost { members.append(JSONMember(key: "sourceHost", value: .string(sourceHost))) }
        if stale { members.append(JSONMember(key: "stale", value: .bool(true))) }
        if missing { members.append(JSONMember(key: "missing", value: .bool(true))) }
        if derived { members.append(JSONMember(key: "derived", value: .bool(true))) }
        if let checkedBefore { members.append(JSONMember(key: "checkedBefore", value: .decimal(checkedBefore.timeIntervalSince1970))) }
        return .object(members)
    }

    public init(json: JSONValue?) throws(ValidationError) {
        self.init()
        guard let json else { return }
        guard case .object = json else { throw ValidationError(location: "filter", reason: "must be an object") }
        func date(_ key: String) throws(ValidationError) -> Date? {
            switch json[key] {
            case nil, .null?: return nil
            case .number(let number)?: return Date(timeIntervalSince1970: number.doubleValue)
            default: throw ValidationError(location: "filter.\(key)", reason: "must be seconds since 1970")
            }
        }
        createdBefore = try date("createdBefore")
        createdAfter = try date("createdAfter")
        checkedBefore = try date("checkedBefore")
        if case .string(let host)? = json["sourceHost"] { sourceHost = host }
        stale = json["stale"] == .bool(true)
        missing = json["missing"] == .bool(true)
        derived = json["derived"] == .bool(true)
    }
}
