/// What a job says about its asset beyond the pixels: Cloudinary's tags (free texts) and
/// contextual metadata (key/value texts). Jobs, uploads and SQL submissions carry them, stores
/// keep them on the asset's row, and conditions read them when the planner decides a branch
/// (`if_!sale!_in_tags`, `if_ctx:!productType!_eq_!shoes!`). Derive has one key/value map:
/// Cloudinary's structured metadata (`md:!field!`) reads it as `ctx:` does.
public struct AssetFacts: Sendable, Hashable {
    /// Distinct, in the order given.
    public var tags: [String]
    public var context: [String: String]

    public init(tags: [String] = [], context: [String: String] = [:]) {
        var seen: Set<String> = []
        self.tags = tags.filter { seen.insert($0).inserted }
        self.context = context
    }

    public static let none = AssetFacts()

    public var isEmpty: Bool { tags.isEmpty && context.isEmpty }

    /// Bounds that keep a job document small: Cloudinary allows 1,000 tags an asset; a tag or
    /// a context value of 1,024 characters and 255-character keys are beyond anything it takes.
    public static let maxTags = 1000
    public static let maxTagLength = 255
    public static let maxContextEntries = 100
    public static let maxKeyLength = 255
    public static let maxValueLength = 1024

    /// Why a tag cannot be stored, if it cannot: empty, too long, or holding `,` (which
    /// separates tags in Cloudinary's upload API) or a control character.
    public static func tagIssue(_ tag: String) -> String? {
        if tag.isEmpty { return "a tag is empty" }
        if tag.count > maxTagLength { return "a tag has at most \(maxTagLength) characters, got \(tag.count)" }
        if tag.contains(",") { return "\(Quoted(tag)): a tag cannot hold ',' (Cloudinary separates tags with it)" }
        if tag.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "\(Quoted(tag)): a tag cannot hold a control character" }
        return nil
    }

    /// Why a context key cannot be stored, if it cannot (Cloudinary's context keys are
    /// separated from their values by `=` and from each other by `|`).
    public static func keyIssue(_ key: String) -> String? {
        if key.isEmpty { return "a context key is empty" }
        if key.count > maxKeyLength { return "a context key has at most \(maxKeyLength) characters, got \(key.count)" }
        if key.contains(where: { "=|!".contains($0) }) { return "\(Quoted(key)): a context key cannot hold '=', '|' or '!'" }
        if key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "\(Quoted(key)): a context key cannot hold a control character" }
        return nil
    }

    public static func valueIssue(_ key: String, _ value: String) -> String? {
        if value.count > maxValueLength { return "context \(Quoted(key)) has at most \(maxValueLength) characters, got \(value.count)" }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "context \(Quoted(key)): a value cannot hold a control character" }
        return nil
    }

    /// Every reason these facts cannot be stored, in order.
    public var issues: [String] {
        var issues: [String] = []
        if tags.count > Self.maxTags { issues.append("at most \(Self.maxTags) tags, got \(tags.count)") }
        issues += tags.compactMap(Self.tagIssue)
        if context.count > Self.maxContextEntries { issues.append("at most \(Self.maxContextEntries) context entries, got \(context.count)") }
        for key in context.keys.sorted() {
            if let issue = Self.keyIssue(key) { issues.append(issue) } else if let issue = Self.valueIssue(key, context[key] ?? "") { issues.append(issue) }
        }
        return issues
    }

    /// `key=value`, as `derive run --context` and Cloudinary's upload API write one entry.
    public static func contextEntry(_ text: String) -> (key: String, value: String)? {
        guard let equals = text.firstIndex(of: "=") else { return nil }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    /// The text hashed into an output's identity when its chain reads these facts: tags sorted,
    /// keys sorted, as canonical JSON.
    public var identityText: String {
        JSONWriter.canonical(.object(["tags": .array(tags.sorted().map(JSONValue.string)), "context": contextJSON]))
    }

    /// The context as a JSON object, keys sorted.
    public var contextJSON: JSONValue {
        .object(context.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) })
    }
}

