/// The forms of a declared effect, derived from its declaration alone: its Cloudinary string
/// (read and printed), its JSON (read and written), its range checks and its JSON Schema.
extension EffectDeclaration {
    /// The values of `e_<name>[:<args>]` (the colour from `co_`), defaults filled in, with any
    /// notes on how they were read; or the reason it is refused. `expression` reads a number
    /// that may be an expression and is not a whole number (nil once it has said why not).
    func read(arguments args: [String], color: Color?, expression: (String) -> WholeNumber?) -> Result<(values: [ParameterValue], notes: [String]), ReadFailure> {
        var given: [String: String] = [:]
        let written = parameters.filter { $0.type != .color }
        switch syntax {
        case .positional:
            var rest = args[...]
            for (i, p) in written.enumerated() {
                guard let arg = rest.first else { break }
                // A choice before other values may be left out where a number (or an expression
                // of one) stands: e_outline:5, e_improve:w_div_10.
                if case .choice(let words) = p.type, i < written.count - 1, arg.first?.isLetter != true
                    || (!words.contains(arg) && written[i + 1].takesExpressions && ExpressionParser.looksLikeExpression(arg)) { continue }
                rest = rest.dropFirst()
                if case .choice = p.type { given[p.key] = arg } else if !arg.isEmpty { given[p.key] = arg }
            }
            guard rest.isEmpty else {
                let each = written.map { ("aeiox".contains($0.key.first ?? " ") ? "an " : "a ") + $0.key }
                return .failure(.malformed("e_\(name) takes " + (each.count > 1 ? each.dropLast().joined(separator: ", ") + " and " + each.last! : each.first ?? "nothing")))
            }
        case .named:
            let settings = written.map(\.namedForm)
            let form = "e_\(name) takes " + (settings.count > 1 ? settings.dropLast().joined(separator: ", ") + " and " + settings.last! : settings.joined())
                + ", separated by semicolons (e_\(name):" + written.map(\.namedExample).joined(separator: ";") + ")"
            guard args.count <= 1 else { return .failure(.plain("\(form), got \(Quoted(args.joined(separator: ":")))")) }
            for pair in args.first.map({ $0.split(separator: ";", omittingEmptySubsequences: false).map(String.init) }) ?? [] {
                guard let underscore = pair.firstIndex(of: "_") else { return .failure(.plain("\(form), got \(Quoted(pair))")) }
                let key = String(pair[..<underscore])
                guard let p = parameter(key), p.type != .color else {
                    return .failure(.unknown(what: "e_\(name) setting \(Quoted(key))", word: key, among: written.map(\.key), listing: "settings: "))
                }
                guard given.updateValue(String(pair[pair.index(after: underscore)...]), forKey: p.key) == nil else { return .failure(.plain("e_\(name) gives \(key) twice")) }
            }
        }
        var values: [ParameterValue] = []
        var notes: [String] = []
        for p in parameters {
            if p.type == .color, let color {
                values.append(.color(color))
                continue
            }
            guard let text = given[p.key] else {
                guard let d = p.defaultValue else {
                    if case .choice(let words) = p.type {
                        return .failure(.plain("e_\(name) needs a \(p.key): e_\(name):<\(p.key)>, one of " + words.joined(separator: ", ")))
                    }
                    return .failure(.malformed("e_\(name) needs its \(p.key)"))
                }
                values.append(d)
                continue
            }
            switch p.type {
            case .number(let range, let expressions):
                if expressions, syntax == .positional, Int(text) == nil {
                    guard let n = expression(text) else { return .failure(.reported) }
                    values.append(.number(n))
                    continue
                }
                var number = Int(text)
                // Decimals where Cloudinary's SDKs write them: the nearest whole number.
                if number == nil, let unit = p.rounds, let d = Double(text), abs(d) < 1e9, text.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" }) {
                    number = Int(d.rounded())
                    if Double(number!) != d { notes.append("e_\(name): \(text) \(unit)s rounds to the nearest whole \(unit), \(number!)") }
                }
                guard let n = number else {
                    if syntax == .named { return .failure(.plain("e_\(name)'s \(p.key) is a whole number, got \(Quoted(text))")) }
                    return .failure(.malformed("e_\(name) takes a whole-number \(p.key) (\(range.lowerBound) to \(range.upperBound)), got \(Quoted(text))"))
                }
                values.append(.number(.value(n)))
            case .color:
                guard let c = Color.parse(text) else { return .failure(.malformed("co_\(text) is not a colour")) }
                values.append(.color(c))
            case .choice(let words):
                guard words.contains(text) else {
                    return .failure(.unknown(what: (p.called ?? "e_\(name) \(p.key)") + " \(Quoted(text))", word: text, among: words, listing: "\(p.key)s: "))
                }
                values.append(.choice(text))
            }
        }
        return .success((values, notes))
    }

    enum ReadFailure: Error {
        case malformed(String)
        /// Said already (an expression's reader says why it fails).
        case reported
        /// A reason said as it is.
        case plain(String)
        /// A word not in the declaration's list, for a did-you-mean (else the list, after `listing`).
        case unknown(what: String, word: String, among: [String], listing: String)
    }

    /// `e_noise:30`: the values up to the last that is not its default, in the declaration's
    /// order (`key_value;…` for a named syntax), and `co_` for a colour that is not its default.
    func cloudinaryText(_ values: [ParameterValue]) -> String {
        var args: [String] = []
        var color = ""
        var pending: [String] = []
        for (p, v) in zip(parameters, values) {
            if p.type == .color {
                if v != p.defaultValue || p.alwaysWritten { color = ",co_" + v.text }
                continue
            }
            switch syntax {
            case .positional:
                pending.append(v.text)
                if v != p.defaultValue || p.alwaysWritten { args += pending; pending = [] }
            case .named:
                if v != p.defaultValue { args.append("\(p.key)_\(v.text)") }
            }
        }
        let separator = syntax == .named ? ";" : ":"
        return "e_" + name + (args.isEmpty ? "" : ":" + args.joined(separator: separator)) + color
    }

    /// The JSON object of the values, every one written (defaults too: it is the canonical form).
    func json(_ values: [ParameterValue]) -> JSONValue {
        .object(zip(parameters, values).map { JSONMember(key: $0.key, value: $1.json) })
    }

    /// `{"<name>": true}`, `{"<name>": <amount>}` or `{"<name>": {<key>: <value>…}}`.
    func read(json value: JSONValue, at path: JSONPath, log: IssueCollector) -> [ParameterValue]? {
        var fields: [String: JSONValue] = [:]
        switch value {
        case .bool(true): break
        case .number where shortForm != nil, .string where shortForm != nil:
            fields[shortForm!.key] = value
        default:
            guard let object = log.object(value, at: path, allowed: parameters.map(\.key)) else { return nil }
            fields = object
        }
        var values: [ParameterValue] = []
        for p in parameters {
            guard let v = fields[p.key] else {
                guard let d = p.defaultValue else {
                    let words = if case .choice(let words) = p.type { ": one of " + words.map { Quoted($0).description }.joined(separator: ", ") } else { "" }
                    log.add(path.appending(p.key), "is required" + words)
                    return nil
                }
                values.append(d)
                continue
            }
            switch p.type {
            case .number(_, let expressions):
                guard let n = expressions ? log.wholeNumber(v, at: path.appending(p.key)) : log.int(v, at: path.appending(p.key)).map(WholeNumber.value) else { return nil }
                values.append(.number(n))
            case .color:
                guard let c = log.color(v, at: path.appending(p.key)) else { return nil }
                values.append(.color(c))
            case .choice(let words):
                guard case .string(let word) = v, words.contains(word) else {
                    let got = if case .string(let text) = v { Quoted(text).description } else { v.typeDescription }
                    log.add(path.appending(p.key), "expected one of " + words.map { Quoted($0).description }.joined(separator: ", ") + ", got \(got)")
                    return nil
                }
                values.append(.choice(word))
            }
        }
        return values
    }

    /// Numbers outside their ranges.
    func issues(_ values: [ParameterValue]) -> [FieldIssue] {
        zip(parameters, values).flatMap { p, v -> [FieldIssue] in
            guard let range = p.range, case .number(let n) = v else { return [] }
            return StepRules.check(n, in: range, field: p.key, derivesLimits: p.derivesLimits)
        }
    }
}

extension ParameterDeclaration {
    /// `azimuth_<0-360>` (or `key_<key>`): a named effect's setting, for its form message.
    /// (A property, not a closure in `read`: Swift 6.3's optimizer crashed on that closure in a
    /// release build, "Found ownership error".)
    var namedForm: String {
        guard let range else { return "\(key)_<\(key)>" }
        return "\(key)_<\(range.lowerBound)-\(range.upperBound)>"
    }

    /// `azimuth_215`: the setting at its default, for the form message's example.
    var namedExample: String {
        guard let defaultValue else { return "\(key)_\(key)" }
        return "\(key)_\(defaultValue.text)"
    }
}
