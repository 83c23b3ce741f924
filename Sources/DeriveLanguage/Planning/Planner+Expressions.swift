/// The values an expression may name at one step of a chain: the source's (as the chain starts
/// from it, after EXIF orientation unless `a_ignore`), the image the step receives, the page.
struct ExpressionFacts: Sendable {
    var initial: Size
    var current: Size
    var page: Int
    var pageCount: Int
    /// User variables set by the steps so far.
    var variables: [String: VariableBinding] = [:]
    /// Image variables (`$img_current`) set by the steps so far: the engine keeps the image
    /// under each name (`ImageOperation.snapshot`) for the layers that draw it.
    var images: Set<String> = []
    /// The faces found in the job's image: nil when planning from the header (steps that need
    /// it are deferred to the engine) and when the engine found none because detection is off.
    var faceCount: Int?
    /// The job's illustration score: nil when planning from the header (steps that name `ils`
    /// are deferred to the engine, which measures it).
    var illustrationScore: Double?
    /// The job's tags and context, which conditions and assignments read.
    var asset: AssetFacts = .none
    /// Whether the engine plans these steps, so that an unknown face count is final.
    var atRunTime = false

    func value(_ value: PredefinedValue) -> Double? {
        switch value {
        case .initialWidth: Double(initial.width)
        case .initialHeight: Double(initial.height)
        case .initialAspectRatio: Double(initial.width) / Double(initial.height)
        case .width: Double(current.width)
        case .height: Double(current.height)
        case .aspectRatio: Double(current.width) / Double(current.height)
        case .currentPage: Double(page)
        case .pageCount: Double(pageCount)
        case .faceCount: faceCount.map(Double.init)
        case .illustrationScore: illustrationScore
        }
    }

    /// The source's values only: steps planned once a content-dependent size is known get
    /// these written in, and their current size then.
    func sourceValue(_ value: PredefinedValue) -> Double? {
        value.isSourceFact ? self.value(value) : nil
    }
}

/// An expression of a planned output with its value on the source, for `derive explain`.
public struct EvaluatedExpression: Sendable, Hashable {
    /// The step of the canonical chain it belongs to.
    public var step: Int
    /// The Cloudinary parameter (`w`, `x`, `o`, `r`, or `e_blur` for an effect's amount).
    public var parameter: String
    /// The canonical text (`iw_div_2`).
    public var expression: String
    /// Pixels (or the whole number of `o_`, `r_`, `a_` and an effect), as the step uses them.
    public var value: Int
    /// The unrounded value of `ar_`, `dpr_` and `z_`, which take decimals.
    public var exact: Double?

    /// As written in a string: `w_iw_div_2`, `e_blur:w_div_10`.
    public var written: String { EvaluatedExpression.written(parameter: parameter, expression: expression) }

    static func written(parameter: String, expression: String) -> String {
        parameter.hasPrefix("e_") ? "\(parameter):\(expression)" : "\(parameter)_\(expression)"
    }
}

extension Step {
    /// The step with every length given by `transform`, which receives the Cloudinary
    /// parameter the length is written as. An overlay's own chain is left alone: its
    /// expressions are about the overlay image, which is planned when it is loaded.
    func mappingLengths(_ transform: (Length, String) -> Length) -> Step {
        func map(_ d: Length?, _ parameter: String) -> Length? { d.map { transform($0, parameter) } }
        func map(_ region: Region?) -> Region? {
            region.map { Region(x: transform($0.x, "x"), y: transform($0.y, "y"), width: transform($0.width, "w"), height: transform($0.height, "h")) }
        }
        switch self {
        case .resize(var r):
            r.width = map(r.width, "w")
            r.height = map(r.height, "h")
            r.x = map(r.x, "x")
            r.y = map(r.y, "y")
            if case .focus(let x, let y)? = r.gravity { r.gravity = .focus(x: transform(x, "x"), y: transform(y, "y")) }
            return .resize(r)
        case .effect(.blurRegion(let amount, let region)):
            return .effect(.blurRegion(amount, map(region)))
        case .effect(.pixelateRegion(let size, let region)):
            return .effect(.pixelateRegion(size, map(region)))
        case .effect(.shadow(let strength, let color, let x, let y)):
            return .effect(.shadow(strength, color: color, x: transform(x, "x"), y: transform(y, "y")))
        case .effect(.gradientFade(let strength, let edges, let x, let y)):
            return .effect(.gradientFade(strength, edges: edges, x: map(x, "x"), y: map(y, "y")))
        case .overlay(var o):
            o.x = map(o.x, "x")
            o.y = map(o.y, "y")
            return .overlay(o)
        default:
            return self
        }
    }

