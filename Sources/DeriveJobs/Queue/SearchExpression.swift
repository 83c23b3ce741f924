import DeriveLanguage
import Foundation

/// Cloudinary's search expressions (`POST /v1_1/<cloud>/resources/search`), for the fields
/// `derive serve` records: a Lucene-like language of terms joined by `AND`, `OR`, `NOT` (and
/// `-`), parentheses, and terms written next to each other (which all must hold).
///
/// A term is `field:value` (a string field matches the value, `*` at its end for a prefix; a
/// number or date field equals it), `field=value` (exactly), `field>value`, `>=`, `<`, `<=`,
/// `field:[low TO high]` (inclusive; `{…}` exclusive), or a bare value (matched against the
/// public id, its file name and the tags). Dates are ISO-8601 (`2024-01-31`,
/// `2024-01-31T12:00:00Z`) or relative to now (`1h`, `2d`, `3w`, `1m` for a month, `1y`), so
/// `created_at>1d` is "created in the last day"; byte counts take `kb`, `mb`, `gb` (and `k`,
/// `m`, `g`), in units of 1,024.
///
/// Parsed once into a tree that the memory queue evaluates and the SQL stores compile; a
/// malformed expression is refused with where it went wrong, never guessed at.
public indirect enum SearchExpression: Sendable, Equatable {
    case all([SearchExpression])
    case any([SearchExpression])
    case not(SearchExpression)
    case term(SearchTerm)

    /// Refused: longer than this, or nested deeper (what a fuzzer sends is answered at once).
    public static let maxLength = 4096
    public static let maxDepth = 32

    /// The tree of `text`; an empty expression selects everything. `now` anchors relative dates.
    public static func parse(_ text: String, now: Date = Date()) throws(DeriveError) -> SearchExpression {
        guard text.utf8.count <= maxLength else {
            throw DeriveError(.invalidJob, "the search expression is \(text.utf8.count) bytes; at most \(maxLength)")
        }
        var parser = SearchParser(tokens: try SearchLexer.tokens(text), now: now)
        if parser.tokens.isEmpty { return .all([]) }
        let tree = try parser.disjunction(depth: 0)
        if let extra = parser.peek { throw parser.error("unexpected \(extra.description)") }
        return tree
    }

    /// Whether `asset` is selected (the memory queue's evaluation; the SQL stores compile the
    /// same tree).
    public func matches(_ asset: ServedAsset) -> Bool {
        switch self {
        case .all(let parts): parts.allSatisfy { $0.matches(asset) }
        case .any(let parts): parts.contains { $0.matches(asset) }
        case .not(let part): !part.matches(asset)
        case .term(let term): term.matches(asset)
        }
    }
}

/// One field's condition.
public struct SearchTerm: Sendable, Equatable {
    /// The fields Derive records.
    public enum Field: Sendable, Equatable {
        case publicID, filename, folder, format, tags, resourceType, type
        case context(String)
        case bytes, width, height, pixels
        case createdAt
        /// A bare value: the public id, the file name or a tag.
        case anyText

        var kind: Kind {
            switch self {
            case .bytes, .width, .height, .pixels: .number
            case .createdAt: .date
            default: .text
            }
        }

        enum Kind { case text, number, date }

        static func named(_ name: String) -> Field? {
            switch name {
            case "public_id": .publicID
            case "filename": .filename
            case "folder": .folder
            case "format": .format
            case "tags", "tag": .tags
            case "resource_type": .resourceType
            case "type": .type
            case "bytes": .bytes
            case "width": .width
            case "height": .height
            case "pixels": .pixels
            case "created_at", "uploaded_at": .createdAt
            default: name.hasPrefix("context.") && name.count > 8 ? .context(String(name.dropFirst(8))) : nil
            }
        }
    }

    public enum Condition: Sendable, Equatable {
        /// Text equal to the value (`=`, or `:` on tags, formats and types).
        case equals(String)
        /// Text starting with the value (`:` with `*` at the end).
        case prefix(String)
        /// Any value at all (`field:*`).
        case present
        /// Numbers and dates (seconds since 1970) compared, or in a range.
        case compare(Comparison, Double)
        case range(Double, Double, inclusive: Bool)
    }

    public enum Comparison: String, Sendable, Equatable {
        case equal = "=", greater = ">", greaterOrEqual = ">=", less = "<", lessOrEqual = "<="
    }

