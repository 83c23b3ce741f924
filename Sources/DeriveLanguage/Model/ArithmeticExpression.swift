import Foundation

/// An arithmetic expression where Cloudinary takes a number (`w_iw_div_2`): numbers and values
/// Derive knows from a source's header, joined by operators. The model keeps the expression,
/// not its value, so the canonical form says what was asked (two spellings of one expression
/// are one canonical text; another expression is another, even when it gives the same number
/// on some source) and the planner evaluates it on each source.
public indirect enum ArithmeticExpression: Sendable, Hashable {
    case number(Double)
    case value(PredefinedValue)
    /// A user-defined variable (`$name`), whose value the planner knows from an earlier
    /// assignment in the chain.
    case variable(String)
    case operation(ArithmeticOperator, ArithmeticExpression, ArithmeticExpression)

    /// Cloudinary's URL spelling with short names and word operators (`iw_mul_2_add_ih_mul_2`).
    /// Expressions have no parentheses, so the tree prints back to the sequence it was read from.
    public var canonicalText: String {
        switch self {
        case .number(let n): Decimal6.string(n)
        case .value(let v): v.rawValue
        case .variable(let name): "$" + name
        case .operation(let op, let left, let right): "\(left.canonicalText)_\(op.rawValue)_\(right.canonicalText)"
        }
    }

    /// The predefined values the expression names, in order of appearance.
    public var values: [PredefinedValue] {
        switch self {
        case .number, .variable: []
        case .value(let v): [v]
        case .operation(_, let left, let right): left.values + right.values
        }
    }

    /// The user-defined variables the expression names, in order of appearance.
    public var variables: [String] {
        switch self {
        case .number, .value: []
        case .variable(let name): [name]
        case .operation(_, let left, let right): left.variables + right.variables
        }
    }

    /// The expression with known values written in as numbers: the planner fixes the source's
    /// values (`iw`, `pc`) of steps that run after a content-dependent size is known.
    public func substituting(_ known: (PredefinedValue) -> Double?) -> ArithmeticExpression {
        switch self {
        case .number, .variable: self
        case .value(let v): known(v).map(ArithmeticExpression.number) ?? self
        case .operation(let op, let left, let right): .operation(op, left.substituting(known), right.substituting(known))
        }
    }

    /// Why an expression has no value on a source.
    public enum EvaluationFailure: Error, Sendable, Hashable, CustomStringConvertible {
        /// `div_0` or `mod_0`; the text is the operation at fault.
        case divisionByZero(String)
        /// Too large, or not a number (`pow` of a negative number to a fraction).
        case notFinite(String)
        /// A value the caller could not give (the current size after a trim, before it runs).
        case unknownValue(PredefinedValue)
        /// A variable no earlier step assigned.
        case unsetVariable(String)
        /// A variable that holds a text (`$name_!text!`) where a number is needed.
        case textVariable(String)
        /// An image variable (`$img_current`), which only a layer draws, where a number is needed.
        case imageVariable(String)

        public var description: String {
            switch self {
            case .divisionByZero(let text): "unknown to Cloudinary (\(text) divides by zero on this source)"
            case .notFinite(let text): "unknown to Cloudinary (\(text) has no finite value on this source)"
            case .unknownValue(let v): "known to Cloudinary, not supported by Derive: \(v.rawValue) is not known at this point"
            case .unsetVariable(let name): "unknown to Cloudinary (no variable $\(name) is set before it is used; assign it first: $\(name)_<value>)"
            case .textVariable(let name): "unknown to Cloudinary ($\(name) holds a text where a number goes)"
            case .imageVariable(let name): "unknown to Cloudinary ($\(name) holds an image, $\(name)_current, which only a layer draws: l_$\(name))"
            }
        }
    }

    /// The value, with `facts` answering for the predefined values and `variables` for the
    /// user-defined ones.
    public func evaluate(_ facts: (PredefinedValue) -> Double?,
                         variables: (String) -> Result<Double, EvaluationFailure> = { .failure(.unsetVariable($0)) }) -> Result<Double, EvaluationFailure> {
        switch self {
        case .number(let n):
            return .success(n)
        case .value(let v):
            guard let value = facts(v) else { return .failure(.unknownValue(v)) }
            return .success(value)
        case .variable(let name):
            return variables(name)
        case .operation(let op, let leftExpression, let rightExpression):
            let left: Double, right: Double
            switch leftExpression.evaluate(facts, variables: variables) {
            case .success(let value): left = value
            case .failure(let failure): return .failure(failure)
            }
            switch rightExpression.evaluate(facts, variables: variables) {
            case .success(let value): right = value
            case .failure(let failure): return .failure(failure)
            }
            if (op == .div || op == .mod) && right == 0 { return .failure(.divisionByZero(canonicalText)) }
            let result = op.apply(left, right)
            return result.isFinite ? .success(result) : .failure(.notFinite(canonicalText))
        }
    }
}

