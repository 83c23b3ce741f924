/// User-defined variables and conditionals in strings: `$name_<value>` parameters, `if_`
/// blocks and one-component conditionals, and `$(name)` in the text of `l_text`.
extension ParseRun {
    /// `$name_<value>`; nil (and a refusal) when it cannot be read.
    mutating func assignment(name: String, value: String, written: String, in c: Component) -> VariableAssignment? {
        guard VariableAssignment.isValidName(name) else {
            fail(c, CloudinaryVocabulary.malformed(written, "\(Quoted("$" + name)) is not a variable: a name is a letter, then letters and digits", hint: ""))
            return nil
        }
        // An asset reference, `$logo_ref:!brand:logo!`: Cloudinary's user-defined variables
        // documentation describes it for use as a layer (`l_$logo`), by the asset's public id.
        if value.hasPrefix("ref:") {
            guard let id = VariableValue.reference(value) else {
                fail(c, CloudinaryVocabulary.malformed(written, "an asset reference is ref:!<public id>!, folders separated by ':' (ref:!brand:logo!), and names an asset: it is not converted to a number", hint: ""))
                return nil
            }
            return VariableAssignment(name: name, value: .reference(id))
        }
        // `$img_current`, the image as it is at this point, used later as a layer (`l_$img`).
        if value == "current" { return VariableAssignment(name: name, value: .currentImage) }
        switch ConditionParser.value(value) {
        case .success(let v):
            return VariableAssignment(name: name, value: v)
        case .failure(let problem):
            fail(c, problem.message(written, param: "$\(name)_"))
            return nil
        }
    }

    /// An asset reference that no later component names changes nothing (Cloudinary's SDKs
    /// write `$bestpic_ref:!file.png!` alone): it is read, and the notes say so.
    mutating func noteUnusedReferences(_ components: [Component]) {
        for c in components {
            for a in c.assignments {
                guard case .reference = a.value else { continue }
                let named = components[(c.index + 1)...].contains { later in
                    var rest = Substring(later.text)
                    while let r = rest.range(of: "$" + a.name) {
                        rest = rest[r.upperBound...]
                        if rest.first.map({ !($0.isASCII && ($0.isLetter || $0.isNumber)) }) ?? true { return true }
                    }
                    return false
                }
                if !named && !components.contains(where: { $0.has("t") }) {
                    note(c, "$\(a.name)_\(a.value.cloudinaryText): no later component uses $\(a.name) (as l_$\(a.name) or u_$\(a.name)); the reference changes nothing")
                }
            }
        }
    }

    /// The value of an `if_` parameter; nil (and a refusal) when the condition cannot be read.
    mutating func branch(_ value: String, written: String, in c: inout Component) -> Component.Branch? {
        switch value {
        case "else": return .otherwise
        case "end": return .end
        default:
            c.hasCondition = true
            switch ConditionParser.parse(value) {
            case .success(let condition): return .condition(condition)
            case .failure(let problem):
                fail(c, problem.message(written, param: "if_"))
                return nil
            }
        }
    }

    /// Matches each block's `if_` with its `if_else` and `if_end`, innermost first.
    mutating func pairBlocks(_ components: [Component]) {
        var open: [Int] = []
        for c in components {
            // `if_w_gt_400,l_badge,g_north_east` (a one-component layer under a condition, as
            // Cloudinary's documentation writes it) is read in sequence; a long layer's if_
            // belongs in a component of its own.
            let conditionalShortLayer = c.opensLayer && closing[c.index] == nil && !c.isLayerApply && c.hasCondition
            if !conditionalShortLayer && (c.opensLayer && c.branch != nil || c.isLayerApply && c.branch != nil) {
                fail(c, "if_ beside l_ or fl_layer_apply: put the if_ in a component of its own around the layer (if_…/l_…/fl_layer_apply/if_end)")
            }
            if c.opensBlock {
                if open.count >= Conditional.maxDepth {
                    fail(c, "if_ blocks are nested more than \(Conditional.maxDepth) deep")
                }
                open.append(c.index)
            } else if c.branch == .otherwise {
                guard let opener = open.last else {
                    // Right after a one-component conditional, it gives that one's else branch.
                    if c.index > 0, case .condition? = components[c.index - 1].branch, !components[c.index - 1].opensBlock {
                        singleElse[c.index - 1] = c.index
                    } else if c.index == 0 || !components[c.index - 1].hasCondition {
                        fail(c, CloudinaryVocabulary.malformed("if_else", "an if_else follows an if_ component or block", hint: ""))
                    }
                    continue
                }
                if blockElse[opener] != nil { fail(c, "repeats if_else in one if_ block") } else { blockElse[opener] = c.index }
            } else if c.branch == .end {
                // Beside other parameters, if_end makes its component the block's last.
                guard let opener = open.popLast() else {
                    note(c, "if_end with no if_ block open: it closes nothing; ignored")
                    continue
                }
                blockEnd[opener] = c.index
            }
        }
        // Without an if_end, an if_else ends the block: its own parameters are the other branch.
        // Without either, the block runs to the end of the chain (or of the layer it is in).
        for opener in open where !components[opener].refused && blockElse[opener] == nil {
            note(components[opener], "if_ block without if_end: it runs to the end of the chain (or of the layer it is in)")
        }
    }

