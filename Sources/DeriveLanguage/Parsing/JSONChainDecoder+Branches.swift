/// Variables and conditionals in JSON chains, in the shapes `ChainEncoder` writes:
/// `{"variable": {"name": "half", "value": "iw / 2"}}`, `{"variable": {"name": "style", "text": "Arial_12"}}`,
/// `{"if": {"condition": "w > 200 && ar < 1", "then": [...], "else": [...]}}`, and text with
/// variables as a list: `{"text": ["Hello ", {"variable": "name"}]}`.
extension JSONChainDecoder {
    static let variableKeys = ["name", "value", "text", "asset", "reference", "image", "default"]
    static let conditionalKeys = ["condition", "then", "else"]

    func readAssignment(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> VariableAssignment? {
        guard let fields = log.object(value, at: path, allowed: Self.variableKeys) else { return nil }
        guard let name = log.string(fields["name"], at: path.appending("name")) else {
            if fields["name"] == nil { log.add(path.appending("name"), "is required: a letter, then letters and digits") }
            return nil
        }
        guard VariableAssignment.isValidName(name) else {
            log.add(path.appending("name"), "\(Quoted(name)) is not a variable name: a letter, then letters and digits (no $)")
            return nil
        }
        let isDefault = fields["default"].flatMap { log.bool($0, at: path.appending("default")) } ?? false
        if let image = fields["image"] {
            let imagePath = path.appending("image")
            if fields["value"] != nil || fields["text"] != nil || fields["asset"] != nil || fields["reference"] != nil {
                log.add(imagePath, "cannot be combined with value, text, asset or reference; a variable holds one of them")
                return nil
            }
            guard let which = log.string(image, at: imagePath) else { return nil }
            guard which == "current" else {
                log.add(imagePath, "must be \"current\" (the image as it is at this step, $name_current), got \(Quoted(which))")
                return nil
            }
            return VariableAssignment(name: name, value: .currentImage, isDefault: isDefault)
        }
        if let reference = fields["reference"] {
            let referencePath = path.appending("reference")
            if fields["value"] != nil || fields["text"] != nil || fields["asset"] != nil {
                log.add(referencePath, "cannot be combined with value, text or asset; a variable holds one of them")
                return nil
            }
            guard let id = log.string(reference, at: referencePath) else { return nil }
            guard let publicID = VariableValue.reference("ref:!\(id)!") else {
                log.add(referencePath, "\(Quoted(id)) is not a public id: letters, digits, _ - . and folders separated by / (brand/logo)")
                return nil
            }
            return VariableAssignment(name: name, value: .reference(publicID), isDefault: isDefault)
        }
        if let asset = fields["asset"] {
            let assetPath = path.appending("asset")
            if fields["value"] != nil || fields["text"] != nil {
                log.add(assetPath, "cannot be combined with value or text; a variable holds one of them")
                return nil
            }
            guard let text = log.string(asset, at: assetPath) else { return nil }
            guard let read = AssetRead.parse(text) else {
                log.add(assetPath, "\(Quoted(text)) is not a value of the asset: ctx:!key!, md:!key! (either with _to_f or _to_i for a number) or tags")
                return nil
            }
            return VariableAssignment(name: name, value: .asset(read), isDefault: isDefault)
        }
        switch (fields["value"], fields["text"]) {
        case (let number?, nil):
            let valuePath = path.appending("value")
            switch number {
            case .number:
                guard let double = log.double(number, at: valuePath) else { return nil }
                return VariableAssignment(name: name, value: .number(.number(Decimal6.quantize(double))), isDefault: isDefault)
            case .string(let s):
                switch ExpressionParser.parse(s) {
                case .success(let e): return VariableAssignment(name: name, value: .number(e), isDefault: isDefault)
                case .failure(let problem):
                    log.add(valuePath, problem.message("expression \(Quoted(s))", param: "it", accepts: "a number"))
                    return nil
                }
            default:
                log.add(valuePath, "expected a number or an expression such as \"iw / 2\", got \(number.typeDescription); a text goes in \"text\"")
                return nil
            }
        case (nil, let text?):
            return log.string(text, at: path.appending("text")).map { VariableAssignment(name: name, value: .text($0), isDefault: isDefault) }
        case (_?, _?):
            log.add(path.appending("text"), "cannot be combined with value; a variable holds a number or a text")
            return nil
        case (nil, nil):
            log.add(path, "needs a value (a number or an expression) or a text")
            return nil
        }
    }

    func readConditional(_ value: JSONValue, at path: JSONPath, log: IssueCollector, depth: Int) -> Conditional? {
        guard let fields = log.object(value, at: path, allowed: Self.conditionalKeys) else { return nil }
        let conditionPath = path.appending("condition")
        guard let text = log.string(fields["condition"], at: conditionPath) else {
            if fields["condition"] == nil { log.add(conditionPath, "is required, such as \"w > 200 && ar < 1\"") }
            return nil
        }
        var condition: Condition?
        switch ConditionParser.parse(text) {
        case .success(let c): condition = c
        case .failure(let problem): log.add(conditionPath, problem.message("condition \(Quoted(text))", param: "it"))
        }
        if fields["then"] == nil { log.add(path.appending("then"), "is required: the steps applied when the condition holds") }
        let then = fields["then"].map { readChain($0, at: path.appending("then"), log: log, depth: depth) } ?? []
        let otherwise = fields["else"].map { readChain($0, at: path.appending("else"), log: log, depth: depth) } ?? []
        guard let condition else { return nil }
        let conditional = Conditional(condition: condition, then: then, otherwise: otherwise)
        if Step.conditional(conditional).conditionDepth > Conditional.maxDepth {
            log.add(path, "if steps are nested more than \(Conditional.maxDepth) deep")
            return nil
        }
        return conditional
    }

    /// A text's `text`: a string (literal, `$` included), or a list of strings and
    /// `{"variable": name}` objects.
    func readTextParts(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> [TextPart]? {
        if case .string(let s) = value { return TextPart.joined([.literal(s)]) }
        guard let list = log.array(value, at: path) else { return nil }
        var parts: [TextPart] = []
        for (i, element) in list.enumerated() {
            switch element {
            case .string(let s): parts.append(.literal(s))
            default:
                guard let fields = log.object(element, at: path.appending(i), allowed: ["variable"]),
                      let name = log.string(fields["variable"], at: path.appending(i).appending("variable")) else { return nil }
                guard VariableAssignment.isValidName(name) else {
                    log.add(path.appending(i).appending("variable"), "\(Quoted(name)) is not a variable name: a letter, then letters and digits (no $)")
                    return nil
                }
                parts.append(.variable(name))
            }
        }
        return TextPart.joined(parts)
    }
}

extension Step {
    /// How deep conditionals nest in this step (0 for any other step).
    var conditionDepth: Int {
        guard case .conditional(let c) = self else { return 0 }
        return 1 + ((c.then + c.otherwise).map(\.conditionDepth).max() ?? 0)
    }
}
