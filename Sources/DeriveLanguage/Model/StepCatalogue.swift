/// The step catalogue (issue 41): each effect declared once, as data — its Cloudinary name, its
/// parameters in order with their JSON keys, types, ranges and defaults (with where Cloudinary
/// documents the default), and a sentence of documentation. The rules tables, the vocabulary's
/// list, the JSON Schema, the steps table of Docs/language.md and the chain generator of the
/// tests read it; a new effect (`Form.declared`) is also parsed, printed, decoded and encoded
/// from it alone. Irregular effects keep hand-written code in the parsers and printers, behind
/// the same declaration.
public struct EffectDeclaration: Sendable {
    /// Cloudinary's name (`oil_paint`), which is also the JSON key of the step.
    public let name: String
    /// The parameters in the order a Cloudinary string writes them.
    public let parameters: [ParameterDeclaration]
    /// One sentence: what the effect does to the image.
    public let documentation: String
    /// How its string form separates the parameters: `:` between values (`e_noise:30`), or `;`
    /// between `key_value` pairs (`e_dropshadow:azimuth_20;spread_30`).
    public let syntax: Syntax
    /// Whether the effect changes each pixel on its own (so a resize may move past it).
    public let pointwise: Bool
    /// Whether the engine must find faces first.
    public let needsFaces: Bool
    /// The amount at which the effect leaves the image as it is, so the normaliser drops it.
    public let neutral: Int?

    public enum Syntax: Sendable { case positional, named }

    /// Which code reads and writes the effect's string and JSON forms.
    public enum Form: Sendable {
        /// The catalogue alone: a `DeclaredEffect`, parsed, printed, decoded, encoded and
        /// checked from the declaration (`StepCatalogue+Forms.swift`).
        case declared
        /// A case of the model's `Effect` with hand-written forms in the parsers and printers
        /// (beyond its parameters: a gradient, a region, a second spelling) and JSON Schema.
        case irregular
    }

    public var form: Form { Effect.Kind(rawValue: name) == nil ? .declared : .irregular }

    init(_ name: String, _ parameters: [ParameterDeclaration] = [], syntax: Syntax = .positional, pointwise: Bool = false,
         needsFaces: Bool = false, neutral: Int? = nil, _ documentation: String) {
        self.name = name
        self.parameters = parameters
        self.documentation = documentation
        self.syntax = syntax
        self.pointwise = pointwise
        self.needsFaces = needsFaces
        self.neutral = neutral
    }

    /// The effect's one number, if it has one (`e_blur:300`, `{"blur": 300}`).
    public var amount: ParameterDeclaration? { parameters.first(where: \.isAmount) }
    /// The parameter JSON may give alone, without an object: the amount (`{"blur": 300}`), or
    /// the one choice of an effect that has nothing else (`{"art": "zorro"}`).
    public var shortForm: ParameterDeclaration? {
        if let amount { return amount }
        if parameters.count == 1, case .choice = parameters[0].type { return parameters[0] }
        return nil
    }
    public func parameter(_ key: String) -> ParameterDeclaration? { parameters.first { $0.key == key } }
}

/// One parameter of a declared step.
public struct ParameterDeclaration: Sendable {
    public enum ParameterType: Sendable, Equatable {
        /// A whole number in `range`; an arithmetic expression may stand for it when `expressions`.
        case number(ClosedRange<Int>, expressions: Bool)
        /// A colour, written beside the effect as `co_<colour>`.
        case color
        /// One word of a list.
        case choice([String])
    }

    /// The JSON key, and the key of a `named` effect's `key_value` pair.
    public let key: String
    public let type: ParameterType
    public let defaultValue: ParameterValue?
    /// Where the default comes from: the line of Cloudinary's documentation, or "Derive's".
    public let defaultSource: String
    /// The range's upper end is Derive's (Cloudinary documents none, or a larger one).
    public let derivesLimits: Bool
    /// The effect's amount: written first, and alone in JSON's short form.
    public let isAmount: Bool
    /// A choice's name in messages (`art filter`), when not `e_<effect> <key>`.
    var called: String? = nil
    /// A number that a string may write with decimals (Cloudinary's SDKs write `e_shear:20.0`),
    /// read as the nearest whole one, with a note naming this unit.
    var rounds: String? = nil
    /// A string writes it even at its default, as it always has (`e_shear:0:0`, `e_colorize,co_gray`).
    var alwaysWritten = false

    /// The effect's one number.
    static func amount(_ key: String, _ range: ClosedRange<Int>, default value: Int, _ source: String = "",
                       derivesLimits: Bool = false) -> ParameterDeclaration {
        ParameterDeclaration(key: key, type: .number(range, expressions: true), defaultValue: .number(.value(value)),
                             defaultSource: source, derivesLimits: derivesLimits, isAmount: true)
    }

