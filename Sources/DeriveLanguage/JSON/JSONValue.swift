/// A JSON document as written, with numbers kept as their lexeme and object members in order.
///
/// Derive parses JSON itself rather than through `JSONSerialization` so that it can tell `1` from
/// `1.0` (pixels versus a fraction of the source), refuse duplicate keys, bound nesting depth on
/// hostile input, and report positions; and writes it itself so the canonical form that gets
/// hashed is byte-for-byte stable on every platform.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    public static func int(_ value: Int) -> JSONValue { .number(JSONNumber(text: String(value))) }

    /// A decimal number normalised to at most six decimal places (see `Decimal6`).
    public static func decimal(_ value: Double) -> JSONValue { .number(JSONNumber(text: Decimal6.string(value))) }

    /// An object from members in the given order (the canonical writer sorts them).
    public static func object(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(pairs.map { JSONMember(key: $0.key, value: $0.value) })
    }

    /// Short name of the JSON type, for error messages ("got string \"abc\"").
    public var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool(let b): "boolean \(b)"
        case .number(let n): "number \(n.text)"
        case .string(let s): "string \(Quoted(s, limit: 40))"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }
}

public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue
    public init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// A JSON number as it was written. `isInteger` is true only for lexemes without a fraction or
/// exponent, which is how the language tells pixels (`200`) from fractions (`0.5`, `1.0`).
public struct JSONNumber: Sendable, Equatable {
    public let text: String
    public init(text: String) { self.text = text }

    public var isInteger: Bool { !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) }
    public var intValue: Int? { isInteger ? Int(text) : nil }
    public var doubleValue: Double { Double(text) ?? .nan }
}

/// Quotes a user-supplied string for an error message, shortening long ones.
public struct Quoted: CustomStringConvertible, Sendable {
    public let text: String
    public init(_ text: String, limit: Int = 60) {
        if text.count > limit {
            self.text = String(text.prefix(limit)) + "…"
        } else {
            self.text = text
        }
    }
    /// Spelled as a JSON string, so control characters and quotes are visible and unambiguous.
    public var description: String { JSONWriter.compact(.string(text)) }
}

/// Fixed-point decimal formatting with six places, trailing zeros removed. Every non-integer
/// number in the canonical model is quantised to this grid at parse time, so the canonical text
/// and the value the planner computes with are the same number.
public enum Decimal6 {
    public static let scale = 1_000_000.0

    public static func quantize(_ value: Double) -> Double {
        guard value.isFinite else { return value }
        return (value * scale).rounded() / scale
    }

    /// `0.5` → "0.5", `2` → "2", `-1.25` → "-1.25", `1.0/3` → "0.333333".
    public static func string(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 9.0e12 else { return "0" }
        let micros = Int64((value * scale).rounded())
        let negative = micros < 0
        let magnitude = negative ? -micros : micros
        let whole = magnitude / 1_000_000
        var fraction = String(magnitude % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let sign = negative && magnitude != 0 ? "-" : ""
        return fraction.isEmpty ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
    }
}
