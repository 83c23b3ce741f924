/// Variables and conditionals when planning: assignments are evaluated where they stand,
/// conditions on the image the `if_` receives, with the same evaluator as every expression.

/// A variable's value as the planner set it, for `derive explain`.
public struct EvaluatedVariable: Sendable, Hashable {
    /// The step of the canonical chain (the top-level step, for one inside a conditional).
    public var step: Int
    public var name: String
    /// The canonical text of what was assigned (`iw_div_2`, `!Arial_12!`).
    public var assigned: String
    public var value: VariableBinding
}

/// The branch a conditional took on a source, for `derive explain`.
public struct DecidedCondition: Sendable, Hashable {
    public var step: Int
    public var condition: String
    /// Whether the condition held (the `if_` branch ran) or not (the `if_else` branch, if any).
    public var holds: Bool
}

/// Why a step cannot be planned on this source, as a refusal's reason.
struct PlanningFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension ExpressionFacts {
    /// A user variable's number, as arithmetic needs it.
    func number(ofVariable name: String) -> Result<Double, ArithmeticExpression.EvaluationFailure> {
        switch variables[name] {
        case .number(let n)?: .success(n)
        case .text?: .failure(.textVariable(name))
        case nil: .failure(images.contains(name) ? .imageVariable(name) : .unsetVariable(name))
        }
    }

    func evaluate(_ expression: ArithmeticExpression) -> Result<Double, ArithmeticExpression.EvaluationFailure> {
        expression.evaluate(value, variables: number(ofVariable:))
    }

    /// What an assignment sets the variable to here; a lone `$other` copies a text too.
    func binding(of value: VariableValue) -> Result<VariableBinding, ArithmeticExpression.EvaluationFailure> {
        switch value {
        case .text(let t): return .success(.text(t))
        // An asset's public id, which a layer's name takes as it takes a text's.
        case .reference(let id): return .success(.text(id))
        // Never asked: the planner keeps image variables apart (`ExpressionFacts.images`).
        case .currentImage: return .success(.text(value.cloudinaryText))
        case .number(.variable(let name)):
            guard let bound = variables[name] else { return .failure(.unsetVariable(name)) }
            return .success(bound)
        case .number(let e): return evaluate(e).map { .number(Decimal6.quantize($0)) }
        case .asset(let read):
            switch read.reading(on: asset) {
            case .number(let n): return .success(.number(n))
            case .text(let t): return .success(.text(t))
            // A list as Cloudinary writes one (`!a:b!`), which `in` and `nin` read back as one.
            case .list(let items): return .success(.text(items.joined(separator: ":")))
            }
        }
    }

    /// Whether the condition holds here, or why it cannot be decided.
    func decide(_ condition: Condition) -> Result<Bool, PlanningFailure> {
        switch condition {
        case .and(let a, let b):
            return decide(a).flatMap { $0 ? decide(b) : .success(false) }
        case .or(let a, let b):
            return decide(a).flatMap { $0 ? .success(true) : decide(b) }
        case .compare(let left, let op, let right):
            let l: VariableBinding, r: VariableBinding
            switch (operand(left), operand(right)) {
            case (.success(let a), .success(let b)): (l, r) = (a, b)
            case (.failure(let f), _), (_, .failure(let f)): return .failure(PlanningFailure(f.description))
            }
            let clause = "\(left.canonicalText)_\(op.rawValue)_\(right.canonicalText)"
            switch (l, r, op) {
            case (.number(let a), .number(let b), _):
                let (x, y) = (Decimal6.quantize(a), Decimal6.quantize(b))
                switch op {
                case .eq: return .success(x == y)
                case .ne: return .success(x != y)
                case .lt: return .success(x < y)
                case .gt: return .success(x > y)
                case .lte: return .success(x <= y)
                case .gte: return .success(x >= y)
                case .inList, .notInList: return .failure(PlanningFailure("unknown to Cloudinary (\(clause): \(op.rawValue) takes a list on its right, !a:b:c!, or tags)"))
                }
            case (_, .text, .inList), (_, .text, .notInList):
                // Every item on the left (`!sale:in_stock!`, or one value) among those on the
                // right: `in` holds when all are there, `nin` when not all are.
                let among = Set(items(of: right, r))
                let wanted = items(of: left, l)
                let found = !wanted.isEmpty && wanted.allSatisfy(among.contains)
                return .success(op == .inList ? found : !found)
            case (_, _, .eq): return .success(l.description == r.description)
            case (_, _, .ne): return .success(l.description != r.description)
            default:
                return .failure(PlanningFailure("unknown to Cloudinary (\(clause): \(op.rawValue) compares numbers; texts take eq, ne, in and nin)"))
            }
        }
    }

