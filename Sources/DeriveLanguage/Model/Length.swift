/// A length in a step: whole pixels, a fraction of the image the step receives, or an
/// expression of the source's and the image's sizes.
///
/// The spelling decides which: `200` is pixels, `0.5` and `1.0` are fractions (as in
/// Cloudinary, where a decimal point means "relative"), `iw_div_2` is an expression. Fractions
/// are quantised to six decimal places when parsed so that the canonical text and the computed
/// value agree exactly. An expression stays one in the model and the canonical form; the
/// planner evaluates it to pixels before any geometry is done.
public enum Length: Sendable, Hashable {
    case pixels(Int)
    case fraction(Double)
    case expression(ArithmeticExpression)

    /// A fraction of an image's length (`0.5`), as opposed to pixels or an expression.
    public var isFraction: Bool {
        if case .fraction = self { return true }
        return false
    }

    /// Resolves against the length of the image the step receives.
    public func resolve(against length: Int) -> Double {
        switch self {
        case .pixels(let n): Double(n)
        case .fraction(let f): f * Double(length)
        case .expression: Length.unevaluated()
        }
    }

    /// Geometry sees pixels and fractions only: the planner evaluates every expression of a
    /// step before it lays the step out (`Step.evaluatingExpressions`), and the engine receives
    /// planned operations. Reaching geometry with an expression is a bug in that order.
    static func unevaluated() -> Never {
        preconditionFailure("an expression reached geometry unevaluated; the planner evaluates expressions first")
    }

    /// Cloudinary spelling: `200`, `0.5`, `1.0`, `-10`.
    public var cloudinaryText: String {
        switch self {
        case .pixels(let n): return String(n)
        case .fraction(let f):
            let text = Decimal6.string(f)
            return text.contains(".") ? text : text + ".0"
        case .expression(let e): return e.canonicalText
        }
    }

    /// JSON spelling: an integer for pixels; a number for a non-integral fraction; a percentage
    /// string ("200%") for a whole-number fraction, which a JSON number could not distinguish.
    public var json: JSONValue {
        switch self {
        case .pixels(let n): .int(n)
        case .fraction(let f):
            Decimal6.string(f).contains(".") ? .decimal(f) : .string(Decimal6.string(f * 100) + "%")
        case .expression(let e): .string(e.canonicalText)
        }
    }

    /// Parses the Cloudinary value syntax: digits are pixels; a decimal point makes a fraction.
    static func parseCloudinary(_ text: String) -> Length? {
        guard !text.isEmpty, text.count <= 24 else { return nil }
        let body = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              body.filter({ $0 == "." }).count <= 1, body.first != ".", body.last != "." else { return nil }
        if text.contains(".") {
            guard let value = Double(text), value.isFinite else { return nil }
            return .fraction(Decimal6.quantize(value))
        }
        guard let value = Int(text) else { return nil }
        return .pixels(value)
    }

    /// Parses a percentage string such as "50%" or "200%".
    static func parsePercent(_ text: String) -> Length? {
        guard text.hasSuffix("%"), text.count <= 24 else { return nil }
        let number = text.dropLast()
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }),
              let value = Double(number), value.isFinite else { return nil }
        return .fraction(Decimal6.quantize(value / 100))
    }
}
