/// Reads Cloudinary's arithmetic expressions: values and operators in turn, separated by `_`
/// in URLs (`iw_mul_2_add_ih_mul_2`) or by spaces as the SDKs write them (`iw * 2 + ih * 2`).
/// Values are numbers and predefined values by their short or long names (`iw`,
/// `initial_width`, `initialWidth`); operators are words or symbols. Every refusal is
/// classified, so the parsers can say whether Cloudinary has what was written.
enum ExpressionParser {
    /// Why a text is not an expression Derive evaluates.
    enum Problem: Error, Sendable, Hashable {
        case empty
        /// `$` not followed by a variable's name (a letter, then letters and digits).
        case badVariableName(String)
        /// A value Cloudinary has that Derive cannot compute when planning, with why.
        case notComputable(name: String, reason: String)
        case unknownWord(String)
        /// Values and operators do not alternate; the reason says where.
        case malformed(String)
        case tooLong
    }

    /// More is not an expression anyone writes, and bounds the work of reading one.
    static let maxTokens = 64

    enum Token: Hashable {
        case number(Double)
        case value(PredefinedValue)
        case variable(String)
        case op(ArithmeticOperator, written: String)
    }

    static func parse(_ text: String) -> Result<ArithmeticExpression, Problem> {
        // Spaces (as the SDKs write) separate like '_' (as URLs do); an empty word is a
        // doubled, leading or trailing '_', which Cloudinary does not read either.
        let spaced = text.split(whereSeparator: \.isWhitespace).joined(separator: "_")
        if spaced.isEmpty { return .failure(.empty) }
        // `!text!` stays one word even with `_` inside (`ctx:!x_pos!`), so a refusal names it whole.
        let words = ConditionParser.words(spaced)
        if words.contains(where: \.isEmpty) {
            return .failure(.malformed("values and operators are separated by one '_'"))
        }
        if words.count > maxTokens * 3 { return .failure(.tooLong) }
        var tokens: [(Token, String)] = []
        var i = 0
        while i < words.count {
            // Long names are several words (`initial_aspect_ratio`): the longest match wins.
            var found: (token: Token, name: String, length: Int)?
            for length in stride(from: min(3, words.count - i), through: 1, by: -1) {
                let name = words[i..<(i + length)].joined(separator: "_")
                if let token = token(name) {
                    found = (token, name, length)
                    break
                }
                if let reason = notComputableReason(name, exactly: length > 1) { return .failure(.notComputable(name: name, reason: reason)) }
            }
            if words[i].hasPrefix("$") {
                let name = String(words[i].dropFirst())
                guard VariableAssignment.isValidName(name) else { return .failure(.badVariableName(words[i])) }
                tokens.append((.variable(name), words[i]))
                i += 1
                if tokens.count > maxTokens { return .failure(.tooLong) }
                continue
            }
            guard let found else {
                if words[i].allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }) && words[i].contains(where: \.isNumber) {
                    return .failure(.malformed("\(Quoted(words[i])) is not a number below 1000000000 such as 12, -3 or 0.5"))
                }
                return .failure(.unknownWord(words[i]))
            }
            tokens.append((found.token, found.name))
            i += found.length
            if tokens.count > maxTokens { return .failure(.tooLong) }
        }
        if tokens.count == 1, case .number = tokens[0].0 {
            return .failure(.malformed("a number alone is pixels (200) or a fraction (0.5), written without separators"))
        }
        return shape(tokens).flatMap { .success(climb(tokens.map(\.0))) }
    }

    /// Whether a text was meant as an expression: it names an operator or a value Cloudinary
    /// has. Parameters that take no expressions use this to refuse one as such.
    static func looksLikeExpression(_ text: String) -> Bool {
        if text.contains("$") { return true }
        let words = text.split(whereSeparator: { $0 == "_" || $0 == " " || $0 == ":" }).map(String.init)
        return words.contains { word in
            ArithmeticOperator(rawValue: word) != nil || valueNames[word] != nil || notComputableReason(word) != nil
        } || zip(words, words.dropFirst()).contains { valueNames[$0 + "_" + $1] != nil || notComputableReason($0 + "_" + $1) != nil }
    }

    static func token(_ word: String) -> Token? {
        if let op = ArithmeticOperator(rawValue: word) { return .op(op, written: word) }
        if let op = ArithmeticOperator.allCases.first(where: { $0.symbol == word }) { return .op(op, written: word) }
        if let value = valueNames[word] { return .value(value) }
        if let number = number(word) { return .number(number) }
        return nil
    }

    /// Every name of a predefined value.
    static let valueNames: [String: PredefinedValue] = {
        var names: [String: PredefinedValue] = [:]
        for value in PredefinedValue.allCases {
            names[value.rawValue] = value
            for name in value.longNames { names[name] = value }
        }
        return names
    }()

    /// `12`, `-3`, `0.5`, below a billion in size, so that every number prints back exactly
    /// with six decimals (`Decimal6`).
    static func number(_ word: String) -> Double? {
        guard word.count <= 17 else { return nil }
        let body = word.hasPrefix("-") ? word.dropFirst() : Substring(word)
        guard let first = body.first, first.isASCII, first.isNumber, let last = body.last, last.isASCII, last.isNumber,
              body.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), body.filter({ $0 == "." }).count <= 1,
              let value = Double(word), abs(value) < 1e9 else { return nil }
        return Decimal6.quantize(value)
    }

    /// Values Cloudinary's expressions have and Derive cannot compute when it plans.
    /// `ctx:!key!` names a context key after the colon; a name of several words is matched
    /// `exactly`, so that `ctx:!x!_mul_w` is about `ctx:!x!`.
    static func notComputableReason(_ name: String, exactly: Bool = false) -> String? {
        let key = exactly ? name : name.split(separator: ":", maxSplits: 1).first.map(String.init) ?? name
        return CloudinaryVocabulary.uncomputableValues.first { $0.names.contains(key) }?.reason
    }

    /// Values and operators must alternate, starting and ending with a value.
    static func shape(_ tokens: [(Token, String)]) -> Result<Void, Problem> {
        for (index, (token, written)) in tokens.enumerated() {
            let isOperator: Bool
            if case .op = token { isOperator = true } else { isOperator = false }
            if index == 0 && isOperator {
                return .failure(.malformed("an expression starts with a value, not the operator \(Quoted(written))"))
            }
            if index == tokens.count - 1 && isOperator {
                return .failure(.malformed("an expression ends with a value, not the operator \(Quoted(written))"))
            }
            guard index > 0 else { continue }
            let previous = tokens[index - 1]
            let previousIsOperator: Bool
            if case .op = previous.0 { previousIsOperator = true } else { previousIsOperator = false }
            if isOperator == previousIsOperator {
                let what = isOperator ? "two operators" : "two values"
                return .failure(.malformed("\(what) in a row, \(Quoted(previous.1)) and \(Quoted(written)); values and operators alternate"))
            }
        }
        return .success(())
    }

    /// Builds the tree by precedence climbing over an alternating sequence.
    static func climb(_ tokens: [Token]) -> ArithmeticExpression {
        var position = 0
        func operand() -> ArithmeticExpression {
            defer { position += 1 }
            switch tokens[position] {
            case .number(let n): return .number(n)
            case .value(let v): return .value(v)
            case .variable(let name): return .variable(name)
            case .op: preconditionFailure("shape() lets only values stand here")
            }
        }
        func expression(minimum: Int) -> ArithmeticExpression {
            var left = operand()
            while position < tokens.count, case .op(let op, _) = tokens[position], op.precedence >= minimum {
                position += 1
                let right = expression(minimum: op.isRightAssociative ? op.precedence : op.precedence + 1)
                left = .operation(op, left, right)
            }
            return left
        }
        return expression(minimum: 1)
    }
}

