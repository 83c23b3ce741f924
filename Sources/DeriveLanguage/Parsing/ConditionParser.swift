/// Reads the conditions of `if_` (`w_gt_200_and_ar_lt_1`, `$tag_in_!a:b!`, or as the SDKs
/// write them, `w > 200 && ar < 1`) and the values of `$name_<value>`. Sides are expressions
/// (`ExpressionParser`), lone numbers, or texts between `!`; refusals are classified like the
/// expression parser's, so a string's refusal says whether Cloudinary has what was written.
enum ConditionParser {
    enum Problem: Error, Sendable, Hashable {
        case expression(ExpressionParser.Problem)
        /// The clause has no comparison or a side is missing; the text says what.
        case malformed(String)
    }

    static func parse(_ text: String) -> Result<Condition, Problem> {
        let words = self.words(text)
        if words.isEmpty { return .failure(.malformed("the condition is empty")) }
        if words.count > ExpressionParser.maxTokens * 3 { return .failure(.expression(.tooLong)) }
        // `and` binds tighter than `or`: split on `or`, then on `and`.
        var alternatives: [Condition] = []
        for group in split(words, on: ["or", "||"]) {
            var all: [Condition] = []
            for clause in split(group, on: ["and", "&&"]) {
                switch comparison(clause) {
                case .success(let condition): all.append(condition)
                case .failure(let problem): return .failure(problem)
                }
            }
            alternatives.append(all.dropFirst().reduce(all[0]) { .and($0, $1) })
        }
        return .success(alternatives.dropFirst().reduce(alternatives[0]) { .or($0, $1) })
    }

    /// `!text!` (which may hold `_`), a lone number, or an expression.
    static func value(_ text: String) -> Result<VariableValue, Problem> {
        if let inner = textLiteral(text) { return .success(.text(inner)) }
        if let read = AssetRead.parse(text) { return .success(.asset(read)) }
        // A literal converted (`!12.5!_to_f`, `30_to_i`) is the number the conversion reads.
        for conversion in [TextConversion.toFloat, .toInteger] where text.hasSuffix("_" + conversion.rawValue) {
            let base = String(text.dropLast(conversion.rawValue.count + 1))
            if let inner = textLiteral(base) { return .success(.number(.number(conversion.apply(inner)))) }
            if ExpressionParser.number(base) != nil { return .success(.number(.number(conversion.apply(base)))) }
            // An expression converted to a float (`iw_add_100_div_3_to_f`) is the expression:
            // Derive's arithmetic is in floating point already.
            if conversion == .toFloat, case .success(let expression) = ExpressionParser.parse(base) {
                return .success(.number(expression))
            }
        }
        if let number = ExpressionParser.number(text) { return .success(.number(.number(number))) }
        // An aspect ratio may be compared with a ratio (`if_ar_gt_3:4`), which is its quotient.
        if text.contains(":"), let ratio = AspectRatio.parse(text) { return .success(.number(.number(ratio))) }
        return ExpressionParser.parse(text).map(VariableValue.number).mapError(Problem.expression)
    }

    /// The inside of `!text!`, if the text is one.
    static func textLiteral(_ text: String) -> String? {
        guard text.count >= 2, text.hasPrefix("!"), text.hasSuffix("!") else { return nil }
        let inner = String(text.dropFirst().dropLast())
        return inner.contains("!") ? nil : inner
    }

    /// Words separated by `_` or spaces, with `!text!` kept whole even when it holds `_`.
    static func words(_ text: String) -> [String] {
        let raw = text.split(whereSeparator: \.isWhitespace).joined(separator: "_")
            .split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        var words: [String] = []
        var i = 0
        while i < raw.count {
            var word = raw[i]
            if word.hasPrefix("!") && word != "!=" && !(word.count >= 2 && word.hasSuffix("!")) {
                // An opened text runs to the word that closes it.
                while i + 1 < raw.count && !(word.count >= 2 && word.hasSuffix("!")) {
                    i += 1
                    word += "_" + raw[i]
                }
            }
            words.append(word)
            i += 1
        }
        return words
    }

    static func split(_ words: [String], on separators: Set<String>) -> [[String]] {
        var groups: [[String]] = [[]]
        for word in words {
            if separators.contains(word) { groups.append([]) } else { groups[groups.count - 1].append(word) }
        }
        return groups
    }

    static func comparison(_ words: [String]) -> Result<Condition, Problem> {
        let positions = words.indices.filter { ComparisonOperator.parse(words[$0]) != nil }
        guard let at = positions.first, let op = ComparisonOperator.parse(words[at]) else {
            let clause = words.joined(separator: "_")
            return .failure(.malformed(clause.isEmpty
                ? "and/or joins two comparisons; one side is empty"
                : "\(Quoted(clause)) has no comparison (eq, ne, lt, gt, lte, gte, in, nin or = != < > <= >=)"))
        }
        guard positions.count == 1 else {
            return .failure(.malformed("\(Quoted(words.joined(separator: "_"))) has two comparisons; join them with _and_ or _or_"))
        }
        let left = words[..<at].joined(separator: "_"), right = words[(at + 1)...].joined(separator: "_")
        guard !left.isEmpty, !right.isEmpty else {
            return .failure(.malformed("\(words[at]) needs a value on each side"))
        }
        return operand(left).flatMap { l in operand(right).map { r in .compare(l, op, r) } }
    }

    static func operand(_ text: String) -> Result<ConditionOperand, Problem> {
        value(text).map { value in
            switch value {
            case .number(let e): .expression(e)
            case .text(let t): .text(t)
            case .asset(let a): .asset(a)
            // A condition compares a reference's public id as a text.
            case .reference(let id): .text(id)
            case .currentImage: .text("current")
            }
        }
    }
}

extension ConditionParser.Problem {
    /// The first line of a refusal of `written` (`if_w_gt`), as the expression parser words it.
    func message(_ written: String, param: String) -> String {
        switch self {
        case .expression(let problem):
            return problem.message(written, param: param, accepts: "comparisons such as w_gt_200, joined by _and_ or _or_, of numbers, texts (!text!)")
        case .malformed(let reason):
            return CloudinaryVocabulary.malformed(written, reason, hint: "; \(param) takes comparisons such as w_gt_200_and_ar_lt_1 or $tag_in_!a:b!")
        }
    }
}
