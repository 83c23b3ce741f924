/// Bounds of output settings that are Derive's own.
public enum EncodingLimits {
    public static let density = 1...1200
}

/// Ranges and defaults of effect amounts (Cloudinary's, where Cloudinary documents one).
public enum EffectRules {
    public static let trimDefaultTolerance = 10
    public static let tintDefaultColor = Color.blue
    /// e_shadow's colour (Cloudinary: "server default: gray") and offset, which Cloudinary
    /// gives only as "bottom right": Derive's is 8 pixels each way.
    public static let shadowDefaultColor = Color.gray
    public static let shadowDefaultOffset = 8
    /// e_dropshadow's shadow: Cloudinary has no colour or strength for it; Derive's is black at
    /// half opacity.
    public static let dropShadowColor = Color.black
    public static let dropShadowOpacity = 0.5

    /// The amount's range, from the effect's declaration (`StepCatalogue.effects`).
    public static func range(of kind: Effect.Kind) -> ClosedRange<Int>? { kind == .declared ? nil : StepCatalogue.effect(kind).amount?.range }

    /// The amount's default, from the effect's declaration.
    public static func defaultAmount(of kind: Effect.Kind) -> Int? {
        guard kind != .declared, case .number(.value(let n))? = StepCatalogue.effect(kind).amount?.defaultValue else { return nil }
        return n
    }

    /// Builds an effect from its kind, amount and colour, using defaults for what is missing.
    static func make(_ kind: Effect.Kind, amount: WholeNumber?, color: Color?) -> Effect {
        let n = amount ?? .value(defaultAmount(of: kind) ?? 0)
        switch kind {
        case .tint: return .tint(amount: n, color: color ?? tintDefaultColor)
        case .replaceColor: return .replaceColor(n, to: color ?? .black, from: nil)
        // The parsers require a colour; this is only a fallback.
        case .theme: return .theme(n, color: color ?? .white)
        case .makeTransparent: return .makeTransparent(n, color: color)
        case .assistColorblind: return .assistColorblind(n, xray: false)
        case .recolor: return .recolor([1, 0, 0, 0, 1, 0, 0, 0, 1])
        case .cartoonify: return .cartoonify(n, colors: .auto)
        case .vectorize: return .vectorize(n)
        // The parsers require a form; this is only a fallback.
        case .distort: return .distort(.arc(0))
        case .gradientFade: return .gradientFade(n, edges: .one, x: nil, y: nil)
        case .shadow: return .shadow(n, color: color ?? shadowDefaultColor, x: .pixels(shadowDefaultOffset), y: .pixels(shadowDefaultOffset))
        case .blurRegion: return .blurRegion(n, nil)
        case .pixelateRegion: return .pixelateRegion(n, nil)
        // Built from their declaration's values, never from a kind.
        case .declared: preconditionFailure("a declared effect is built from its values")
        }
    }

    /// The name of the amount field in JSON (`{"blur": {"strength": 300}}`), from the declaration.
    static func amountField(of kind: Effect.Kind) -> String? { kind == .declared ? nil : StepCatalogue.effect(kind).amount?.key }

    static func takesColor(_ kind: Effect.Kind) -> Bool { kind != .declared && kind != .theme && StepCatalogue.effect(kind).parameter("color") != nil }

    /// Effects on a rectangle given by `x`, `y`, `width` and `height`.
    public static func takesRegion(_ kind: Effect.Kind) -> Bool { kind == .blurRegion || kind == .pixelateRegion }

    /// The same effect with another blend (or amount), keeping its other settings (the mode of
    /// e_improve, the bias of e_fill_light, a colour, a region).
    static func with(_ effect: Effect, amount: WholeNumber) -> Effect {
        switch effect {
        case .tint(_, let color): .tint(amount: amount, color: color)
        case .tintGradient(_, let gradient): .tintGradient(amount: amount, gradient: gradient)
        case .blurRegion(_, let region): .blurRegion(amount, region)
        case .pixelateRegion(_, let region): .pixelateRegion(amount, region)
        case .declared(let d): .declared(d.with(amount: amount))
        case .replaceColor(_, let to, let from): .replaceColor(amount, to: to, from: from)
        case .theme(_, let color): .theme(amount, color: color)
        case .makeTransparent(_, let color): .makeTransparent(amount, color: color)
        case .assistColorblind(_, let xray): .assistColorblind(amount, xray: xray)
        case .cartoonify(_, let colors): .cartoonify(amount, colors: colors)
        case .vectorize(_, let trace): .vectorize(amount, trace: trace)
        case .shadow(_, let color, let x, let y): .shadow(amount, color: color, x: x, y: y)
        case .gradientFade(_, let edges, let x, let y): .gradientFade(amount, edges: edges, x: x, y: y)
        default: make(effect.kind, amount: amount, color: nil)
        }
    }