/// A value of the asset that conditions and variables read: `tags` (a list, for `in` and
/// `nin`), `ctx:!key!` and `md:!key!` (texts; empty when the asset has no such key, as
/// Cloudinary compares a missing value with `!!`).
public enum AssetValue: Sendable, Hashable {
    case tags
    case context(String)
    /// Cloudinary's structured metadata field, read from the same map as `ctx:`.
    case metadata(String)

    public var canonicalText: String {
        switch self {
        case .tags: "tags"
        case .context(let key): "ctx:!\(key)!"
        case .metadata(let key): "md:!\(key)!"
        }
    }

    /// `tags`, `ctx:!key!`, `md:!key!` (and the SDKs' long names `context:` and `metadata:`).
    static func parse(_ text: String) -> AssetValue? {
        if text == "tags" { return .tags }
        for (prefixes, make) in [(["ctx:", "context:"], AssetValue.context), (["md:", "metadata:"], AssetValue.metadata)] {
            for prefix in prefixes where text.hasPrefix(prefix) {
                let rest = String(text.dropFirst(prefix.count))
                guard let key = ConditionParser.textLiteral(rest), !key.isEmpty else { return nil }
                return make(key)
            }
        }
        return nil
    }

    /// The value on an asset: the tags as a list, a context value as a text ("" when absent).
    func value(on asset: AssetFacts) -> AssetReading {
        switch self {
        case .tags: .list(asset.tags)
        case .context(let key), .metadata(let key): .text(asset.context[key] ?? "")
        }
    }
}

/// An asset value as a condition or a variable reads it, converted to a number when written
/// with `_to_f` or `_to_i`.
public struct AssetRead: Sendable, Hashable {
    public var value: AssetValue
    public var conversion: TextConversion?

    public init(_ value: AssetValue, conversion: TextConversion? = nil) {
        self.value = value
        self.conversion = conversion
    }

    public var canonicalText: String { value.canonicalText + (conversion.map { "_" + $0.rawValue } ?? "") }

    /// `ctx:!key!`, `ctx:!key!_to_f`, `md:!key!_to_i`, `tags`.
    static func parse(_ text: String) -> AssetRead? {
        for conversion in [TextConversion.toFloat, .toInteger] where text.hasSuffix("_" + conversion.rawValue) {
            guard let value = AssetValue.parse(String(text.dropLast(conversion.rawValue.count + 1))), value != .tags else { return nil }
            return AssetRead(value, conversion: conversion)
        }
        return AssetValue.parse(text).map { AssetRead($0) }
    }

    /// What it reads on the asset: a number when converted, a list for `tags`, else a text.
    func reading(on asset: AssetFacts) -> AssetReading {
        let raw = value.value(on: asset)
        guard let conversion, case .text(let text) = raw else { return raw }
        return .number(conversion.apply(text))
    }
}

enum AssetReading {
    case number(Double)
    case list([String])
    case text(String)
}

/// `_to_f` and `_to_i` after an asset value (`$x_ctx:!x_pos!_to_f`): the text read as a number
/// as Cloudinary's conversion does (the leading number; 0 when the text starts with none),
/// `to_i` dropping the fraction.
public enum TextConversion: String, Sendable, Hashable {
    case toFloat = "to_f"
    case toInteger = "to_i"

    func apply(_ text: String) -> Double {
        let trimmed = text.drop { $0 == " " }
        var end = trimmed.startIndex
        var seenDigit = false, seenDot = false
        var i = trimmed.startIndex
        if i < trimmed.endIndex, trimmed[i] == "-" || trimmed[i] == "+" { i = trimmed.index(after: i) }
        while i < trimmed.endIndex {
            let c = trimmed[i]
            if c.isASCII && c.isNumber { seenDigit = true; end = trimmed.index(after: i) } else if c == "." && !seenDot && self == .toFloat { seenDot = true } else { break }
            i = trimmed.index(after: i)
        }
        guard seenDigit, let value = Double(trimmed[trimmed.startIndex..<end]), value.isFinite, abs(value) < 1e9 else { return 0 }
        return self == .toInteger ? value.rounded(.towardZero) : Decimal6.quantize(value)
    }
}
