/// Collects issues while a document is read, and offers typed readers that report a precise
/// reason (with the path) instead of failing on the first surprise.
package final class IssueCollector {
    package init() {}
    package private(set) var issues: [ValidationIssue] = []

    package func add(_ path: JSONPath, _ reason: String) {
        issues.append(ValidationIssue(location: path.description, reason: reason))
    }

    func add(_ path: JSONPath, _ fieldIssues: [FieldIssue]) {
        for issue in fieldIssues { add(path.appending(field: issue.field), issue.reason) }
    }

    package func append(_ more: [ValidationIssue]) {
        issues += more
    }

    package var isEmpty: Bool { issues.isEmpty }

    // MARK: - Typed readers

    /// The members of an object, after reporting any key not in `allowed`.
    package func object(_ value: JSONValue, at path: JSONPath, allowed: [String]) -> [String: JSONValue]? {
        guard case .object(let members) = value else {
            add(path, "expected an object, got \(value.typeDescription)")
            return nil
        }
        var result: [String: JSONValue] = [:]
        for member in members {
            if allowed.contains(member.key) {
                result[member.key] = member.value
            } else {
                let expected = "; expected one of " + allowed.joined(separator: ", ")
                add(path.appending(member.key), "unknown key" + Suggest.hint(for: member.key, among: allowed, else: expected))
            }
        }
        return result
    }

    package func int(_ value: JSONValue?, at path: JSONPath) -> Int? {
        guard let value else { return nil }
        if case .number(let n) = value, let int = n.intValue { return int }
        if case .number(let n) = value, n.isInteger {
            add(path, "integer \(n.text) is out of range")
        } else {
            add(path, "expected an integer, got \(value.typeDescription)")
        }
        return nil
    }

    /// An integer, or an expression as a string (`"w / 10"`, `"w_div_10"`).
    package func wholeNumber(_ value: JSONValue?, at path: JSONPath) -> WholeNumber? {
        guard let value else { return nil }
        guard case .string(let s) = value else { return int(value, at: path).map(WholeNumber.value) }
        switch ExpressionParser.parse(s) {
        case .success(let expression): return .expression(expression)
        case .failure(let problem):
            add(path, problem.message("expression \(Quoted(s))", param: "it", accepts: "an integer"))
            return nil
        }
    }

    package func double(_ value: JSONValue?, at path: JSONPath) -> Double? {
        guard let value else { return nil }
        if case .number(let n) = value, n.doubleValue.isFinite { return Decimal6.quantize(n.doubleValue) }
        add(path, "expected a number, got \(value.typeDescription)")
        return nil
    }

    package func bool(_ value: JSONValue?, at path: JSONPath) -> Bool? {
        guard let value else { return nil }
        if case .bool(let b) = value { return b }
        add(path, "expected true or false, got \(value.typeDescription)")
        return nil
    }

    package func string(_ value: JSONValue?, at path: JSONPath) -> String? {
        guard let value else { return nil }
        if case .string(let s) = value { return s }
        add(path, "expected a string, got \(value.typeDescription)")
        return nil
    }

    package func array(_ value: JSONValue?, at path: JSONPath) -> [JSONValue]? {
        guard let value else { return nil }
        if case .array(let a) = value { return a }
        add(path, "expected an array, got \(value.typeDescription)")
        return nil
    }

    /// A keyword from a fixed list, with a "did you mean" hint when misspelt.
    package func keyword<T>(_ value: JSONValue?, at path: JSONPath, what: String, spellings: [String], parse: (String) -> T?) -> T? {
        guard let text = string(value, at: path) else { return nil }
        if let parsed = parse(text) { return parsed }
        let expected = "; expected one of " + spellings.joined(separator: ", ")
        add(path, "unknown \(what) \(Quoted(text))" + Suggest.hint(for: text, among: spellings, else: expected))
        return nil
    }

    /// Pixels (an integer), a fraction (a number with a fractional part) or a percentage string.
    package func dimension(_ value: JSONValue?, at path: JSONPath) -> Length? {
        guard let value else { return nil }
        switch value {
        case .number(let n):
            if let int = n.intValue { return .pixels(int) }
            if !n.isInteger, n.doubleValue.isFinite {
                let quantized = Decimal6.quantize(n.doubleValue)
                // 2.0 written as a number reads as a fraction, like Cloudinary's w_2.0.
                return .fraction(quantized)
            }
        case .string(let s):
            if let d = Length.parsePercent(s) ?? Length.parseCloudinary(s) { return d }
            // Any other string is an expression (`"iw / 2"`, `"iw_div_2"`).
            switch ExpressionParser.parse(s) {
            case .success(let expression): return .expression(expression)
            case .failure(let problem):
                add(path, problem.message("expression \(Quoted(s))", param: "a length"))
                return nil
            }
        default:
            break
        }
        add(path, "expected pixels (an integer), a fraction (0.5), a percentage (\"50%\") or an expression (\"iw / 2\"), got \(value.typeDescription)")
        return nil
    }

    package func color(_ value: JSONValue?, at path: JSONPath) -> Color? {
        guard let text = string(value, at: path) else { return nil }
        if let color = Color.parse(text) { return color }
        add(path, "unknown colour \(Quoted(text))" + Suggest.hint(for: text, among: Color.allNames, else: "; use a CSS name, #rrggbb[aa] or rgb:rrggbb[aa]"))
        return nil
    }

    package func gravity(_ value: JSONValue?, at path: JSONPath) -> Gravity? {
        guard let value else { return nil }
        if case .object = value {
            guard let fields = object(value, at: path, allowed: ["x", "y"]) else { return nil }
            let x = dimension(fields["x"], at: path.appending("x"))
            let y = dimension(fields["y"], at: path.appending("y"))
            if fields["x"] == nil || fields["y"] == nil {
                add(path, "a focal point needs both x and y")
                return nil
            }
            guard let x, let y else { return nil }
            return .focus(x: x, y: y)
        }
        guard let token = string(value, at: path) else { return nil }
        if let gravity = Gravity.parseToken(token) { return gravity }
        add(path, GravityMessages.unsupported(token))
        return nil
    }

    /// An expression string (`"iar * 2"`, `"$d"`) where a decimal goes; nil for anything else,
    /// which the caller reads as a number.
    package func decimalExpression(_ value: JSONValue?, at path: JSONPath) -> ArithmeticExpression?? {
        guard case .string(let s)? = value, AspectRatio.parse(s) == nil else { return nil }
        switch ExpressionParser.parse(s) {
        case .success(let expression): return .some(expression)
        case .failure(let problem):
            add(path, problem.message("expression \(Quoted(s))", param: "it", accepts: "a number"))
            return .some(nil)
        }
    }

    package func aspectRatio(_ value: JSONValue?, at path: JSONPath) -> Double? {
        guard let value else { return nil }
        if case .string(let s) = value, let ratio = AspectRatio.parse(s) { return ratio }
        if case .number(let n) = value, n.doubleValue.isFinite, n.doubleValue > 0 { return Decimal6.quantize(n.doubleValue) }
        add(path, "expected a ratio such as \"16:9\" or 1.78, got \(value.typeDescription)")
        return nil
    }
}

enum GravityMessages {
    /// `written` is how the input spelled it: `g_ocr_text` in a string, `gravity "ocr_text"` in JSON.
    package static func unsupported(_ token: String, written: String? = nil) -> String {
        let written = written ?? "gravity \(Quoted(token))"
        let supported = "supported: \(Gravity.supportedTokens.joined(separator: ", ")) and a focal point"
        if Gravity.isDetectorGravity(token) {
            return CloudinaryVocabulary.notSupported(written, CloudinaryVocabulary.feature(.detectorGravity)) + "; \(supported)"
        }
        let hint = Suggest.hint(for: token, among: Gravity.supportedTokens)
        return CloudinaryVocabulary.unknown(written, what: "gravity \(Quoted(token))", hint: hint) + "; \(supported)"
    }
}

enum AspectRatio {
    /// `16:9` or a decimal such as `1.78`.
    package static func parse(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let a = Double(parts[0]), let b = Double(parts[1]), a > 0, b > 0, a.isFinite, b.isFinite else { return nil }
            return Decimal6.quantize(a / b)
        }
        guard parts.count == 1, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(text), value > 0, value.isFinite else { return nil }
        return Decimal6.quantize(value)
    }
}