    /// The items of a side of `in` or `nin`: the asset's tags as they are, a text's
    /// `:`-separated items, a number alone.
    func items(of operand: ConditionOperand, _ bound: VariableBinding) -> [String] {
        if case .asset(let read) = operand, case .list(let tags) = read.reading(on: asset) { return tags }
        guard case .text(let text) = bound else { return [bound.description] }
        return text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    }

    func operand(_ o: ConditionOperand) -> Result<VariableBinding, ArithmeticExpression.EvaluationFailure> {
        switch o {
        case .text(let t): .success(.text(t))
        case .expression(let e): binding(of: .number(e))
        case .asset(let a): binding(of: .asset(a))
        }
    }

    /// The variables as assignments, so steps planned later (after a trim, in an overlay's
    /// chain) start with the values set here.
    var assignments: [Step] {
        variables.sorted { $0.key < $1.key }.map { name, value in
            switch value {
            case .number(let n): .assign(VariableAssignment(name: name, value: .number(.number(n))))
            case .text(let t): .assign(VariableAssignment(name: name, value: .text(t)))
            }
        }
    }

    /// A component whose names come from variables, read with their texts written in
    /// (`e_$effect:100` with `$effect_!blur!` is `e_blur:100`).
    func expanding(_ template: String, limits: ChainLimits) -> Result<[Step], PlanningFailure> {
        var text = ""
        var rest = Substring(template)
        var written: [String] = []
        while let dollar = rest.firstIndex(of: "$") {
            text += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            let name = after.prefix { $0.isASCII && ($0.isLetter || $0.isNumber) }
            if case .text(let value)? = variables[String(name)], !after.hasPrefix("(") {
                guard !value.contains(","), !value.contains("/") else {
                    return .failure(PlanningFailure("\(template): unknown to Cloudinary ($\(name) holds \(Quoted(value)), and a name cannot hold ',' or '/')"))
                }
                text += value
                written.append("$\(name) is \(Quoted(value))")
            } else {
                text += "$" + name
            }
            rest = after[name.endIndex...]
        }
        text += rest
        if let left = text.split(separator: ",").first(where: { ParseRun.namesFromVariable(String($0)) }) {
            return .failure(PlanningFailure("\(left): unknown to Cloudinary (a name from a variable needs a text variable set before it: $name_!text!)"))
        }
        let parsed = CloudinaryParser(limits: limits).parse(text)
        let context = written.isEmpty ? "" : " (\(written.joined(separator: ", ")))"
        if let first = parsed.issues.first {
            return .failure(PlanningFailure(first.reason + context))
        }
        if parsed.settings != OutputSettings() {
            return .failure(PlanningFailure(CloudinaryVocabulary.notSupported(template, CloudinaryVocabulary.feature(.variable)) + context))
        }
        return .success(Normalizer.normalize(parsed.steps))
    }

    /// An image layer's name with its `$name` text variables written in (`l_$logo` with
    /// `$logo_!brand:logo!` is `brand/logo`: a ':' is a folder separator, as in `l_`).
    func naming(_ name: String) -> Result<String, PlanningFailure> {
        var out = ""
        var rest = Substring(name)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            let variable = String(after.prefix { $0.isASCII && ($0.isLetter || $0.isNumber) })
            guard case .text(let value)? = variables[variable], !value.isEmpty else {
                return .failure(PlanningFailure("l_\(name.replacingOccurrences(of: "/", with: ":")): unknown to Cloudinary (no text variable $\(variable) is set before it is used; assign it first: $\(variable)_!name!)"))
            }
            out += value.contains("://") ? value : value.replacingOccurrences(of: ":", with: "/")
            rest = after[after.index(after.startIndex, offsetBy: variable.count)...]
        }
        return .success(out + rest)
    }

    /// A text layer with its `$(name)` parts written in.
    func resolving(_ layer: TextLayer) -> Result<TextLayer, PlanningFailure> {
        var resolved = layer
        var parts: [TextPart] = []
        for part in layer.parts {
            guard case .variable(let name) = part else {
                parts.append(part)
                continue
            }
            guard let value = variables[name] else {
                return .failure(PlanningFailure("l_text $(\(name)): " + ArithmeticExpression.EvaluationFailure.unsetVariable(name).description))
            }
            parts.append(.literal(value.description))
        }
        resolved.parts = parts
        return .success(resolved)
    }
}

extension Step {
    /// Whether an expression of the step (its condition, an assignment, a number) names the
    /// face count, which only the engine knows.
    var namesFaceCount: Bool { names(.faceCount) }

    /// Whether the step, or a branch of it, draws a layer of this name (`$img` for `l_$img`).
    func drawsLayer(named name: String) -> Bool {
        switch self {
        case .overlay(let o): if case .image(name) = o.source { true } else { false }
        case .conditional(let c): (c.then + c.otherwise).contains { $0.drawsLayer(named: name) }
        default: false
        }
    }