    /// Cloudinary's e_recolor takes a 3x3 (RGB) or 4x4 (RGBA) matrix; it documents no range
    /// for the numbers, so ±100 is Derive's bound.
    static func recolorIssues(_ matrix: [Double]) -> [FieldIssue] {
        if matrix.count != 9 && matrix.count != 16 {
            return [FieldIssue(field: "matrix", reason: "needs 9 numbers (3x3, RGB) or 16 (4x4, RGBA), got \(matrix.count)")]
        }
        if let bad = matrix.first(where: { !$0.isFinite || abs($0) > 100 }) {
            return [FieldIssue(field: "matrix", reason: "numbers must be between -100 and 100, got \(Decimal6.string(bad))", bound: .derive)]
        }
        return []
    }

    /// replace_color with a source colour.
    static func with(_ effect: Effect, from: Color) -> Effect {
        guard case .replaceColor(let tolerance, let to, _) = effect else { return effect }
        return .replaceColor(tolerance, to: to, from: from)
    }

    /// The same effect on another region.
    static func with(_ effect: Effect, region: Region?) -> Effect {
        switch effect {
        case .blurRegion(let n, _): .blurRegion(n, region)
        case .pixelateRegion(let n, _): .pixelateRegion(n, region)
        default: effect
        }
    }
}

/// The semantic rules of each step: ranges, and parameters that contradict each other. Both
/// parsers build a step and then ask these rules, so JSON and strings are held to one standard
/// and report the same reasons.
enum StepRules {
    static let maxFraction = 16.0