    public var field: Field
    public var condition: Condition

    public init(field: Field, condition: Condition) {
        self.field = field
        self.condition = condition
    }

    func matches(_ asset: ServedAsset) -> Bool {
        switch field.kind {
        case .text: return texts(of: asset).contains { matches(text: $0) }
        case .number, .date: return matches(number: number(of: asset))
        }
    }

    func texts(of asset: ServedAsset) -> [String] {
        switch field {
        case .publicID: [asset.publicID]
        case .filename: [SearchTerm.filename(asset.publicID)]
        case .folder: [SearchTerm.folder(asset.publicID)]
        case .format: [asset.format]
        case .tags: asset.tags
        case .resourceType: ["image"]
        case .type: ["upload"]
        case .context(let key): asset.context[key].map { [$0] } ?? []
        case .anyText: [asset.publicID, SearchTerm.filename(asset.publicID)] + asset.tags
        case .bytes, .width, .height, .pixels, .createdAt: []
        }
    }

    func number(of asset: ServedAsset) -> Double {
        switch field {
        case .bytes: Double(asset.bytes)
        case .width: Double(asset.width)
        case .height: Double(asset.height)
        case .pixels: Double(asset.width) * Double(asset.height)
        case .createdAt: asset.createdAt.timeIntervalSince1970
        default: .nan
        }
    }

    func matches(text: String) -> Bool {
        switch condition {
        case .equals(let value): text == value
        case .prefix(let value): text.hasPrefix(value)
        case .present: true
        case .compare, .range: false
        }
    }

    func matches(number: Double) -> Bool {
        switch condition {
        case .compare(let comparison, let value):
            switch comparison {
            case .equal: number == value
            case .greater: number > value
            case .greaterOrEqual: number >= value
            case .less: number < value
            case .lessOrEqual: number <= value
            }
        case .range(let low, let high, let inclusive):
            // Compared, not made a `ClosedRange`: `[5 TO 1]` is an empty range a user may write, and
            // `low...high` traps on it (the search fuzzer's find, stop 46).
            inclusive ? number >= low && number <= high : number > low && number < high
        case .equals, .prefix: false
        case .present: true
        }
    }

    /// The public id's last segment (Cloudinary's `filename`).
    public static func filename(_ publicID: String) -> String {
        publicID.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? publicID
    }

    /// The public id's folder, "" at the root.
    public static func folder(_ publicID: String) -> String {
        guard let slash = publicID.lastIndex(of: "/") else { return "" }
        return String(publicID[..<slash])
    }
}

// MARK: Reading

enum SearchToken: Equatable, CustomStringConvertible {
    /// A word or a quoted text; `quoted` keeps `*` and keywords literal.
    case word(String, quoted: Bool)
    case symbol(String)

    var description: String {
        switch self {
        case .word(let text, _): "\(Quoted(text))"
        case .symbol(let symbol): "\(Quoted(symbol))"
        }
    }
}

enum SearchLexer {
    static let symbols: [String] = [">=", "<=", ":", "=", ">", "<", "(", ")", "[", "]", "{", "}"]

    /// Words, quoted texts and symbols, with their offsets (for error messages).
    static func tokens(_ text: String) throws(DeriveError) -> [(token: SearchToken, offset: Int)] {
        let characters = Array(text)
        var tokens: [(SearchToken, Int)] = []
        var i = 0
        while i < characters.count {
            let c = characters[i]
            if c.isWhitespace { i += 1; continue }
            if c == "\"" {
                var value = "", j = i + 1, closed = false
                while j < characters.count {
                    if characters[j] == "\\", j + 1 < characters.count { value.append(characters[j + 1]); j += 2; continue }
                    if characters[j] == "\"" { closed = true; break }
                    value.append(characters[j])
                    j += 1
                }
                guard closed else { throw SearchParser.error("the quote at \(i + 1) is not closed") }
                tokens.append((.word(value, quoted: true), i))
                i = j + 1
                continue
            }
            if let symbol = symbols.first(where: { symbol in
                characters[i...].starts(with: Array(symbol))
            }) {
                tokens.append((.symbol(symbol), i))
                i += symbol.count
                continue
            }
            var word = "", j = i
            while j < characters.count {
                let d = characters[j]
                if d == "\\", j + 1 < characters.count { word.append(characters[j + 1]); j += 2; continue }
                if d.isWhitespace || d == "\"" || symbols.contains(where: { characters[j...].starts(with: Array($0)) }) { break }
                word.append(d)
                j += 1
            }
            tokens.append((.word(word, quoted: false), i))
            i = j
        }
        return tokens
    }
}