    /// The step with every whole number (`o_`, the radii of `r_`, an effect's amount) given by
    /// `transform`, which receives the Cloudinary parameter it is written as.
    func mappingWholeNumbers(_ transform: (WholeNumber, String) -> WholeNumber) -> Step {
        switch self {
        case .effect(let e):
            guard let amount = e.amount else { return self }
            return .effect(EffectRules.with(e, amount: transform(amount, "e_" + e.name)))
        case .opacity(let o):
            return .opacity(transform(o, "o"))
        case .round(var r):
            if case .corners(let radii) = r.radius { r.radius = .corners(radii.map { transform($0, "r") }) }
            return .round(r)
        default:
            return self
        }
    }

    /// The step with its expressions evaluated to pixels (or whole numbers), what each came to,
    /// and why any has no value.
    func evaluatingExpressions(_ facts: ExpressionFacts, step index: Int) -> (step: Step, evaluated: [EvaluatedExpression], failures: [String]) {
        var evaluated: [EvaluatedExpression] = []
        var failures: [String] = []
        func exactValue(of expression: ArithmeticExpression, parameter: String) -> Double? {
            value(of: expression, parameter: parameter, exact: true).map { _ in evaluated.last!.exact! }
        }
        func value(of expression: ArithmeticExpression, parameter: String, exact: Bool = false) -> Int? {
            switch facts.evaluate(expression) {
            case .success(let value):
                // Numbers here are at most 16384; far beyond that a value only needs to fail
                // the step's rules, not overflow an Int.
                let whole = Int(max(-1e9, min(1e9, value)).rounded())
                var entry = EvaluatedExpression(step: index, parameter: parameter, expression: expression.canonicalText, value: whole)
                if exact {
                    entry.exact = Decimal6.quantize(max(-1e9, min(1e9, value)))
                    evaluated.append(entry)
                    return whole
                }
                // `r_h_div_2` is one radius written for four corners: listed once.
                if !evaluated.contains(entry) { evaluated.append(entry) }
                return whole
            case .failure(let failure):
                let failure = "\(EvaluatedExpression.written(parameter: parameter, expression: expression.canonicalText)): \(failure)"
                if !failures.contains(failure) { failures.append(failure) }
                return nil
            }
        }
        let numbered = mappingWholeNumbers { n, parameter in
            guard case .expression(let expression) = n else { return n }
            return value(of: expression, parameter: parameter).map(WholeNumber.value) ?? n
        }
        var bound = numbered.mappingLengths { d, parameter in
            guard case .expression(let expression) = d else { return d }
            return value(of: expression, parameter: parameter).map(Length.pixels) ?? d
        }
        // Decimals: the resize's aspect ratio, density and zoom; a rotation's angle.
        switch bound {
        case .resize(var r):
            if let e = r.aspectRatioExpression, let v = exactValue(of: e, parameter: "ar") { (r.aspectRatio, r.aspectRatioExpression) = (v, nil) }
            if let e = r.dprExpression, let v = exactValue(of: e, parameter: "dpr") { (r.dpr, r.dprExpression) = (v, nil) }
            if let e = r.zoomExpression, let v = exactValue(of: e, parameter: "z") { (r.zoom, r.zoomExpression) = (v, nil) }
            bound = .resize(r)
        case .border(var b):
            if let e = b.widthExpression, let v = value(of: e, parameter: "bo") { (b.width, b.widthExpression) = (v, nil) }
            bound = .border(b)
        case .rotate(var r):
            if let e = r.angleExpression, let v = value(of: e, parameter: "a") {
                (r.angle, r.angleExpression) = (Double(v), nil)
                if ResizeGeometry.isRightAngle(r.angle) { r.background = nil }
            }
            bound = .rotate(r)
        default:
            break
        }
        return (bound, evaluated, failures)
    }

    /// The step with the source's values written into its expressions, for steps the engine
    /// plans later against an image that is no longer the source (after a trim).
    func substitutingSourceFacts(_ facts: ExpressionFacts) -> Step {
        writingAssetValues(facts.asset).mappingAllExpressions { $0.substituting(facts.sourceValue) }
    }
}