    static func issues(in step: Step, limits: ChainLimits) -> [FieldIssue] {
        switch step {
        case .resize(let r): return resizeIssues(r, limits: limits)
        case .rotate(let r):
            return r.angle.isFinite && abs(r.angle) <= 1_000_000
                ? [] : [FieldIssue(field: "angle", reason: "must be a finite number of degrees")]
        case .round(let r): return roundIssues(r, limits: limits)
        case .effect(.recolor(let matrix)):
            return EffectRules.recolorIssues(matrix)
        case .effect(.declared(let d)):
            return d.declaration.issues(d.values)
        case .effect(.distort(let d)): return distortIssues(d, limits: limits)
        case .effect(let e):
            guard let range = EffectRules.range(of: e.kind), let amount = e.amount else { return [] }
            let field = EffectRules.amountField(of: e.kind) ?? "amount"
            // replace_color's upper end is Derive's (Cloudinary documents none).
            var issues = check(amount, in: range, field: field, derivesLimits: e.kind == .replaceColor)
            // Cloudinary's range for the colour reduction (SDK reference, Cartoonify).
            if case .cartoonify(_, .reduction(let r)) = e { issues += check(r, in: 0...100, field: "reduction") }
            if case .vectorize(_, let trace) = e { issues += trace.issues() }
            switch e {
            case .shadow(_, _, let x, let y):
                issues += offsetIssues(x, field: "x", limits: limits) + offsetIssues(y, field: "y", limits: limits)
            case .gradientFade(_, _, let x, let y):
                issues += offsetIssues(x, field: "x", limits: limits) + offsetIssues(y, field: "y", limits: limits)
                // Cloudinary: "Only one direction can be specified"; chain fades for more edges.
                if x != nil && y != nil { issues.append(FieldIssue(field: "y", reason: "fades from one edge: give x or y, not both (chain two fades for two edges)")) }
            case .blurRegion(_, let region?), .pixelateRegion(_, let region?):
                issues += offsetIssues(region.x, field: "x", limits: limits) + offsetIssues(region.y, field: "y", limits: limits)
                issues += dimensionIssues(region.width, field: "width", limits: limits)
                issues += dimensionIssues(region.height, field: "height", limits: limits)
            default: break
            }
            return issues
        case .trim(let t): return check(t.tolerance, in: 0...100, field: "tolerance")
        case .background: return []
        // An expression is checked by the planner once evaluated.
        case .border(let b): return b.widthExpression != nil ? [] : check(b.width, in: 1...min(1000, limits.maxOutputDimension), field: "width", derivesLimits: true)
        case .opacity(let o): return check(o, in: 0...100, field: "percent")
        case .overlay(let o): return overlayIssues(o, limits: limits)
        case .validate(let c): return constraintIssues(c)
        case .preset(let name): return presetNameIssues(name, field: "")
        case .lut(let name):
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            return !name.isEmpty && !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) ? []
                : [FieldIssue(field: "", reason: "a LUT is a file name such as warm.cube or folder/film.3dl, got \(Quoted(name))")]
        case .assign(let a):
            if case .text(let t) = a.value, t.utf8.count > 1000 { return [FieldIssue(field: "text", reason: "is \(t.utf8.count) bytes; the limit is 1000")] }
            return []
        // Each branch's steps are checked as they are read.
        case .conditional: return []
        // Read, and checked, once the planner has written the variables in.
        case .template(let t): return t.utf8.count > 1000 ? [FieldIssue(field: "", reason: "is \(t.utf8.count) bytes; the limit is 1000")] : []
        case .quality(let q):
            if case .value(let v) = q { return check(v, in: 1...100, field: "quality") }
            return []
        }
    }

    /// `range` is Cloudinary's documented range, or with `derivesLimits` Derive's own limits
    /// (a width up to 16384): a value past them is Cloudinary's, refused by Derive, while one
    /// below a lower end of 0 or 1 is no size at all.
    static func check(_ value: Int, in range: ClosedRange<Int>, field: String, derivesLimits: Bool = false) -> [FieldIssue] {
        guard !range.contains(value) else { return [] }
        let beyondDerive = derivesLimits && (value > range.upperBound || range.lowerBound < 0)
        return [FieldIssue(field: field, reason: "must be between \(range.lowerBound) and \(range.upperBound), got \(value)",
                           bound: beyondDerive ? .derive : .cloudinary)]
    }

    /// An expression is checked by the planner once evaluated on a source.
    static func check(_ value: WholeNumber, in range: ClosedRange<Int>, field: String, derivesLimits: Bool = false) -> [FieldIssue] {
        guard case .value(let n) = value else { return [] }
        return check(n, in: range, field: field, derivesLimits: derivesLimits)
    }

    static func presetNameIssues(_ name: String, field: String) -> [FieldIssue] {
        isSafeName(name) ? [] : [FieldIssue(field: field, reason: "preset names are 1–64 characters of A-Z a-z 0-9 . _ - and inner spaces, got \(Quoted(name))")]
    }

    /// Output and preset names end up in storage keys, so they are restricted to a safe set.
    static func isSafeName(_ name: String) -> Bool {
        // Inner spaces, as Cloudinary's named transformations have (`t_named%20with%20spaces`).
        guard let first = name.first, (1...64).contains(name.count), first != ".", first != " ", name.last != " " else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." || $0 == " ") }
    }

    static func dimensionIssues(_ d: Length?, field: String, limits: ChainLimits) -> [FieldIssue] {
        switch d {
        case nil: return []
        case .pixels(let n): return check(n, in: 1...limits.maxOutputDimension, field: field, derivesLimits: true)
        case .fraction(let f):
            return f > 0 && f <= maxFraction ? []
                : [FieldIssue(field: field, reason: "must be a fraction above 0 and at most \(Decimal6.string(maxFraction)), got \(Decimal6.string(f))")]
        case .expression: return []  // checked by the planner once evaluated
        }
    }

    static func offsetIssues(_ d: Length?, field: String, limits: ChainLimits) -> [FieldIssue] {
        switch d {
        case nil: return []
        case .pixels(let n): return check(n, in: -limits.maxOutputDimension...limits.maxOutputDimension, field: field, derivesLimits: true)
        case .fraction(let f):
            return abs(f) <= 1 ? [] : [FieldIssue(field: field, reason: "must be a fraction between -1 and 1, got \(Decimal6.string(f))")]
        case .expression: return []
        }
    }

    static func focusIssues(_ d: Length, field: String, limits: ChainLimits) -> [FieldIssue] {
        switch d {
        case .pixels(let n): return check(n, in: 0...limits.maxOutputDimension, field: field, derivesLimits: true)
        case .fraction(let f):
            return (0...1).contains(f) ? [] : [FieldIssue(field: field, reason: "must be a fraction between 0 and 1, got \(Decimal6.string(f))")]
        case .expression: return []
        }
    }

    static func resizeIssues(_ r: Resize, limits: ChainLimits) -> [FieldIssue] {
        var issues = dimensionIssues(r.width, field: "width", limits: limits)
        issues += dimensionIssues(r.height, field: "height", limits: limits)
        issues += offsetIssues(r.x, field: "x", limits: limits)
        issues += offsetIssues(r.y, field: "y", limits: limits)
        let mode = r.mode.rawValue
        if r.hasAspectRatio {
            if let ar = r.aspectRatio, !(ar >= 0.001 && ar <= 1000) {
                issues.append(FieldIssue(field: "aspectRatio", reason: "must be between 0.001 and 1000, got \(Decimal6.string(ar))"))
            }
            if r.width != nil && r.height != nil {
                issues.append(FieldIssue(field: "aspectRatio", reason: "cannot be combined with both width and height; give one of them"))
            }
            if r.width == nil && r.height == nil && !r.mode.takesGravity {
                issues.append(FieldIssue(field: "aspectRatio", reason: "needs a width or a height with mode \(mode)"))
            }
        } else if r.width == nil && r.height == nil && !(r.mode == .crop && FaceGeometry.cutsAroundFaces(r)) {
            issues.append(FieldIssue(field: "", reason: "needs a width, a height or an aspect ratio"))
        }
        if r.zoom != nil || r.zoomExpression != nil {
            if let zoom = r.zoom, !(zoom >= 0.1 && zoom <= 10) {
                issues.append(FieldIssue(field: "zoom", reason: "must be between 0.1 and 10, got \(Decimal6.string(zoom))"))
            }
            if !FaceGeometry.cutsAroundFaces(r) {
                issues.append(FieldIssue(field: "zoom", reason: "applies to modes thumb and crop with a face gravity (face, faces and their :center and :auto forms)"))
            }
        }
        if r.relative && !(r.width?.isFraction == true || r.height?.isFraction == true) {
            issues.append(FieldIssue(field: "relative", reason: "with a whole-number width or height: known to Cloudinary, not supported by Derive: Derive reads fl_relative with a fractional one, relative to the image the overlay is placed on (w_0.25, or w_1.0 for its whole width)"))
        }
        if let dpr = r.dpr, !(dpr > 0 && dpr <= 8) {
            issues.append(FieldIssue(field: "dpr", reason: "must be above 0 and at most 8, got \(Decimal6.string(dpr))"))
        }
        if !r.mode.takesGravity {
            let why = "does not apply to mode \(mode), which neither crops nor pads"
            if r.gravity != nil { issues.append(FieldIssue(field: "gravity", reason: why)) }
            if r.x != nil { issues.append(FieldIssue(field: "x", reason: why)) }
            if r.y != nil { issues.append(FieldIssue(field: "y", reason: why)) }
        }
        if r.autoTurn != nil && !((r.width != nil && r.height != nil) || r.hasAspectRatio) {
            issues.append(FieldIssue(field: "autoTurn", reason: "turns by the requested box's orientation, so it needs a width and a height, or an aspect ratio"))
        }
        if let fill = r.padFill {
            if !r.mode.pads {
                issues.append(FieldIssue(field: "padFill", reason: "applies only to the pad modes (pad, lpad, mpad), not \(mode)"))
            }
            if r.background != nil {
                issues.append(FieldIssue(field: "padFill", reason: "cannot be combined with background; give one of them"))
            }
            if case .blurred(let i, let b) = fill {
                issues += check(i, in: PadFill.intensityRange, field: "padFill.blurred.intensity")
                issues += check(b, in: PadFill.brightnessRange, field: "padFill.blurred.brightness")
            }
        }
        if r.background != nil && !r.mode.takesBackground {
            issues.append(FieldIssue(field: "background", reason: "applies only to the pad modes (pad, lpad, mpad, fill_pad, auto_pad), not \(mode)"))
        }
        // Cloudinary supports fill_pad and auto_pad only with automatic gravity.
        if r.mode == .fillPad || r.mode == .autoPad, let g = r.gravity, g != .smart(.auto) {
            issues.append(FieldIssue(field: "gravity", reason: "mode \(mode) is content-aware; it takes gravity auto only"))
        }
        switch r.gravity {
        case .compass?:
            if r.mode == .auto {
                issues.append(FieldIssue(field: "gravity", reason: "mode auto is always content-aware; use gravity auto or entropy, or mode fill"))
            }
        case .smart(let s)?:
            if r.mode.pads {
                issues.append(FieldIssue(field: "gravity", reason: "\(s.rawValue) chooses a crop; the pad modes take a compass gravity"))
            }
            // Offsets move a face gravity's centre; attention and entropy have no centre to move.
            // fill_pad and auto_pad take gravity auto whether it is written or implied, so their
            // offsets are read alike either way (the printer writes the implied g_auto).
            if (r.x != nil || r.y != nil) && !FaceGeometry.cutsAroundFaces(r) && r.mode != .fillPad && r.mode != .autoPad {
                let why = s.faceTarget == nil ? "offsets cannot be combined with content-aware gravity \(s.rawValue)"
                    : "offsets move the centre of a face gravity only with modes thumb and crop"
                issues.append(FieldIssue(field: r.x != nil ? "x" : "y", reason: why))
            }
        case .focus(let fx, let fy)?:
            issues += focusIssues(fx, field: "gravity.x", limits: limits)
            issues += focusIssues(fy, field: "gravity.y", limits: limits)
            if r.mode.pads || r.mode == .auto {
                issues.append(FieldIssue(field: "gravity", reason: "a focal point chooses a crop; mode \(mode) does not take one"))
            }
            if r.x != nil || r.y != nil {
                issues.append(FieldIssue(field: r.x != nil ? "x" : "y", reason: "offsets cannot be combined with a focal-point gravity"))
            }
        case nil:
            break
        }
        return issues
    }

    static func roundIssues(_ r: RoundCorners, limits: ChainLimits) -> [FieldIssue] {
        guard case .corners(let radii) = r.radius else { return [] }
        guard (1...4).contains(radii.count) else {
            return [FieldIssue(field: "radius", reason: "takes 1 to 4 radii, got \(radii.count)")]
        }
        // One radius for every corner (`r_20`, normalised to four) is one problem, not four.
        if Set(radii).count == 1 { return check(radii[0], in: 0...limits.maxOutputDimension, field: "radius", derivesLimits: true) }
        return radii.enumerated().flatMap { i, value in
            check(value, in: 0...limits.maxOutputDimension, field: "radius[\(i)]", derivesLimits: true)
        }
    }

    static func overlayIssues(_ o: Overlay, limits: ChainLimits) -> [FieldIssue] {
        var issues: [FieldIssue] = []
        switch o.source {
        case .image(let source):
            if source.isEmpty || source.count > 4096 || source.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) {
                issues.append(FieldIssue(field: "image", reason: "must be a source URI or name of 1–4096 characters without spaces"))
            }
        case .text(let t):
            issues += textIssues(t, limits: limits)
        case .snapshot:
            break
        }
        return issues + placementIssues(o, limits: limits)
    }

    /// What a text layer's own settings must be (fields under `text.`).
    static func textIssues(_ t: TextLayer, limits: ChainLimits) -> [FieldIssue] {
        var issues: [FieldIssue] = []
        if t.text.isEmpty || t.text.count > limits.maxTextLength {
            issues.append(FieldIssue(field: "text.text", reason: "must be 1 to \(limits.maxTextLength) characters, got \(t.text.count)"))
        }
        issues += check(t.size, in: 1...1000, field: "text.size", derivesLimits: true)
        if let width = t.width { issues += check(width, in: 1...limits.maxOutputDimension, field: "text.width", derivesLimits: true) }
        // A stroke is a dilation by a disc of its width, whose cost grows with its square.
        if let stroke = t.stroke { issues += check(stroke.width, in: 1...50, field: "text.stroke.width", derivesLimits: true) }
        // Lines may overlap, not cross: each line sits at least a pixel below the last.
        if let spacing = t.lineSpacing { issues += check(spacing, in: (1 - t.size)...1000, field: "text.lineSpacing", derivesLimits: true) }
        if !(1...64).contains(t.font.count) || !t.font.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == " " || $0 == "-") }) {
            issues.append(FieldIssue(field: "text.font", reason: "font names are 1–64 letters, digits, spaces or hyphens, got \(Quoted(t.font))"))
        }
        return issues
    }

    /// A layer placed on faces is drawn over each face: the blend modes that take one layer as
    /// a whole have no meaning there.
    static func blendIssues(_ o: Overlay) -> [FieldIssue] {
        // Blend modes that combine pixel by pixel combine the layers of every face at once;
        // fl_cutter cuts the image to one layer's rectangle and e_displace moves it by one map.
        guard let blend = o.blend, [.cutter, .displace, .replaceImage].contains(blend), o.gravity?.needsFaces == true else { return [] }
        return [FieldIssue(field: "blend", reason: "\(blend.rawValue) takes one layer as a whole (cutter cuts the image to it, displace moves the image by it, replace_image makes it the image); a layer placed on faces (gravity face or faces) is one per face")]
    }

    static func placementIssues(_ o: Overlay, limits: ChainLimits) -> [FieldIssue] {
        var issues: [FieldIssue] = []
        switch o.gravity {
        case .smart(let s)? where s.faceTarget != nil:
            break
        case .smart?, .focus?:
            issues.append(FieldIssue(field: "gravity", reason: "overlays are placed with a compass gravity (\(Compass.allCases.map(\.rawValue).joined(separator: ", "))) or on faces (face, faces)"))
        case .compass?, nil:
            break
        }
        issues += blendIssues(o)
        if o.regionRelative && o.gravity?.needsFaces != true {
            issues.append(FieldIssue(field: "regionRelative", reason: "sizes the overlay by the face it is placed on, so it needs gravity face or faces"))
        }
        issues += offsetIssues(o.x, field: "x", limits: limits)
        issues += offsetIssues(o.y, field: "y", limits: limits)
        return issues
    }

    static func constraintIssues(_ c: ImageConstraints) -> [FieldIssue] {
        var issues: [FieldIssue] = []
        if c.isEmpty { issues.append(FieldIssue(field: "", reason: "needs at least one constraint (minWidth, maxWidth, minHeight, maxHeight, maxPixels, formats)")) }
        let bound = 1...(1 << 30)
        for (field, value) in [("minWidth", c.minWidth), ("maxWidth", c.maxWidth), ("minHeight", c.minHeight),
                               ("maxHeight", c.maxHeight), ("maxPixels", c.maxPixels)] {
            if let value { issues += check(value, in: bound, field: field) }
        }
        if let lo = c.minWidth, let hi = c.maxWidth, lo > hi {
            issues.append(FieldIssue(field: "minWidth", reason: "is larger than maxWidth (\(lo) > \(hi))"))
        }
        if let lo = c.minHeight, let hi = c.maxHeight, lo > hi {
            issues.append(FieldIssue(field: "minHeight", reason: "is larger than maxHeight (\(lo) > \(hi))"))
        }
        if let formats = c.formats, formats.isEmpty {
            issues.append(FieldIssue(field: "formats", reason: "must list at least one format"))
        }
        return issues
    }

    /// Rules for output settings; the format is nil when it is `original` or not yet known.
    static func settingsIssues(_ s: OutputSettings, limits: ChainLimits) -> [FieldIssue] {
        var issues: [FieldIssue] = []
        let format = s.format.flatMap { $0.isConcrete ? $0 : nil }
        if case .value(let q)? = s.quality { issues += check(q, in: 1...100, field: "quality") }
        if let effort = s.effort { issues += check(effort, in: 0...9, field: "effort") }
        // Cloudinary documents no range; 1200 dpi is Derive's (a page rasterised beyond it
        // soon passes the pixel limit).
        if let density = s.density { issues += check(density, in: EncodingLimits.density, field: "density", derivesLimits: true) }
        if let frame = s.frame { issues += check(frame, in: 1...10_000, field: "frame", derivesLimits: true) }
        // A GIF's NETSCAPE loop count is 16 bits.
        if let loop = s.loop { issues += check(loop, in: 0...65_535, field: "loop") }
        // GIF stores a frame's time in hundredths of a second, 16 bits.
        if let delay = s.delay { issues += check(delay, in: 0...655_350, field: "delay") }
        if let pages = s.pages {
            issues += check(pages.highestNamed, in: 1...10_000, field: "pages", derivesLimits: true)
            if s.frame != nil {
                issues.append(FieldIssue(field: "pages", reason: "cannot be combined with frame; give one page (frame) or several (pages)"))
            }
        }
        if s.lossless == true {
            if let format, !format.supportsLossless {
                let why = format == .jpeg ? "jpeg has no lossless mode" : "\(format.rawValue) is always lossless"
                issues.append(FieldIssue(field: "lossless", reason: "\(why); lossless applies to webp, avif and jxl"))
            }
            if let q = s.quality, !q.isAuto {
                issues.append(FieldIssue(field: "quality", reason: "cannot be combined with lossless"))
            }
            if let chroma = s.chromaSubsampling, chroma != .auto {
                issues.append(FieldIssue(field: "chromaSubsampling", reason: "cannot be combined with lossless"))
            }
        }
        if s.progressive == true, let format, !format.supportsProgressive {
            issues.append(FieldIssue(field: "progressive", reason: "applies to jpeg, png and gif, not \(format.rawValue)"))
        }
        if let chroma = s.chromaSubsampling, chroma != .auto, let format, !format.supportsChromaSubsampling {
            issues.append(FieldIssue(field: "chromaSubsampling", reason: "applies to jpeg and avif, not \(format.rawValue)"))
        }
        if let densities = s.densities {
            if !(1...4).contains(densities.count) {
                issues.append(FieldIssue(field: "densities", reason: "lists 1 to 4 densities, got \(densities.count)"))
            }
            if let bad = densities.first(where: { !($0 > 0 && $0 <= 8) }) {
                issues.append(FieldIssue(field: "densities", reason: "each must be above 0 and at most 8, got \(Decimal6.string(bad))"))
            }
            if s.breakpoints != nil {
                issues.append(FieldIssue(field: "densities", reason: "cannot be combined with breakpoints; make one output of each"))
            }
        }
        if let b = s.breakpoints {
            issues += check(b.minWidth, in: 1...limits.maxOutputDimension, field: "breakpoints.minWidth", derivesLimits: true)
            issues += check(b.maxWidth, in: 1...limits.maxOutputDimension, field: "breakpoints.maxWidth", derivesLimits: true)
            if b.minWidth > b.maxWidth {
                issues.append(FieldIssue(field: "breakpoints.minWidth", reason: "is larger than maxWidth (\(b.minWidth) > \(b.maxWidth))"))
            }
            issues += check(b.maxCount, in: 1...limits.maxBreakpoints, field: "breakpoints.maxCount", derivesLimits: true)
            switch b.spacing {
            case .step(let step): issues += check(step, in: 1...limits.maxOutputDimension, field: "breakpoints.step", derivesLimits: true)
            case .bytes(let bytes): issues += check(bytes, in: 1...100_000_000, field: "breakpoints.bytes", derivesLimits: true)
            }
        }
        return issues
    }

    /// A job's source: a URL of a supported scheme or an absolute local path.
    static func sourceIssues(_ source: String) -> [FieldIssue] {
        if source.isEmpty || source.count > 8192 {
            return [FieldIssue(field: "", reason: "must be 1 to 8192 characters")]
        }
        if source.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return [FieldIssue(field: "", reason: "must not contain control characters")]
        }
        if source.hasPrefix("/") { return [] }
        let schemes = ["http", "https", "s3", "file", "data"]
        guard let colon = source.firstIndex(of: ":") else {
            return [FieldIssue(field: "", reason: "must be a URL (\(schemes.joined(separator: ", "))) or an absolute path, got \(Quoted(source))")]
        }
        let scheme = source[..<colon].lowercased()
        guard schemes.contains(scheme) else {
            return [FieldIssue(field: "", reason: "unsupported scheme \(Quoted(scheme)); use one of \(schemes.joined(separator: ", "))\(Suggest.hint(for: scheme, among: schemes))")]
        }
        return []
    }
}