struct SearchParser {
    let tokens: [(token: SearchToken, offset: Int)]
    let now: Date
    var position = 0

    init(tokens: [(token: SearchToken, offset: Int)], now: Date) {
        self.tokens = tokens
        self.now = now
    }

    var peek: SearchToken? { position < tokens.count ? tokens[position].token : nil }

    static func error(_ message: String) -> DeriveError {
        DeriveError(.invalidJob, "the search expression cannot be read: \(message)")
    }

    func error(_ message: String) -> DeriveError {
        let at = position < tokens.count ? " at character \(tokens[position].offset + 1)" : " at its end"
        return Self.error(message + at)
    }

    mutating func next() -> SearchToken? {
        defer { position += 1 }
        return peek
    }

    func isKeyword(_ keyword: String) -> Bool {
        if case .word(let text, false)? = peek { return text == keyword }
        return false
    }

    mutating func disjunction(depth: Int) throws(DeriveError) -> SearchExpression {
        guard depth <= SearchExpression.maxDepth else { throw error("nested deeper than \(SearchExpression.maxDepth)") }
        var parts = [try conjunction(depth: depth)]
        while isKeyword("OR") || peek == .word("||", quoted: false) {
            position += 1
            parts.append(try conjunction(depth: depth))
        }
        return parts.count == 1 ? parts[0] : .any(parts)
    }

    mutating func conjunction(depth: Int) throws(DeriveError) -> SearchExpression {
        var parts = [try negation(depth: depth)]
        while let token = peek, token != .symbol(")"), !isKeyword("OR"), token != .word("||", quoted: false) {
            if isKeyword("AND") || token == .word("&&", quoted: false) { position += 1 }
            parts.append(try negation(depth: depth))
        }
        return parts.count == 1 ? parts[0] : .all(parts)
    }

    mutating func negation(depth: Int) throws(DeriveError) -> SearchExpression {
        guard depth <= SearchExpression.maxDepth else { throw error("nested deeper than \(SearchExpression.maxDepth)") }
        if isKeyword("NOT") || peek == .word("!", quoted: false) {
            position += 1
            return .not(try negation(depth: depth + 1))
        }
        if case .word(let text, false)? = peek, text.hasPrefix("-") {
            // `-tags:x` and `- (…)`: the minus is NOT.
            guard text.count > 1 else {
                position += 1
                return .not(try negation(depth: depth + 1))
            }
            return .not(try primary(depth: depth + 1, leading: String(text.dropFirst())))
        }
        return try primary(depth: depth, leading: nil)
    }

    /// `( … )` or a term; `leading` is the first word's text when a `-` was taken off it.
    mutating func primary(depth: Int, leading: String?) throws(DeriveError) -> SearchExpression {
        guard let token = peek else { throw error("a term is missing") }
        if leading == nil, token == .symbol("(") {
            position += 1
            let inner = try disjunction(depth: depth + 1)
            guard next() == .symbol(")") else { position -= 1; throw error("a ')' is missing") }
            return inner
        }
        guard case .word(let word, let quoted) = token else { throw error("unexpected \(token.description)") }
        position += 1
        let name = leading ?? word
        // A field and its operator, or a bare value.
        if !quoted, case .symbol(let symbol)? = peek, [":", "=", ">", ">=", "<", "<="].contains(symbol) {
            guard let field = SearchTerm.Field.named(name) else {
                position -= 1
                throw error("\(Quoted(name)) is not a field Derive searches (public_id, filename, folder, format, tags, context.<key>, "
                            + "resource_type, type, bytes, width, height, pixels, created_at, uploaded_at)")
            }
            position += 1
            return .term(SearchTerm(field: field, condition: try condition(for: field, symbol: symbol)))
        }
        if !quoted, ["AND", "OR", "&&", "||"].contains(name) { position -= 1; throw error("a term is missing before \(Quoted(name))") }
        return .term(SearchTerm(field: .anyText, condition: Self.textCondition(name, quoted: quoted, exact: false)))
    }

