import DeriveLanguage
import Foundation

/// A value bound to a statement or read from a row, in either store. SQLite hands over its
/// storage classes as they are; PostgreSQL's text protocol gives text, which the readers below
/// parse, so both stores read one way.
public enum DatabaseValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    public var int: Int? {
        if case .integer(let value) = self { return Int(value) }
        return nil
    }

    public var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }

    public var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// As PostgreSQL's text protocol takes a parameter (nil for NULL).
    public var text: String? {
        switch self {
        case .null: nil
        case .integer(let value): String(value)
        case .real(let value): "\(value)"
        case .text(let value): value
        }
    }
}

extension DatabaseValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: Int64) { self = .integer(value) }
    public init(_ value: Double) { self = .real(value) }
    public init(_ value: String?) { self = value.map(DatabaseValue.text) ?? .null }
    public init(_ value: Bool) { self = .integer(value ? 1 : 0) }
    /// Unix seconds, as both stores' queries exchange times.
    public init(_ date: Date) { self = .real(date.timeIntervalSince1970) }
}

/// One result row, read by column name: the row layer both stores share. A missing column, a
/// NULL where a value is required, or a value of the wrong kind is the same `internal_error` in
/// PostgreSQL and SQLite (never a default standing in for it: a missing `run_at` is not 1970).
public struct DatabaseRow: Sendable {
    /// What the row came from (`jobs`, `a claim`), for messages.
    public let source: String
    private let index: [String: Int]
    private let values: [DatabaseValue]

    /// Column names to positions, built once per result and shared by its rows (a claim or a
    /// page returns dozens of rows with the same columns).
    public struct Columns: Sendable {
        let positions: [String: Int]

        public init(_ names: [String]) {
            var positions: [String: Int] = [:]
            for (position, name) in names.enumerated() where positions[name] == nil { positions[name] = position }
            self.positions = positions
        }
    }

    public init(columns: Columns, values: [DatabaseValue], source: String) {
        self.source = source
        self.values = values
        index = columns.positions
    }

    public init(columns: [String], values: [DatabaseValue], source: String) {
        self.init(columns: Columns(columns), values: values, source: source)
    }

    /// The raw value of `column`; a column the query did not return is an error.
    public func value(_ column: String) throws(DeriveError) -> DatabaseValue {
        guard let position = index[column], position < values.count else {
            throw DeriveError(.internalError, "\(source) has no column \(Quoted(column))", retryable: false)
        }
        return values[position]
    }

    public func isNull(_ column: String) throws(DeriveError) -> Bool {
        try value(column) == .null
    }

    private func bad(_ column: String, _ expected: String, _ found: DatabaseValue) -> DeriveError {
        let description = switch found {
        case .null: "NULL"
        case .integer(let value): "the integer \(value)"
        case .real(let value): "the number \(value)"
        case .text(let value): "the text \(Quoted(value, limit: 40))"
        }
        return DeriveError(.internalError, "\(source).\(column) is not \(expected): \(description)", retryable: false)
    }

    public func string(_ column: String) throws(DeriveError) -> String {
        let found = try value(column)
        guard case .text(let text) = found else { throw bad(column, "text", found) }
        return text
    }

    public func optionalString(_ column: String) throws(DeriveError) -> String? {
        try isNull(column) ? nil : try string(column)
    }

    public func int64(_ column: String) throws(DeriveError) -> Int64 {
        let found = try value(column)
        switch found {
        case .integer(let value): return value
        case .text(let text): if let value = Int64(text) { return value }
        default: break
        }
        throw bad(column, "an integer", found)
    }

    public func int(_ column: String) throws(DeriveError) -> Int {
        Int(try int64(column))
    }

    public func optionalInt(_ column: String) throws(DeriveError) -> Int? {
        try isNull(column) ? nil : try int(column)
    }

    public func double(_ column: String) throws(DeriveError) -> Double {
        let found = try value(column)
        switch found {
        case .integer(let value): return Double(value)
        case .real(let value): return value
        case .text(let text): if let value = Double(text) { return value }
        case .null: break
        }
        throw bad(column, "a number", found)
    }

    /// PostgreSQL's `t` and `f`, SQLite's 1 and 0.
    public func bool(_ column: String) throws(DeriveError) -> Bool {
        let found = try value(column)
        switch found {
        case .integer(0), .text("f"), .text("false"): return false
        case .integer(1), .text("t"), .text("true"): return true
        default: throw bad(column, "a boolean", found)
        }
    }

    /// Unix seconds, as both stores' queries return times.
    public func date(_ column: String) throws(DeriveError) -> Date {
        Date(timeIntervalSince1970: try double(column))
    }

    public func optionalDate(_ column: String) throws(DeriveError) -> Date? {
        try isNull(column) ? nil : try date(column)
    }

    public func json(_ column: String) throws(DeriveError) -> JSONValue {
        let text = try string(column)
        do {
            return try JSONParser().parse(text)
        } catch {
            throw bad(column, "JSON (\(error))", .text(text))
        }
    }

    public func optionalJSON(_ column: String) throws(DeriveError) -> JSONValue? {
        try isNull(column) ? nil : try json(column)
    }

    /// A value of a string enum (`JobState`, an outcome).
    public func value<Value: RawRepresentable>(_ column: String, as _: Value.Type) throws(DeriveError) -> Value where Value.RawValue == String {
        let text = try string(column)
        guard let value = Value(rawValue: text) else { throw bad(column, "a \(Value.self)", .text(text)) }
        return value
    }
}
