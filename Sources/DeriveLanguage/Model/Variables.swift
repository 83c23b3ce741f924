/// `$name_<value>`: a user-defined variable set for the rest of the chain. The model keeps what
/// was assigned (an expression, not its value), so the canonical form says what was asked; the
/// planner evaluates the expression where the assignment stands (`$half_w_div_2` takes the
/// width of the image at that point) and uses the number wherever `$half` is named later.
public struct VariableAssignment: Sendable, Hashable {
    public var name: String
    public var value: VariableValue
    /// Set by a named transformation (`t_`): a default that an earlier assignment of the same
    /// name by the chain using it overrides, as Cloudinary lets a caller do.
    public var isDefault: Bool

    public init(name: String, value: VariableValue, isDefault: Bool = false) {
        self.name = name
        self.value = value
        self.isDefault = isDefault
    }

    /// Cloudinary's rule: a letter, then letters and digits (no `_`, which separates values).
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter, name.count <= 64 else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
    }
}

/// What a variable holds: a number (an expression of numbers, predefined values and other
/// variables) or a text (`!Arial_12!`, a name, a list `!a:b:c!` for `in`).
public enum VariableValue: Sendable, Hashable {
    case number(ArithmeticExpression)
    case text(String)
    /// A value of the asset (`$kind_ctx:!productType!`, `$x_ctx:!x_pos!_to_f`).
    case asset(AssetRead)
    /// `$logo_ref:!brand:logo!`: a reference to another asset, by its public id (`/` between
    /// folders, written `:` in strings), which `l_$logo` and `u_$logo` use as the layer.
    case reference(String)
    /// `$img_current`: the image as it is where the assignment stands, which a later `l_$img`
    /// or `u_$img` draws as a layer (Cloudinary's image variables).
    case currentImage

    /// Cloudinary spelling: `iw_div_2`, `!text!`.
    public var cloudinaryText: String {
        switch self {
        case .number(let e): e.canonicalText
        case .text(let t): "!\(t)!"
        case .asset(let a): a.canonicalText
        case .reference(let id): "ref:!\(id.replacingOccurrences(of: "/", with: ":"))!"
        case .currentImage: "current"
        }
    }

    /// The public id of `ref:!<id>!` (`:` between folders becomes `/`); nil for any other text.
    /// An id is what `l_` takes: letters, digits, `_ - .` and folders.
    public static func reference(_ text: String) -> String? {
        guard text.hasPrefix("ref:!"), text.hasSuffix("!"), text.count > 6 else { return nil }
        let id = text.dropFirst(5).dropLast().replacingOccurrences(of: ":", with: "/")
        guard id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-./".contains($0)) }),
              !id.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) else { return nil }
        return id
    }
}

/// A variable's value where the planner has evaluated it.
public enum VariableBinding: Sendable, Hashable, CustomStringConvertible {
    case number(Double)
    case text(String)

    public var description: String {
        switch self {
        case .number(let n): Decimal6.string(n)
        case .text(let t): t
        }
    }
}