    mutating func condition(for field: SearchTerm.Field, symbol: String) throws(DeriveError) -> SearchTerm.Condition {
        if symbol == ":", let open = peek, open == .symbol("[") || open == .symbol("{") {
            position += 1
            let low = try value(for: field)
            guard isKeyword("TO") else { throw error("a range is [low TO high]") }
            position += 1
            let high = try value(for: field)
            let close = next()
            guard close == (open == .symbol("[") ? .symbol("]") : .symbol("}")) else {
                position -= 1
                throw error("the range is not closed with \(open == .symbol("[") ? "]" : "}")")
            }
            guard field.kind != .text else { throw error("a range needs a number or date field") }
            return .range(low, high, inclusive: open == .symbol("["))
        }
        guard case .word(let text, let quoted)? = peek else { throw error("a value is missing") }
        switch field.kind {
        case .text:
            guard symbol == ":" || symbol == "=" else { throw error("\(Quoted(symbol)) compares numbers and dates, not text") }
            position += 1
            return Self.textCondition(text, quoted: quoted, exact: symbol == "=")
        case .number, .date:
            let number = try value(for: field)
            let comparison = symbol == ":" ? SearchTerm.Comparison.equal : SearchTerm.Comparison(rawValue: symbol) ?? .equal
            if field.kind == .date, symbol == ":" || symbol == "=", case .word(let text, _) = tokens[position - 1].token,
               Self.relative(text) != nil {
                // `created_at:1d` reads as "within the last day", as `>` does.
                return .compare(.greater, number)
            }
            return .compare(comparison, number)
        }
    }

    static func textCondition(_ text: String, quoted: Bool, exact: Bool) -> SearchTerm.Condition {
        if !quoted, !exact, text == "*" { return .present }
        if !quoted, !exact, text.hasSuffix("*") { return .prefix(String(text.dropLast())) }
        return .equals(text)
    }

    /// A number (with a byte unit on `bytes`) or a date, taken from the next word.
    mutating func value(for field: SearchTerm.Field) throws(DeriveError) -> Double {
        guard case .word(let text, _)? = peek else { throw error("a value is missing") }
        position += 1
        switch field.kind {
        case .number:
            if let number = Self.number(text, bytes: field == .bytes) { return number }
            position -= 1
            throw error("\(Quoted(text)) is not a number\(field == .bytes ? " (bytes take kb, mb, gb)" : "")")
        case .date:
            if let seconds = Self.relative(text) { return now.timeIntervalSince1970 - seconds }
            if let date = Self.date(text) { return date.timeIntervalSince1970 }
            position -= 1
            throw error("\(Quoted(text)) is not a date (2024-01-31, 2024-01-31T12:00:00Z, or 1h, 2d, 3w, 1m, 1y ago)")
        case .text:
            position -= 1
            throw error("a range needs a number or date field")
        }
    }

    static func number(_ text: String, bytes: Bool) -> Double? {
        let lower = text.lowercased()
        let (k, m, g): (Double, Double, Double) = (1024, 1024 * 1024, 1024 * 1024 * 1024)
        let units: [(String, Double)] = bytes ? [("gb", g), ("mb", m), ("kb", k), ("g", g), ("m", m), ("k", k), ("b", 1)] : []
        for (unit, scale) in units where lower.hasSuffix(unit) {
            if let number = Double(lower.dropLast(unit.count)), number.isFinite, number >= 0 { return number * scale }
        }
        guard let number = Double(lower), number.isFinite else { return nil }
        return number
    }

    /// `1h`, `2d`, `3w`, `1m` (30 days), `1y` (365 days): seconds before now.
    static func relative(_ text: String) -> Double? {
        guard let unit = text.last, let count = Int(text.dropLast()), count >= 0, count <= 100_000 else { return nil }
        let seconds: Double? = switch unit {
        case "h": 3600
        case "d": 86400
        case "w": 7 * 86400
        case "m": 30 * 86400
        case "y": 365 * 86400
        default: nil
        }
        return seconds.map { Double(count) * $0 }
    }

    static func date(_ text: String) -> Date? {
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let day = DateFormatter()
        day.locale = Locale(identifier: "en_US_POSIX")
        day.timeZone = TimeZone(identifier: "UTC")
        day.dateFormat = "yyyy-MM-dd"
        return text.count == 10 ? day.date(from: text) : nil
    }
}
