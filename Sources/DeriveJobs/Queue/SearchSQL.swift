import Foundation

/// A search expression as a `WHERE` condition over `served_assets`, in PostgreSQL's or
/// SQLite's dialect, with its parameters bound by number (never spliced into the text). The
/// memory queue evaluates the same tree (`SearchExpression.matches`); the conformance tests
/// hold the three to one answer.
public struct SearchSQL {
    public enum Dialect: Sendable { case postgres, sqlite }

    public enum Parameter: Sendable, Equatable {
        case text(String)
        case number(Double)
    }

    public let dialect: Dialect
    /// Parameters already bound before this condition's (its first is number `offset + 1`).
    let offset: Int
    public private(set) var parameters: [Parameter] = []

    /// The condition and its parameters, numbered from `offset + 1`.
    public static func compile(_ expression: SearchExpression, dialect: Dialect, offset: Int) -> (sql: String, parameters: [Parameter]) {
        var compiler = SearchSQL(dialect: dialect, offset: offset)
        let sql = compiler.condition(expression)
        return (sql, compiler.parameters)
    }

    init(dialect: Dialect, offset: Int) {
        self.dialect = dialect
        self.offset = offset
    }

    mutating func bind(_ parameter: Parameter) -> String {
        parameters.append(parameter)
        let number = offset + parameters.count
        switch (dialect, parameter) {
        case (.postgres, .text): return "$\(number)::text"
        case (.postgres, .number): return "$\(number)::double precision"
        case (.sqlite, _): return "?\(number)"
        }
    }

    mutating func condition(_ expression: SearchExpression) -> String {
        switch expression {
        case .all(let parts): return parts.isEmpty ? "TRUE" : "(" + parts.map { condition($0) }.joined(separator: " AND ") + ")"
        case .any(let parts): return parts.isEmpty ? "FALSE" : "(" + parts.map { condition($0) }.joined(separator: " OR ") + ")"
        case .not(let part): return "(NOT \(condition(part)))"
        case .term(let term): return condition(term)
        }
    }

    mutating func condition(_ term: SearchTerm) -> String {
        switch term.field {
        case .publicID: return text("public_id", term.condition)
        case .filename: return text(filename, term.condition)
        case .folder: return text(folder, term.condition)
        case .format: return text("format", term.condition)
        case .resourceType: return term.matches(text: "image") ? "TRUE" : "FALSE"
        case .type: return term.matches(text: "upload") ? "TRUE" : "FALSE"
        case .tags: return tags(term.condition)
        case .context(let key): return context(key, term.condition)
        case .anyText:
            return "(\(text("public_id", term.condition)) OR \(text(filename, term.condition)) OR \(tags(term.condition)))"
        case .bytes: return number("bytes", term.condition)
        case .width: return number("width", term.condition)
        case .height: return number("height", term.condition)
        case .pixels: return number(dialect == .postgres ? "(width::bigint * height)" : "(width * height)", term.condition)
        // PostgreSQL compares the column itself (its index), with the seconds made a time.
        case .createdAt: return number("created_at", term.condition, value: dialect == .postgres ? { "to_timestamp(\($0))" } : { $0 })
        }
    }

    /// The public id's last segment and its folder ("" at the root).
    var filename: String {
        switch dialect {
        case .postgres: "regexp_replace(public_id, '^.*/', '')"
        // SQLite has no "last index of": rtrim with every character but '/' leaves the folder and its slash.
        case .sqlite: "substr(public_id, length(rtrim(public_id, replace(public_id, '/', ''))) + 1)"
        }
    }

    var folder: String {
        switch dialect {
        case .postgres: "regexp_replace(public_id, '/?[^/]*$', '')"
        case .sqlite: "substr(public_id, 1, max(length(rtrim(public_id, replace(public_id, '/', ''))) - 1, 0))"
        }
    }

    mutating func startsWith(_ column: String, _ prefix: String) -> String {
        let value = bind(.text(prefix))
        return switch dialect {
        case .postgres: "starts_with(\(column), \(value))"
        case .sqlite: "substr(\(column), 1, length(\(value))) = \(value)"
        }
    }

    mutating func text(_ column: String, _ condition: SearchTerm.Condition) -> String {
        switch condition {
        case .equals(let value): return "\(column) = \(bind(.text(value)))"
        case .prefix(let prefix): return startsWith(column, prefix)
        case .present: return "TRUE"
        case .compare, .range: return "FALSE"
        }
    }

    mutating func tags(_ condition: SearchTerm.Condition) -> String {
        switch (dialect, condition) {
        case (.postgres, .equals(let tag)): return "tags @> jsonb_build_array(\(bind(.text(tag))))"
        case (.sqlite, .equals(let tag)): return "EXISTS (SELECT 1 FROM json_each(served_assets.tags) WHERE value = \(bind(.text(tag))))"
        case (.postgres, .prefix(let prefix)):
            return "EXISTS (SELECT 1 FROM jsonb_array_elements_text(tags) tag WHERE \(startsWith("tag", prefix)))"
        case (.sqlite, .prefix(let prefix)):
            return "EXISTS (SELECT 1 FROM json_each(served_assets.tags) WHERE \(startsWith("value", prefix)))"
        case (.postgres, .present): return "jsonb_array_length(tags) > 0"
        case (.sqlite, .present): return "json_array_length(tags) > 0"
        case (_, .compare), (_, .range): return "FALSE"
        }
    }

    mutating func context(_ key: String, _ condition: SearchTerm.Condition) -> String {
        switch (dialect, condition) {
        case (.postgres, .equals(let value)): return "context @> jsonb_build_object(\(bind(.text(key))), \(bind(.text(value))))"
        case (.postgres, .prefix(let prefix)):
            let key = bind(.text(key))
            return startsWith("(context ->> \(key))", prefix)
        case (.postgres, .present): return "context ? \(bind(.text(key)))"
        case (.sqlite, .equals(let value)):
            return "EXISTS (SELECT 1 FROM json_each(served_assets.context) WHERE key = \(bind(.text(key))) AND value = \(bind(.text(value))))"
        case (.sqlite, .prefix(let prefix)):
            let key = bind(.text(key))
            return "EXISTS (SELECT 1 FROM json_each(served_assets.context) WHERE key = \(key) AND \(startsWith("value", prefix)))"
        case (.sqlite, .present): return "EXISTS (SELECT 1 FROM json_each(served_assets.context) WHERE key = \(bind(.text(key))))"
        case (_, .compare), (_, .range): return "FALSE"
        }
    }

    mutating func number(_ column: String, _ condition: SearchTerm.Condition, value wrap: (String) -> String = { $0 }) -> String {
        switch condition {
        case .compare(let comparison, let value): return "\(column) \(comparison.rawValue) \(wrap(bind(.number(value))))"
        case .range(let low, let high, let inclusive):
            let (a, b) = (wrap(bind(.number(low))), wrap(bind(.number(high))))
            return inclusive ? "(\(column) >= \(a) AND \(column) <= \(b))" : "(\(column) > \(a) AND \(column) < \(b))"
        case .present: return "TRUE"
        case .equals, .prefix: return "FALSE"
        }
    }
}