    /// Whether a condition or an assignment of the step reads the asset's tags or context, so
    /// that the output depends on them (its identity takes them in).
    var readsAsset: Bool {
        switch self {
        case .assign(let a):
            if case .asset = a.value { return true }
            return false
        case .conditional(let c):
            return c.condition.readsAsset || c.then.contains(where: \.readsAsset) || c.otherwise.contains(where: \.readsAsset)
        default:
            return false
        }
    }

    /// Whether an expression of the step names the illustration score, which only the engine
    /// measures.
    public var namesIllustrationScore: Bool { names(.illustrationScore) }

    func names(_ value: PredefinedValue) -> Bool {
        var names = false
        _ = mappingAllExpressions { e in
            if e.values.contains(value) { names = true }
            return e
        }
        return names
    }

    /// The step with `transform` applied to every expression in it, branches and assignments
    /// included (an overlay's own chain is left alone, as in `mappingLengths`).
    func mappingAllExpressions(_ transform: (ArithmeticExpression) -> ArithmeticExpression) -> Step {
        switch self {
        case .assign(var a):
            if case .number(let e) = a.value { a.value = .number(transform(e)) }
            return .assign(a)
        case .conditional(var c):
            c.condition = c.condition.mappingExpressions(transform)
            c.then = c.then.map { $0.mappingAllExpressions(transform) }
            c.otherwise = c.otherwise.map { $0.mappingAllExpressions(transform) }
            return .conditional(c)
        case .resize(var r):
            r.aspectRatioExpression = r.aspectRatioExpression.map(transform)
            r.dprExpression = r.dprExpression.map(transform)
            r.zoomExpression = r.zoomExpression.map(transform)
            return Step.resize(r).mappingNumbers(transform)
        case .rotate(var r):
            r.angleExpression = r.angleExpression.map(transform)
            return .rotate(r)
        case .border(var b):
            b.widthExpression = b.widthExpression.map(transform)
            return .border(b)
        default:
            return mappingNumbers(transform)
        }
    }

    private func mappingNumbers(_ transform: (ArithmeticExpression) -> ArithmeticExpression) -> Step {
        mappingWholeNumbers { n, _ in
            guard case .expression(let e) = n else { return n }
            return .expression(transform(e))
        }.mappingLengths { d, _ in
            guard case .expression(let e) = d else { return d }
            return .expression(transform(e))
        }
    }
}

extension Step {
    /// The step with every read of the asset written in as the value it reads (a text, a
    /// number, the tags as a `:`-separated list), in its branches and its overlays' chains too:
    /// steps the engine plans later (after a trim, an overlay's chain) do not carry the asset.
    /// With `overlaysOnly`, only what lies inside overlays' chains, so that the planner's own
    /// walk reports conditions as written.
    func writingAssetValues(_ asset: AssetFacts, overlaysOnly: Bool = false) -> Step {
        func literal(_ read: AssetRead) -> VariableValue {
            switch read.reading(on: asset) {
            case .number(let n): .number(.number(n))
            case .text(let t): .text(t)
            case .list(let items): .text(items.joined(separator: ":"))
            }
        }
        func operand(_ o: ConditionOperand) -> ConditionOperand {
            guard case .asset(let read) = o else { return o }
            switch literal(read) {
            case .number(let e): return .expression(e)
            case .text(let t): return .text(t)
            case .asset, .reference, .currentImage: return o
            }
        }
        func condition(_ c: Condition) -> Condition {
            switch c {
            case .compare(let l, let op, let r): .compare(operand(l), op, operand(r))
            case .and(let a, let b): .and(condition(a), condition(b))
            case .or(let a, let b): .or(condition(a), condition(b))
            }
        }
        switch self {
        case .assign(var a) where !overlaysOnly:
            if case .asset(let read) = a.value { a.value = literal(read) }
            return .assign(a)
        case .conditional(var c):
            if !overlaysOnly { c.condition = condition(c.condition) }
            c.then = c.then.map { $0.writingAssetValues(asset, overlaysOnly: overlaysOnly) }
            c.otherwise = c.otherwise.map { $0.writingAssetValues(asset, overlaysOnly: overlaysOnly) }
            return .conditional(c)
        case .overlay(var o):
            o.chain = o.chain.map { $0.writingAssetValues(asset) }
            return .overlay(o)
        default:
            return self
        }
    }

    /// Whether the step or anything inside it (branches, overlays' chains) reads the asset.
    var readsAssetAnywhere: Bool {
        switch self {
        case .conditional(let c):
            return readsAsset || c.then.contains(where: \.readsAssetAnywhere) || c.otherwise.contains(where: \.readsAssetAnywhere)
        case .overlay(let o):
            return o.chain.contains(where: \.readsAssetAnywhere)
        default:
            return readsAsset
        }
    }
}
