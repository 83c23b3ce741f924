import Foundation

extension ParseRun {
    /// `e_distort:<x1>:<y1>:<x2>:<y2>:<x3>:<y3>:<x4>:<y4>` (whole pixels, or percentages of the
    /// image's side written `30p`) or `e_distort:arc:<degrees>`.
    mutating func distort(_ args: [String], in c: Component) -> Effect? {
        let forms = "e_distort takes four corners (e_distort:<x1>:<y1>:<x2>:<y2>:<x3>:<y3>:<x4>:<y4>, pixels or percentages such as 30p, clockwise from the top left) or an arc (e_distort:arc:<degrees>)"
        if args.first == "arc" {
            guard args.count == 2 else {
                fail(c, "e_distort:arc takes one angle in degrees (e_distort:arc:<degrees>)")
                return nil
            }
            guard let degrees = Int(args[1]) else {
                fail(c, "e_distort:arc takes whole degrees (-360 to 360), got \(Quoted(args[1]))")
                return nil
            }
            return .distort(.arc(degrees))
        }
        guard args.count == 8 else {
            fail(c, args.isEmpty ? forms : "\(forms); got \(args.count) numbers")
            return nil
        }
        var corners: [Length] = []
        for arg in args {
            if let n = Int(arg) {
                corners.append(.pixels(n))
            } else if arg.hasSuffix("p"), let percent = Length.parsePercent(arg.dropLast() + "%") {
                corners.append(percent)
            } else {
                fail(c, "e_distort's corners are whole pixels or percentages (30p), got \(Quoted(arg))")
                return nil
            }
        }
        return .distort(.corners(corners))
    }
}

extension ParseRun {
    /// `b_auto[:<mode>]`, and the gradient modes' `[:<colours>][:<direction>]` (2 or 4;
    /// horizontal, vertical, diagonal_desc, diagonal_asc), each optional, in that order.
    mutating func autoPadFill(_ b: String, parts: [String], in c: Component) -> PadFill? {
        var parts = parts
        var palette: [Color] = []
        // `:palette_<colour>_<colour>...`, last: the padding's colours restricted to it.
        if let last = parts.last, last.hasPrefix("palette") {
            guard let read = AutoPalette.parse(last) else {
                fail(c, CloudinaryVocabulary.malformed("b_" + b, "a b_auto palette is palette_ and 1 to 16 colours joined by _, each a CSS name or hex digits (palette_red_00ff00)", hint: ""))
                return nil
            }
            palette = read
            parts.removeLast()
        }
        guard let first = parts.first else { return .auto(.border, palette: palette) }
        let modes = AutoPadColor.allCases.map(\.rawValue) + AutoGradient.Source.allCases.flatMap { [$0.rawValue + "_gradient", $0.rawValue + "_gradient_contrast"] }
        if let mode = AutoPadColor(rawValue: first) {
            guard parts.count == 1 else {
                fail(c, "b_\(b): b_auto:\(first) takes no number of colours or direction; they go with the gradient modes (border_gradient, predominant_gradient, and their _contrast)")
                return nil
            }
            return .auto(mode, palette: palette)
        }
        guard var gradient = AutoGradient.parse(mode: first) else {
            fail(c, CloudinaryVocabulary.unknown("b_" + b, what: "b_auto mode \(Quoted(first))",
                                                 hint: Suggest.hint(for: first, among: modes, else: "; modes: " + modes.joined(separator: ", "))))
            return nil
        }
        var rest = parts.dropFirst()
        if let count = rest.first, count.first?.isNumber == true || count.first == "-" {
            guard let n = Int(count), AutoGradient.colorCounts.contains(n) else {
                fail(c, CloudinaryVocabulary.unknown("b_" + b, what: "number of gradient colours \(Quoted(count))", hint: "; b_auto's gradients take 2 or 4"))
                return nil
            }
            gradient.colors = n
            rest = rest.dropFirst()
        }
        if let name = rest.first {
            guard let direction = GradientDirection(rawValue: name) else {
                let names = GradientDirection.allCases.map(\.rawValue)
                fail(c, CloudinaryVocabulary.unknown("b_" + b, what: "gradient direction \(Quoted(name))",
                                                     hint: Suggest.hint(for: name, among: names, else: "; directions: " + names.joined(separator: ", "))))
                return nil
            }
            gradient.direction = direction
            rest = rest.dropFirst()
        }
        guard rest.isEmpty else {
            fail(c, "b_\(b): b_auto:\(first) takes a number of colours (2 or 4) and a direction, got \(Quoted(rest.joined(separator: ":")))")
            return nil
        }
        gradient.palette = palette
        return .gradient(gradient)
    }
}

extension ParseRun {
    /// `e_gradient_fade[:symmetric|symmetric_pad][:<strength>]` (x_ and y_ are read beside it).
    mutating func gradientFade(_ text: String, args: [String], color: String?, in c: Component) -> Effect? {
        if color != nil { fail(c, param: "co", "applies to e_colorize, e_make_transparent, e_shadow and text layers") }
        var rest = args[...]
        var edges = FadeEdges.one
        if let first = rest.first, first.first?.isLetter == true, !ExpressionParser.looksLikeExpression(first) {
            guard let type = FadeEdges(rawValue: first), type != .one else {
                fail(c, CloudinaryVocabulary.unknown("e_" + text, what: "e_gradient_fade type \(Quoted(first))", hint: "; types: symmetric, symmetric_pad"))
                return nil
            }
            edges = type
            rest = rest.dropFirst()
        }
        guard rest.count <= 1 else {
            fail(c, "e_gradient_fade takes a type (symmetric or symmetric_pad) and a strength")
            return nil
        }
        var strength = WholeNumber.value(EffectRules.defaultAmount(of: .gradientFade) ?? 20)
        if let s = rest.first {
            if let n = Int(s) {
                strength = .value(n)
            } else if ExpressionParser.looksLikeExpression(s) {
                guard let e = wholeNumberExpression(s, param: "e", written: "e_" + text, label: "e_gradient_fade:",
                                                    accepts: "a whole-number strength", in: c) else { return nil }
                strength = e
            } else {
                fail(c, "e_gradient_fade takes a whole-number strength, got \(Quoted(s))")
                return nil
            }
        }
        return .gradientFade(strength, edges: edges, x: nil, y: nil)
    }
}
