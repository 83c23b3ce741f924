/// `if_<condition>` … `[if_else` … `]if_end`: steps applied only when a condition holds on the
/// image they would receive. The model keeps the condition, not its outcome, so one canonical
/// output takes different branches on different sources; the planner decides the branch from
/// the source's header facts and `derive explain` shows which it took.
public struct Conditional: Sendable, Hashable {
    public var condition: Condition
    public var then: [Step]
    public var otherwise: [Step]

    public init(condition: Condition, then: [Step], otherwise: [Step] = []) {
        self.condition = condition
        self.then = then
        self.otherwise = otherwise
    }

    /// Blocks inside blocks, at most this deep: deeper is no transformation anyone writes, and
    /// the bound keeps parsing and planning linear.
    public static let maxDepth = 4
}

extension Array where Element == Step {
    /// Steps counted for `ChainLimits.maxChainLength`: a conditional's branches count with
    /// the chain they are in (an overlay's chain counts separately), so nesting cannot
    /// multiply the work a chain asks for.
    public var length: Int {
        reduce(0) { total, step in
            if case .conditional(let c) = step { return total + 1 + c.then.length + c.otherwise.length }
            return total + 1
        }
    }
}

/// A condition: comparisons joined by `and` and `or` (`and` binding tighter, as Cloudinary
/// evaluates them; there are no parentheses).
public indirect enum Condition: Sendable, Hashable {
    case compare(ConditionOperand, ComparisonOperator, ConditionOperand)
    case and(Condition, Condition)
    case or(Condition, Condition)

    /// Cloudinary's URL spelling with short names and word operators (`w_gt_200_and_ar_lt_1`).
    public var canonicalText: String {
        switch self {
        case .compare(let left, let op, let right): "\(left.canonicalText)_\(op.rawValue)_\(right.canonicalText)"
        case .and(let a, let b): "\(a.canonicalText)_and_\(b.canonicalText)"
        case .or(let a, let b): "\(a.canonicalText)_or_\(b.canonicalText)"
        }
    }

    /// Whether the condition reads the asset's tags or context.
    public var readsAsset: Bool {
        switch self {
        case .compare(let left, _, let right):
            if case .asset = left { return true }
            if case .asset = right { return true }
            return false
        case .and(let a, let b), .or(let a, let b): return a.readsAsset || b.readsAsset
        }
    }

    /// Every expression the condition compares, in order.
    public var expressions: [ArithmeticExpression] {
        switch self {
        case .compare(let left, _, let right): [left, right].compactMap(\.expression)
        case .and(let a, let b), .or(let a, let b): a.expressions + b.expressions
        }
    }

    /// The condition with `transform` applied to every expression it compares.
    public func mappingExpressions(_ transform: (ArithmeticExpression) -> ArithmeticExpression) -> Condition {
        switch self {
        case .compare(let left, let op, let right): .compare(left.mapping(transform), op, right.mapping(transform))
        case .and(let a, let b): .and(a.mappingExpressions(transform), b.mappingExpressions(transform))
        case .or(let a, let b): .or(a.mappingExpressions(transform), b.mappingExpressions(transform))
        }
    }
}

/// One side of a comparison: a number (an expression, possibly a lone `$variable`, which may
/// hold a text) or a text (`!sale!`, `!a:b:c!` as a list for `in` and `nin`).
public enum ConditionOperand: Sendable, Hashable {
    case expression(ArithmeticExpression)
    case text(String)
    /// A value of the asset: `tags`, `ctx:!key!`, `md:!key!` (`AssetFacts`).
    case asset(AssetRead)

    public var canonicalText: String {
        switch self {
        case .expression(let e): e.canonicalText
        case .text(let t): "!\(t)!"
        case .asset(let a): a.canonicalText
        }
    }

    var expression: ArithmeticExpression? {
        if case .expression(let e) = self { return e }
        return nil
    }

    func mapping(_ transform: (ArithmeticExpression) -> ArithmeticExpression) -> ConditionOperand {
        switch self {
        case .expression(let e): .expression(transform(e))
        case .text, .asset: self
        }
    }
}

/// Cloudinary's comparison operators, with the symbols its SDKs also accept.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case eq, ne, lt, gt, lte, gte
    /// `in` / `nin`: whether the left side is one of the `:`-separated items of the right.
    case inList = "in", notInList = "nin"

    public var symbol: String? {
        switch self {
        case .eq: "="
        case .ne: "!="
        case .lt: "<"
        case .gt: ">"
        case .lte: "<="
        case .gte: ">="
        case .inList, .notInList: nil
        }
    }

    static func parse(_ word: String) -> ComparisonOperator? {
        ComparisonOperator(rawValue: word) ?? allCases.first { $0.symbol == word } ?? (word == "==" ? .eq : nil)
    }
}