/// Cloudinary's arithmetic operators. Multiplication, division and modulo bind tighter than
/// addition and subtraction, as Cloudinary documents; `pow` binds tightest and groups to the
/// right, as in mathematics.
public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
    case add, sub, mul, div, mod, pow

    /// The symbol Cloudinary's SDKs write (`iw / 2`), accepted in the same places.
    public var symbol: String {
        switch self {
        case .add: "+"
        case .sub: "-"
        case .mul: "*"
        case .div: "/"
        case .mod: "%"
        case .pow: "^"
        }
    }

    var precedence: Int {
        switch self {
        case .add, .sub: 1
        case .mul, .div, .mod: 2
        case .pow: 3
        }
    }

    var isRightAssociative: Bool { self == .pow }

    func apply(_ a: Double, _ b: Double) -> Double {
        switch self {
        case .add: a + b
        case .sub: a - b
        case .mul: a * b
        case .div: a / b
        case .mod: a.truncatingRemainder(dividingBy: b)
        case .pow: Foundation.pow(a, b)
        }
    }
}

/// The values of Cloudinary's expressions that Derive knows: before decoding, the source's size
/// as decoded (after EXIF orientation) and the size of the image a step receives, with their
/// aspect ratios, and the page; once faces are found, their number.
public enum PredefinedValue: String, Sendable, Hashable, CaseIterable {
    case initialWidth = "iw"
    case initialHeight = "ih"
    case initialAspectRatio = "iar"
    case width = "w"
    case height = "h"
    case aspectRatio = "ar"
    case currentPage = "cp"
    case pageCount = "pc"
    /// The faces the detector finds in the job's image. The planner cannot know it from the
    /// header: steps that name it are planned by the engine once faces are found.
    case faceCount = "fc"
    /// How much the job's image looks like an illustration rather than a photograph, 0 to 1
    /// (`IllustrationScore`): the engine measures it on the decoded source, so steps that name
    /// it are planned by the engine, as for `fc`.
    case illustrationScore = "ils"

    /// The names Cloudinary and its SDKs use besides the short one (`initial_width`,
    /// `initialWidth`), and the `current_*` forms of the current values.
    public var longNames: [String] {
        switch self {
        case .initialWidth: ["initial_width", "initialWidth"]
        case .initialHeight: ["initial_height", "initialHeight"]
        case .initialAspectRatio: ["initial_aspect_ratio", "initialAspectRatio"]
        case .width: ["width", "current_width", "currentWidth"]
        case .height: ["height", "current_height", "currentHeight"]
        case .aspectRatio: ["aspect_ratio", "aspectRatio", "current_aspect_ratio", "currentAspectRatio"]
        case .currentPage: ["current_page", "currentPage"]
        case .pageCount: ["page_count", "pageCount"]
        case .faceCount: ["face_count", "faceCount", "faces"]
        case .illustrationScore: ["illustration_score", "illustrationScore"]
        }
    }

    /// Values fixed by the source (the same at every step), as opposed to the current image's.
    public var isSourceFact: Bool { ![.width, .height, .aspectRatio].contains(self) }
}