extension ExpressionParser.Problem {
    /// The first line of a refusal of `written` (`w_iw_div`, `width "iw /"`), which a parameter
    /// `param` took: whether Cloudinary has it, and what the parameter takes besides an
    /// expression (`accepts`).
    func message(_ written: String, param: String, accepts: String = "pixels (200), a fraction (0.5)") -> String {
        let takes = "; \(param) takes \(accepts) or an expression such as iw_div_2 or $name (values: "
            + PredefinedValue.allCases.map(\.rawValue).joined(separator: ", ") + "; operators: "
            + ArithmeticOperator.allCases.map(\.rawValue).joined(separator: ", ") + ")"
        switch self {
        case .empty:
            return CloudinaryVocabulary.malformed(written, "the value is empty", hint: takes)
        case .badVariableName(let word):
            return CloudinaryVocabulary.malformed(written, "\(Quoted(word)) is not a variable: a name is a letter, then letters and digits", hint: "")
        case .notComputable(let name, let reason):
            return CloudinaryVocabulary.notSupported(written, CloudinaryVocabulary.feature(.uncomputableValue)) + "; \(name) is \(reason)"
        case .unknownWord(let word):
            let names = Array(ExpressionParser.valueNames.keys).sorted()
            let hint = Suggest.hint(for: word, among: names, else: takes)
            return CloudinaryVocabulary.unknown(written, what: "value \(Quoted(word))", hint: hint)
        case .malformed(let reason):
            return CloudinaryVocabulary.malformed(written, reason, hint: takes)
        case .tooLong:
            return "\(written): an expression has at most \(ExpressionParser.maxTokens) values and operators"
        }
    }
}