    /// A whole number.
    static func number(_ key: String, _ range: ClosedRange<Int>, default value: Int?, _ source: String = "",
                       expressions: Bool = true, derivesLimits: Bool = false, rounds unit: String? = nil, alwaysWritten: Bool = false) -> ParameterDeclaration {
        ParameterDeclaration(key: key, type: .number(range, expressions: expressions), defaultValue: value.map { .number(.value($0)) },
                             defaultSource: source, derivesLimits: derivesLimits, isAmount: false, rounds: unit, alwaysWritten: alwaysWritten)
    }

    static func color(_ key: String = "color", default value: Color?, _ source: String = "", alwaysWritten: Bool = false) -> ParameterDeclaration {
        ParameterDeclaration(key: key, type: .color, defaultValue: value.map(ParameterValue.color), defaultSource: source, derivesLimits: false, isAmount: false,
                             alwaysWritten: alwaysWritten)
    }

    /// One word of a list; with no default, a string must name one. Before other values, it
    /// may be left out where a number stands (`e_outline:5` is an outer outline).
    static func choice(_ key: String, _ words: [String], default value: String?, _ source: String = "", called: String? = nil) -> ParameterDeclaration {
        ParameterDeclaration(key: key, type: .choice(words), defaultValue: value.map(ParameterValue.choice), defaultSource: source, derivesLimits: false,
                             isAmount: false, called: called)
    }

    public var range: ClosedRange<Int>? { if case .number(let r, _) = type { r } else { nil } }
    var takesExpressions: Bool { if case .number(_, true) = type { true } else { false } }

    /// `1–2000, default 100` for the docs and the schema's descriptions.
    public var summary: String {
        var parts: [String] = []
        switch type {
        case .number(let r, _): parts.append("\(r.lowerBound)–\(r.upperBound)")
        case .choice(let words): parts.append(words.joined(separator: ", "))
        case .color: parts.append("a colour")
        }
        if let d = defaultValue { parts.append("default \(d.text)") }
        return parts.joined(separator: ", ")
    }
}

/// A parameter's value; a number may be an expression (`e_blur:w_div_10`) until planned.
public enum ParameterValue: Sendable, Hashable {
    case number(WholeNumber)
    case color(Color)
    case choice(String)

    public var text: String {
        switch self {
        case .number(let n): n.cloudinaryText
        case .color(let c): CloudinaryPrinter.color(c)
        case .choice(let word): word
        }
    }

    public var json: JSONValue {
        switch self {
        case .number(let n): n.json
        case .color(let c): .string(c.hex)
        case .choice(let word): .string(word)
        }
    }
}

/// An effect the catalogue alone describes: its name and its values in the order of its
/// declaration's parameters, defaults filled in. New effects are of this kind; the engine draws
/// them by name (`DeriveVips/DeclaredEffects.swift`).
public struct DeclaredEffect: Sendable, Hashable {
    public let name: String
    public let values: [ParameterValue]

    public init(name: String, values: [ParameterValue]) {
        self.name = name
        self.values = values
    }

    public var declaration: EffectDeclaration {
        guard let d = StepCatalogue.effect(named: name) else { preconditionFailure("\(name) is not in the catalogue") }
        return d
    }

    /// The value of the parameter with this JSON key.
    public subscript(key: String) -> ParameterValue? {
        declaration.parameters.firstIndex { $0.key == key }.map { values[$0] }
    }

    /// A planned number (the planner has evaluated any expression).
    public func number(_ key: String) -> Int { if case .number(let n)? = self[key] { n.planned } else { 0 } }
    public func choice(_ key: String) -> String { if case .choice(let w)? = self[key] { w } else { "" } }
    public func color(_ key: String = "color") -> Color { if case .color(let c)? = self[key] { c } else { .black } }

    /// The effect's one number, if its declaration has one (an expression until planned).
    public var amount: WholeNumber? {
        guard let i = declaration.parameters.firstIndex(where: \.isAmount), case .number(let n) = values[i] else { return nil }
        return n
    }

    /// The same effect with another amount.
    public func with(amount: WholeNumber) -> DeclaredEffect {
        guard let i = declaration.parameters.firstIndex(where: \.isAmount) else { return self }
        var values = values
        values[i] = .number(amount)
        return DeclaredEffect(name: name, values: values)
    }
}

/// Finds declarations.
public enum StepCatalogue {
    static let effectsByName: [String: EffectDeclaration] = Dictionary(uniqueKeysWithValues: effects.map { ($0.name, $0) })

    public static func effect(named name: String) -> EffectDeclaration? { effectsByName[name] }

    /// The declaration of one of the model's effect kinds.
    public static func effect(_ kind: Effect.Kind) -> EffectDeclaration {
        guard let d = effectsByName[kind.rawValue] else { preconditionFailure("e_\(kind.rawValue) has no declaration in the catalogue") }
        return d
    }

    /// Every effect name Derive reads, in the catalogue's order.
    public static var effectNames: [String] { effects.map(\.name) }
}
