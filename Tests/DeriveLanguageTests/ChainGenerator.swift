@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Resolves and canonicalises outputs the way a worker does.
func canonical(_ outputs: [OutputSpec], presets: [Preset] = []) throws -> [CanonicalOutput] {
    try JobResolver(catalog: InMemoryPresetCatalog(presets)).resolve(JobSpec(source: nil, outputs: outputs)).outputs
}

func canonical(string: String) throws -> CanonicalOutput {
    try canonical([TransformationInput.output(named: "default", transformation: string)])[0]
}

func canonical(json: String) throws -> CanonicalOutput {
    let job = try TransformationInput.parse(json)
    return try canonical(job.outputs)[0]
}

/// string → model → string → model, and the model through JSON: the printed string is
/// `printed` (the canonical spelling), means the same, and JSON keeps the model whole.
func expectRoundTrip(_ text: String, printed: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let model = try canonical(string: text)
    let string = try CloudinaryPrinter.string(for: model)
    #expect(string == printed, sourceLocation: sourceLocation)
    #expect(try canonical(string: string).identity == model.identity, sourceLocation: sourceLocation)
    let json = JSONWriter.canonical(model.json)
    #expect(try canonical(json: json) == model, "\(json)", sourceLocation: sourceLocation)
}

/// A string refused with `reason`: by the parser (its one issue), or, when the parser takes
/// it, by the planner on a 100x100 JPEG (a value checked only once planned, such as a range).
func expectRefusal(_ text: String, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let issues = CloudinaryParser().parse(text).issues.map(\.reason)
    if issues.isEmpty {
        let planned = Result { try Planner().plan(JobResolver().resolve(TransformationInput.parse(text)), source: SourceFacts(format: .jpeg, width: 100, height: 100)) }
        guard case .failure(let error as ValidationError) = planned else {
            Issue.record("\(text) was accepted", sourceLocation: sourceLocation)
            return
        }
        #expect(error.issues.map(\.reason).contains { $0.hasSuffix(reason) || $0.contains(reason) }, "\(error.issues)", sourceLocation: sourceLocation)
        return
    }
    #expect(issues == [reason], "\(issues)", sourceLocation: sourceLocation)
}

/// Builds random chains that are valid by construction, to test properties (round trips,
/// parser/printer agreement) over far more shapes than hand-written tables.
struct ChainGenerator {
    var random: SeededRandom
    /// JSON can say more than strings (validate steps, effort, breakpoints).
    var jsonOnly: Bool

    mutating func output() -> OutputSpec {
        let count = Int.random(in: 0...5, using: &random)
        return OutputSpec(name: "o", chain: (0..<count).map { _ in step(depth: 0) }, settings: settings())
    }