    /// Builds the conditional of the block opened at `i`; returns where reading continues.
    mutating func block(_ components: [Component], at i: Int, range: Range<Int>, inLayer: Bool, depth: Int,
                        into steps: inout [Step]) -> Int {
        let c = components[i]
        // An if_else without an if_end ends the block, its own parameters being the other branch.
        if blockEnd[i] == nil, let e = blockElse[i], e < range.upperBound {
            guard !c.refused, case .condition(let condition)? = c.branch else { return e + 1 }
            conditionDepth += 1
            let then = sequence(components, (i + 1)..<e, inLayer: inLayer, depth: depth)
            let otherwise = sequence(components, e..<(e + 1), inLayer: inLayer, depth: depth)
            conditionDepth -= 1
            steps.append(.conditional(Conditional(condition: condition, then: then, otherwise: otherwise)))
            return e + 1
        }
        // Unclosed: reported when pairing (unless its if_ was refused); what follows is read
        // as if unconditional, for its own complaints.
        guard var end = blockEnd[i] else {
            // Refused: what follows is read as if unconditional, for its own complaints.
            guard !c.refused, case .condition(let condition)? = c.branch else { return i + 1 }
            conditionDepth += 1
            let then = sequence(components, (i + 1)..<range.upperBound, inLayer: inLayer, depth: depth)
            conditionDepth -= 1
            steps.append(.conditional(Conditional(condition: condition, then: then, otherwise: [])))
            return range.upperBound
        }
        guard end < range.upperBound else {
            fail(c, "if_ inside a layer must end (if_end) before the layer's fl_layer_apply")
            return range.upperBound
        }
        guard !c.refused, case .condition(let condition)? = c.branch else { return end + 1 }
        let elseIndex = blockElse[i]
        let next = end + 1
        // An if_end beside other parameters: they are the block's last component.
        if !components[end].isBranchAlone { end += 1 }
        conditionDepth += 1
        let then = sequence(components, (i + 1)..<(elseIndex ?? end), inLayer: inLayer, depth: depth)
        // The if_else component's own parameters, if any, open the other branch.
        let otherwise = elseIndex.map { sequence(components, $0..<end, inLayer: inLayer, depth: depth) } ?? []
        conditionDepth -= 1
        steps.append(.conditional(Conditional(condition: condition, then: then, otherwise: otherwise)))
        return next
    }

    /// `if_<condition>` beside other parameters: the condition applies to that component alone,
    /// and an `if_else` component right after it (`…/if_else,c_fit,w_200`) is the other branch.
    mutating func singleConditional(_ c: Component, condition: Condition, otherwise: Component?, inLayer: Bool) -> [Step] {
        var inner = c
        inner.branch = nil
        conditionDepth += 1
        let then = steps(from: inner, inLayer: inLayer)
        var other: [Step] = []
        if var otherwise, !otherwise.refused {
            otherwise.branch = nil
            if !otherwise.isBranchAlone { other = steps(from: otherwise, inLayer: inLayer) }
        }
        conditionDepth -= 1
        return [.conditional(Conditional(condition: condition, then: then, otherwise: other))]
    }

    /// The text of `l_text` as written (percent-encoded): literal text and `$(name)`
    /// variables. A `$` that starts no variable is refused rather than guessed at: Cloudinary
    /// reads it as a variable, and a literal dollar sign is written `%24`.
    mutating func textParts(_ encoded: String, in c: Component) -> [TextPart]? {
        var parts: [TextPart] = []
        var rest = Substring(encoded)
        while let dollar = rest.firstIndex(of: "$") {
            guard let literal = String(rest[..<dollar]).removingPercentEncoding else {
                fail(c, "the text of l_text is not valid percent-encoding")
                return nil
            }
            parts.append(.literal(literal))
            let after = rest[rest.index(after: dollar)...]
            guard after.hasPrefix("("), let close = after.firstIndex(of: ")"),
                  VariableAssignment.isValidName(String(after[after.index(after: after.startIndex)..<close])) else {
                fail(c, "l_text:…\(rest[dollar...].prefix(12)): a $ in text starts a variable, written $(name) with a name of letters and digits; write a literal dollar sign as %24")
                return nil
            }
            parts.append(.variable(String(after[after.index(after: after.startIndex)..<close])))
            rest = after[after.index(after: close)...]
        }
        guard let tail = String(rest).removingPercentEncoding else {
            fail(c, "the text of l_text is not valid percent-encoding")
            return nil
        }
        parts.append(.literal(tail))
        return TextPart.joined(parts)
    }
}
