/// What the catalogue writes for people and for other programs: the JSON Schema of each effect
/// whose JSON is the catalogue's own (Sources/DeriveLanguage/Schema/job-v1.schema.json holds
/// them, `CatalogueTests` keeps it equal), and the effects table of Docs/language.md.
extension StepCatalogue {
    /// The effects whose JSON Schema is generated: every one whose JSON form is the
    /// declaration's (`amount` and `declared`).
    public static var schemaEffects: [EffectDeclaration] { effects.filter { $0.form != .irregular } }

    /// The schema of the step object's value (`{"blur": <this>}`).
    public static func schema(of d: EffectDeclaration) -> JSONValue {
        var forms: [JSONValue] = []
        let required = d.parameters.filter { $0.defaultValue == nil }.map { JSONValue.string($0.key) }
        if required.isEmpty { forms.append(.object([JSONMember(key: "const", value: .bool(true))])) }
        if let amount = d.amount, let range = amount.range { forms.append(integer(range)) }
        if let short = d.shortForm, case .choice(let words) = short.type { forms.append(.object([JSONMember(key: "enum", value: .array(words.map(JSONValue.string)))])) }
        if !d.parameters.isEmpty {
            forms.append(.object([
                JSONMember(key: "type", value: .string("object")),
                JSONMember(key: "additionalProperties", value: .bool(false)),
            ] + (required.isEmpty ? [] : [JSONMember(key: "required", value: .array(required))]) + [
                JSONMember(key: "properties", value: .object(d.parameters.map { JSONMember(key: $0.key, value: schema(of: $0)) })),
            ]))
        }
        return .object([JSONMember(key: "oneOf", value: .array(forms)), JSONMember(key: "description", value: .string(signature(d) + ": " + d.documentation))])
    }

    static func integer(_ range: ClosedRange<Int>) -> JSONValue {
        .object([JSONMember(key: "type", value: .string("integer")), JSONMember(key: "minimum", value: .int(range.lowerBound)),
                 JSONMember(key: "maximum", value: .int(range.upperBound))])
    }

    static func schema(of p: ParameterDeclaration) -> JSONValue {
        var members: [JSONMember]
        switch p.type {
        case .number(let range, _):
            guard case .object(let m) = integer(range) else { return .null }
            members = m
        case .color: members = [JSONMember(key: "$ref", value: .string("#/$defs/color"))]
        case .choice(let words): members = [JSONMember(key: "enum", value: .array(words.map(JSONValue.string)))]
        }
        if let d = p.defaultValue, p.type != .color { members.append(JSONMember(key: "default", value: d.json)) }
        return .object(members)
    }

    /// `e_blur[:<strength>]`, `e_dropshadow[:azimuth_<n>][;elevation_<n>]…`, `co_` for a colour.
    public static func signature(_ d: EffectDeclaration) -> String {
        let written = d.parameters.filter { $0.type != .color }
        var text = "e_" + d.name
        switch d.syntax {
        case .positional:
            let optional = written.filter { $0.defaultValue != nil }
            text += written.map { $0.defaultValue == nil ? ":<\($0.key)>" : "[:<\($0.key)>" }.joined() + String(repeating: "]", count: optional.count)
        case .named: text += written.enumerated().map { "[\($0.offset == 0 ? ":" : ";")\($0.element.key)_<n>]" }.joined()
        }
        if d.parameters.contains(where: { $0.type == .color }) { text += "[,co_<color>]" }
        return text
    }

    /// The effects table of Docs/language.md (between its `catalogue:effects` markers): a row
    /// per effect, its string form, its JSON parameters with their ranges and defaults, and
    /// what it does.
    public static var effectsTable: String {
        var lines = ["| effect | Cloudinary | JSON parameters (range, default) | what it does |", "|---|---|---|---|"]
        for d in effects {
            let parameters = d.parameters.map { "`\($0.key)` (\($0.summary))" }.joined(separator: ", ")
            lines.append("| \(d.name) | `\(signature(d))` | \(parameters.isEmpty ? "`true`" : parameters) | \(d.documentation) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