    mutating func settings() -> OutputSettings {
        var s = OutputSettings()
        if random.chance(0.6) { s.format = random.pick([.jpeg, .png, .webp, .avif, .gif, .jxl, .tiff, .auto, .original]) }
        let format = s.format ?? .original
        if random.chance(0.2), format.supportsLossless { s.lossless = true }
        if s.lossless != true, random.chance(0.5) {
            s.quality = random.chance(0.7) ? .value(Int.random(in: 1...100, using: &random)) : .auto(random.pick(AutoQuality.allCases))
        }
        if random.chance(0.2) { s.strip = random.chance(0.5) }
        if random.chance(0.2), format.supportsProgressive { s.progressive = random.chance(0.5) }
        if random.chance(0.15), format.supportsChromaSubsampling, s.lossless != true, case .value? = s.quality {
            s.chromaSubsampling = random.pick([.full, .half, .auto])
        }
        if random.chance(0.1) { s.autoOrient = false }
        if random.chance(0.1) { s.frame = Int.random(in: 1...3, using: &random) }
        if s.frame == nil, format.canAnimate || format == .auto, random.chance(0.1) {
            let runs = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                let first = Int.random(in: 1...3, using: &random)
                return PageSet.Run(first: first, last: random.pick([first, first + 1, nil]))
            }
            s.pages = PageSet(runs)
        }
        // w_auto and w_auto:breakpoints in strings: breakpoints that a string can say.
        if !jsonOnly && random.chance(0.1) {
            let step = random.pick([100, 20, 250])
            s.breakpoints = random.chance(0.5)
                ? Breakpoints(minWidth: step, maxWidth: max(step, Breakpoints.defaultMaxWidth), spacing: .step(step), maxCount: Breakpoints.defaultMaxCount)
                : Breakpoints(minWidth: Int.random(in: 50...400, using: &random), maxWidth: Int.random(in: 400...2000, using: &random),
                              spacing: .bytes(1000 * Int.random(in: 1...50, using: &random)), maxCount: Int.random(in: 1...20, using: &random))
        }
        if jsonOnly {
            if random.chance(0.2) { s.effort = Int.random(in: 0...9, using: &random) }
            if random.chance(0.2) {
                let min = Int.random(in: 50...400, using: &random)
                s.breakpoints = Breakpoints(minWidth: min, maxWidth: min + Int.random(in: 0...2000, using: &random),
                                            spacing: random.chance(0.5) ? .step(Int.random(in: 20...400, using: &random)) : .bytes(Int.random(in: 1000...50000, using: &random)),
                                            maxCount: Int.random(in: 1...20, using: &random))
            }
        }
        // dpr_auto's densities, or others in JSON; not with breakpoints.
        if jsonOnly, s.breakpoints == nil, random.chance(0.1) { s.densities = random.chance(0.5) ? [1, 2, 3] : [1, 1.5] }
        return s
    }

    mutating func dimension() -> Length {
        if random.chance(0.1) { return expression() }
        return random.chance(0.75) ? .pixels(Int.random(in: 1...3000, using: &random))
            : .fraction(Decimal6.quantize(Double.random(in: 0.01...3, using: &random)))
    }

    mutating func offset() -> Length {
        if random.chance(0.1) { return expression() }
        return random.chance(0.75) ? .pixels(Int.random(in: -200...200, using: &random))
            : .fraction(Decimal6.quantize(Double.random(in: -1...1, using: &random)))
    }

    /// A random expression as the parser would read it (values and operators in turn), so
    /// that it prints back to itself.
    mutating func expression() -> Length { .expression(arithmetic()) }

    /// A whole number (`o_`, a radius of `r_`), sometimes an expression.
    mutating func wholeNumber(_ range: ClosedRange<Int>) -> WholeNumber {
        random.chance(0.1) ? .expression(arithmetic()) : .value(Int.random(in: range, using: &random))
    }

    mutating func arithmetic() -> ArithmeticExpression {
        func operand(valueOnly: Bool) -> String {
            if random.chance(0.1) { return "$" + random.pick(Self.variableNames) }
            if valueOnly || random.chance(0.6) { return random.pick(PredefinedValue.allCases).rawValue }
            return random.chance(0.7) ? String(Int.random(in: 1...500, using: &random))
                : Decimal6.string(Decimal6.quantize(Double.random(in: 0.05...4, using: &random)))
        }
        let operations = Int.random(in: 0...3, using: &random)
        var words = [operand(valueOnly: operations == 0)]
        for _ in 0..<operations {
            words += [random.pick(ArithmeticOperator.allCases).rawValue, operand(valueOnly: false)]
        }
        guard case .success(let e) = ExpressionParser.parse(words.joined(separator: "_")) else {
            preconditionFailure("generated an expression the parser refuses: \(words)")
        }
        return e
    }

    static let variableNames = ["v", "size", "n2", "Tag"]

    /// `$name_<value>`: a number, an expression or a text.
    mutating func assignment() -> VariableAssignment {
        let name = random.pick(Self.variableNames)
        switch Int.random(in: 0..<6, using: &random) {
        case 0: return VariableAssignment(name: name, value: .number(.number(Double(Int.random(in: -50...500, using: &random)))))
        case 1: return VariableAssignment(name: name, value: .number(arithmetic()))
        case 2:
            // A value of the asset (issue 30), as a text or converted to a number.
            let value = random.pick([AssetValue.context("x_pos"), .metadata("kind"), .tags])
            let conversion: TextConversion? = value == .tags ? nil : random.pick([nil, TextConversion.toFloat, .toInteger])
            return VariableAssignment(name: name, value: .asset(AssetRead(value, conversion: conversion)))
        // An asset reference and an image variable (issue 30).
        case 3: return VariableAssignment(name: name, value: .reference(random.pick(["logo", "brand/logo", "a.png"])))
        case 4: return VariableAssignment(name: name, value: .currentImage)
        default: return VariableAssignment(name: name, value: .text(random.pick(["sale", "Arial_12", "a:b:c", "x y"])))
        }
    }

    /// A condition as the parser reads it: comparisons of expressions, variables and texts,
    /// joined by and/or.
    mutating func condition() -> Condition {
        var words: [String] = []
        for i in 0..<Int.random(in: 1...3, using: &random) {
            if i > 0 { words.append(random.pick(["and", "or"])) }
            if random.chance(0.1) {
                // The asset's tags and context (issue 30).
                words += random.chance(0.5) ? ["!" + random.pick(["sale", "a:b"]) + "!", random.pick(["in", "nin"]), "tags"]
                    : ["ctx:!" + random.pick(["kind", "x_pos"]) + "!", random.pick(["eq", "ne"]), "!" + random.pick(["shoes", ""]) + "!"]
            } else if random.chance(0.2) {
                words += ["$" + random.pick(Self.variableNames), random.pick(["eq", "ne", "in", "nin"]), "!" + random.pick(["sale", "a:b", "new"]) + "!"]
            } else {
                words += [arithmetic().canonicalText, random.pick(ComparisonOperator.allCases.filter { $0.symbol != nil }).rawValue, arithmetic().canonicalText]
            }
        }
        guard case .success(let c) = ConditionParser.parse(words.joined(separator: "_")) else {
            preconditionFailure("generated a condition the parser refuses: \(words)")
        }
        return c
    }

    mutating func color() -> Color {
        if random.chance(0.3) { return random.pick([.white, .black, .transparent, Color(red: 255, green: 0, blue: 0)]) }
        return Color(red: .random(in: 0...255, using: &random), green: .random(in: 0...255, using: &random),
                     blue: .random(in: 0...255, using: &random), alpha: random.chance(0.8) ? 255 : .random(in: 0...255, using: &random))
    }

    mutating func resize() -> Resize {
        var r = Resize(mode: random.pick(ResizeMode.allCases))
        switch Int.random(in: 0..<4, using: &random) {
        case 0: r.width = dimension()
        case 1: r.height = dimension()
        case 2: r.width = dimension(); r.height = dimension()
        default:
            r.aspectRatio = Decimal6.quantize(Double.random(in: 0.2...5, using: &random))
            if r.mode.takesGravity && random.chance(0.3) {
                // an aspect ratio alone is valid for the cropping and padding modes
            } else if random.chance(0.5) {
                r.width = dimension()
            } else {
                r.height = dimension()
            }
        }
        if r.aspectRatio != nil && random.chance(0.15) { (r.aspectRatio, r.aspectRatioExpression) = (nil, arithmetic()) }
        if random.chance(0.2) { r.dpr = Decimal6.quantize(Double.random(in: 0.5...4, using: &random)) }
        if random.chance(0.05) { (r.dpr, r.dprExpression) = (nil, arithmetic()) }
        if r.mode.takesGravity {
            let kind = Int.random(in: 0..<4, using: &random)
            if kind == 1 && r.mode != .auto {
                r.gravity = .compass(random.pick(Compass.allCases))
                if random.chance(0.4) { r.x = offset() }
                if random.chance(0.4) { r.y = offset() }
            } else if kind == 2 && !r.mode.pads {
                r.gravity = .smart(random.pick(SmartCrop.allCases))
            } else if kind == 3 && !r.mode.pads && r.mode != .auto {
                r.gravity = .focus(x: .fraction(Decimal6.quantize(Double.random(in: 0...1, using: &random))),
                                   y: random.chance(0.5) ? .pixels(Int.random(in: 0...2000, using: &random)) : .fraction(0.5))
            } else if kind == 0 && random.chance(0.3) && r.mode != .thumb && r.mode != .auto {
                if random.chance(0.5) { r.x = offset() } else { r.y = offset() }
            }
        }
        if r.mode == .fillPad || r.mode == .autoPad {
            // Content-aware: gravity auto (or none, which is auto), no offsets.
            (r.gravity, r.x, r.y) = (random.chance(0.5) ? .smart(.auto) : nil, nil, nil)
            if random.chance(0.4) { r.background = color() }
        }
        if r.mode.pads && random.chance(0.4) { r.background = color() }
        if r.mode.pads && r.background == nil && random.chance(0.2) {
            r.padFill = random.chance(0.5) ? .blurred(intensity: Int.random(in: 1...2000, using: &random), brightness: Int.random(in: -300...100, using: &random))
                : .auto(random.pick(AutoPadColor.allCases))
        }
        return r
    }

    mutating func effect() -> Effect {
        let declaration = random.pick(StepCatalogue.effects)
        guard declaration.form != .declared, let kind = Effect.Kind(rawValue: declaration.name) else {
            // An amount alone may be an expression (`e_blur:w_div_10`), as the parser reads it.
            let amountAlone = declaration.parameters.allSatisfy(\.isAmount)
            return .declared(DeclaredEffect(name: declaration.name, values: declaration.parameters.map { p in
                switch p.type {
                case .number(let range, _): .number(amountAlone ? wholeNumber(range) : .value(Int.random(in: range, using: &random)))
                case .color: .color(color())
                case .choice(let words): .choice(random.pick(words))
                }
            }))
        }
        let amount = EffectRules.range(of: kind).map { wholeNumber($0) }
        if kind == .vectorize, Bool.random(using: &random) {
            // Cloudinary's tracing settings, each given or not, pixels or fractions.
            func size(_ pixels: ClosedRange<Int>) -> Length? {
                switch Int.random(in: 0..<3, using: &random) {
                case 0: nil
                case 1: .pixels(Int.random(in: pixels, using: &random))
                default: .fraction(Double(Int.random(in: 1...100, using: &random)) / 100)
                }
            }
            func whole() -> Int? { Bool.random(using: &random) ? Int.random(in: 0...100, using: &random) : nil }
            return .vectorize(amount ?? .value(10), trace: VectorTrace(detail: size(0...1000), despeckle: size(0...100), paths: whole(), corners: whole()))
        }
        if kind == .tint, Bool.random(using: &random) {
            // Several colours (or one, equalised), positions given or not but never going back.
            let count = Int.random(in: 1...TintGradient.maxColors, using: &random)
            var last = 0
            let positions: [Int?] = (0..<count).map { _ in
                guard Bool.random(using: &random) else { return nil }
                last = Int.random(in: last...100, using: &random)
                return last
            }
            let equalize = count == 1 ? true : Bool.random(using: &random)
            return .tintGradient(amount: amount ?? .value(60), gradient: TintGradient(colors: (0..<count).map { _ in color() }, positions: positions, equalize: equalize))
        }
        if kind == .theme {
            // The new background, always opaque.
            let c = color()
            return .theme(amount ?? .value(100), color: Color(red: c.red, green: c.green, blue: c.blue))
        }
        return EffectRules.make(kind, amount: amount, color: EffectRules.takesColor(kind) ? color() : nil)
    }

    mutating func step(depth: Int) -> Step {
        switch Int.random(in: 0..<(jsonOnly ? 14 : 13), using: &random) {
        case 0, 1, 2: return .resize(resize())
        case 3 where random.chance(0.15):
            return .rotate(Rotate(background: random.chance(0.3) ? color() : nil, angleExpression: arithmetic()))
        case 3:
            // Strings take whole degrees; fractional angles exist only in JSON.
            let angle = jsonOnly ? Decimal6.quantize(Double.random(in: -720...720, using: &random)) : Double(Int.random(in: -720...720, using: &random))
            return .rotate(Rotate(angle: angle,
                                  horizontalFlip: random.chance(0.3), verticalFlip: random.chance(0.3),
                                  background: random.chance(0.3) ? color() : nil))
        case 4:
            let radius: RoundCorners.Radius = random.chance(0.3) ? .max
                : .corners((0..<Int.random(in: 1...4, using: &random)).map { _ in wholeNumber(0...300) })
            return .round(RoundCorners(radius: radius, background: random.chance(0.3) ? color() : nil))
        case 5, 6: return .effect(effect())
        case 7: return .trim(Trim(tolerance: Int.random(in: 0...100, using: &random), color: random.chance(0.3) ? color() : nil))
        case 8:
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .background(color())
            case 1: return .border(Border(width: Int.random(in: 1...50, using: &random), color: color()))
            default: return .opacity(wholeNumber(0...100))
            }
        case 9, 10:
            if depth >= 2 { return .effect(.named("grayscale")) }
            let source: Overlay.Source
            switch Int.random(in: 0..<3, using: &random) {
            case 0: source = .image(random.pick(["logo", "brand/logo.png", "https://cdn.example.com/a%20b/l,o/g:o.png?x=1&y=2", "s3://bucket/key"]))
            case 1: source = .image("https://example.com/w\(Int.random(in: 0...99, using: &random)).png")
            default:
                var layer = TextLayer(text: random.pick(["Hello, world/100%: ok", "Ünïcødé ✓", "a", "$5"]),
                                         font: random.pick(["Arial", "Open Sans", "DejaVu-Sans"]),
                                         size: Int.random(in: 1...200, using: &random), bold: random.chance(0.5),
                                         italic: random.chance(0.5), color: color())
                if random.chance(0.3) { layer.parts = [.variable(random.pick(Self.variableNames))] + layer.parts + [.literal(" $(x)")] }
                // The styles of issue 16: decorations, spacing, layout, strokes and rendering.
                if random.chance(0.3) {
                    layer.underline = random.chance(0.5)
                    layer.letterSpacing = random.chance(0.5) ? Int.random(in: -5...20, using: &random) : nil
                    layer.lineSpacing = random.chance(0.5) ? Int.random(in: max(1 - layer.size, -20)...40, using: &random) : nil
                    layer.alignment = random.chance(0.5) ? random.pick(TextAlignment.allCases) : nil
                    layer.stroke = random.chance(0.4) ? TextStroke(width: Int.random(in: 1...50, using: &random), color: color()) : nil
                    layer.antialias = random.chance(0.7)
                    layer.noTrim = random.chance(0.3)
                }
                source = .text(layer)
            }
            var inner = (0..<Int.random(in: 0...2, using: &random)).map { _ in step(depth: depth + 1) }
            // fl_relative: a fractional size of the layer's resize is of the image it is placed on.
            inner = inner.map { step in
                guard case .resize(var r) = step, r.width?.isFraction == true || r.height?.isFraction == true, random.chance(0.4) else { return step }
                r.relative = true
                return .resize(r)
            }
            var overlay = Overlay(source: source, chain: inner,
                                  gravity: random.chance(0.7) ? .compass(random.pick(Compass.allCases)) : nil,
                                  x: random.chance(0.4) ? offset() : nil, y: random.chance(0.4) ? offset() : nil)
            if random.chance(0.2) {
                overlay.blend = random.pick(BlendMode.allCases)
                if overlay.blend == .antiRemoval && random.chance(0.5) { overlay.blendLevel = Int.random(in: 1...100, using: &random) }
                if overlay.blendLevel == BlendMode.defaultAntiRemovalLevel { overlay.blendLevel = nil }
            }
            return .overlay(overlay)
        case 11 where random.chance(0.2):
            // A layer named in one component would take a surrounding layer's fl_layer_apply.
            return .template(random.pick(["e_$Tag:50", "c_$v,w_100", "b_$Tag", "c_fill,w_10,h_10,g_$n2"] + (depth == 0 ? ["l_text:$Tag:Hi", "l_text:$Tag:Hi/e_sepia/fl_layer_apply,g_north"] : [])))
        case 11:
            return .assign(assignment())
        case 12:
            if depth >= 2 { return .effect(.named("negate")) }
            let then = (0..<Int.random(in: 0...2, using: &random)).map { _ in step(depth: depth + 1) }
            let otherwise = random.chance(0.5) ? (0..<Int.random(in: 1...2, using: &random)).map { _ in step(depth: depth + 1) } : []
            return .conditional(Conditional(condition: condition(), then: then, otherwise: otherwise))
        default:
            return .validate(ImageConstraints(minWidth: random.chance(0.5) ? Int.random(in: 1...100, using: &random) : nil,
                                              maxWidth: random.chance(0.5) ? Int.random(in: 100...20000, using: &random) : nil,
                                              maxPixels: random.chance(0.3) ? 50_000_000 : nil,
                                              formats: random.chance(0.3) ? [.jpeg, .png] : [.webp]))
        }
    }
}
