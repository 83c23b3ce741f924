extension ParseRun {
    /// e_vectorize's settings, by position (`e_vectorize:<colors>:<detail>:<despeckle>:<paths>:<corners>`)
    /// or by name (`e_vectorize:colors:15:detail:200:despeckle:0.2`), as Cloudinary writes them.
    mutating func vectorize(_ args: [String], color: String?, in c: Component, written text: String) -> Effect? {
        let names = ["colors", "detail", "despeckle", "paths", "corners"]
        var values = args
        if let first = args.first, first.first?.isLetter == true, !ExpressionParser.looksLikeExpression(first) {
            var named: [String: String] = [:]
            var i = 0
            while i + 1 < args.count, names.contains(args[i]) {
                named[args[i]] = args[i + 1]
                i += 2
            }
            guard i == args.count else {
                fail(c, CloudinaryVocabulary.malformed("e_" + text, "e_vectorize's settings are colors, detail, despeckle, paths and corners, each followed by its value", hint: ""))
                return nil
            }
            values = names.map { named[$0] ?? "" }
        }
        guard values.count <= names.count else {
            fail(c, CloudinaryVocabulary.malformed("e_" + text, "e_vectorize takes at most five settings: colors, detail, despeckle, paths and corners", hint: ""))
            return nil
        }
        values += Array(repeating: "", count: names.count - values.count)
        func size(_ value: String, _ name: String, pixels: Int) -> Length?? {
            guard !value.isEmpty else { return .some(nil) }
            guard let length = Length.parseCloudinary(value), length.isPixelsOrFraction else {
                fail(c, CloudinaryVocabulary.malformed("e_" + text, "e_vectorize's \(name) is whole pixels (0 to \(pixels)) or a fraction (0.0 to 1.0), got \(Quoted(value))", hint: ""))
                return nil
            }
            return .some(length)
        }
        func whole(_ value: String, _ name: String) -> Int?? {
            guard !value.isEmpty else { return .some(nil) }
            guard let n = Int(value) else {
                fail(c, CloudinaryVocabulary.malformed("e_" + text, "e_vectorize's \(name) is a whole number from 0 to 100, got \(Quoted(value))", hint: ""))
                return nil
            }
            return .some(n)
        }
        guard let detail = size(values[1], "detail", pixels: VectorTrace.maxDetail), let despeckle = size(values[2], "despeckle", pixels: 100),
              let paths = whole(values[3], "paths"), let corners = whole(values[4], "corners") else { return nil }
        guard case .vectorize(let colors, _)? = effect(.vectorize, args: values[0].isEmpty ? [] : [values[0]],
                                                       color: color, in: c, written: text) else { return nil }
        return .vectorize(colors, trace: VectorTrace(detail: detail, despeckle: despeckle, paths: paths, corners: corners))
    }
}
