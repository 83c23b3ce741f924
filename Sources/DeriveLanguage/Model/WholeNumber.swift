/// A whole number where Cloudinary takes one and Derive evaluates expressions too: the opacity
/// of `o_50` and the radii of `r_20:40`, or `o_w_div_10` and `r_h_div_4`. Like a `Length`, an
/// expression stays one in the model and the canonical form, and the planner evaluates it on
/// each source (rounded to the nearest whole number) before the step is checked and laid out.
public enum WholeNumber: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    case value(Int)
    case expression(ArithmeticExpression)

    public init(integerLiteral value: Int) { self = .value(value) }

    /// Cloudinary spelling: `50`, `w_div_10`.
    public var cloudinaryText: String {
        switch self {
        case .value(let n): String(n)
        case .expression(let e): e.canonicalText
        }
    }

    public var description: String { cloudinaryText }

    /// JSON: an integer, or the expression's canonical text.
    public var json: JSONValue {
        switch self {
        case .value(let n): .int(n)
        case .expression(let e): .string(e.canonicalText)
        }
    }

    /// The number of a planned step. The planner evaluates every expression before a step is
    /// laid out or handed to the engine; reaching here with one is a bug in that order.
    public var planned: Int {
        guard case .value(let n) = self else {
            preconditionFailure("an expression reached the engine unevaluated; the planner evaluates expressions first")
        }
        return n
    }
}
