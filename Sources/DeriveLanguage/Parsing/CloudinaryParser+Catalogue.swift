extension ParseRun {
    /// `e_<name>[:<values>]` of an effect the catalogue alone describes (`Form.declared`), read
    /// from its declaration; a colour comes from `co_`.
    mutating func declaredEffect(_ d: EffectDeclaration, arguments: [String], color: String?, in c: Component, written text: String) -> Effect? {
        if d.parameters.allSatisfy(\.isAmount) {
            // `e_blur[:<amount>]`: one amount, a whole number or an expression, or none.
            var values: [ParameterValue] = d.parameters.compactMap(\.defaultValue)
            if d.amount == nil, !arguments.isEmpty { fail(c, "e_\(d.name) takes no amount") }
            if d.amount != nil, let first = arguments.first {
                guard let n = effectAmount(first, name: d.name, in: c, written: text) else { return nil }
                values = [.number(n)]
            }
            if d.amount != nil, arguments.count > 1 { fail(c, "e_\(d.name) takes one amount") }
            ignoreUnusedColor(color, in: c)
            return .declared(DeclaredEffect(name: d.name, values: values))
        }
        let written = "e_" + ([d.name] + arguments).joined(separator: ":")
        var effectColor: Color?
        if d.parameters.contains(where: { $0.type == .color }) {
            if let color {
                guard let parsed = self.color(color, param: "co", in: c) else { return nil }
                effectColor = parsed
            }
        } else if d.syntax == .named {
            // An effect of settings and no colour refuses one, as Cloudinary's SDKs give it none.
            if color != nil { fail(c, param: "co", "applies to e_colorize, e_make_transparent, e_shadow, e_outline and text layers; e_\(d.name) takes no colour") }
        } else {
            ignoreUnusedColor(color, in: c)
        }
        switch d.read(arguments: arguments, color: effectColor, expression: { effectAmount($0, name: d.name, in: c, written: text) }) {
        case .success(let read):
            for text in read.notes { note(c, text) }
            return .declared(DeclaredEffect(name: d.name, values: read.values))
        case .failure(.malformed(let reason)):
            fail(c, CloudinaryVocabulary.malformed(written, reason, hint: ""))
        case .failure(.reported): break
        case .failure(.plain(let reason)):
            fail(c, reason)
        case .failure(.unknown(let what, let word, let among, let listing)):
            fail(c, CloudinaryVocabulary.unknown(written, what: what, hint: Suggest.hint(for: word, among: among, else: "; " + listing + among.joined(separator: ", "))))
        }
        return nil
    }
}
