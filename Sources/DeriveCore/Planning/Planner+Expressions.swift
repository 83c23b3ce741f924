/// The values an expression may name at one step of a chain: the source's (as the chain starts
/// from it, after EXIF orientation unless `a_ignore`), the image the step receives, the page.
struct ExpressionFacts: Sendable {
    var initial: Size
    var current: Size
    var page: Int
    var pageCount: Int

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
    /// The Cloudinary parameter (`w`, `x`).
    public var parameter: String
    /// The canonical text (`iw_div_2`).
    public var expression: String
    /// Pixels, as the step uses them.
    public var value: Int
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
        case .overlay(var o):
            o.x = map(o.x, "x")
            o.y = map(o.y, "y")
            return .overlay(o)
        default:
            return self
        }
    }

    /// The step with its expressions evaluated to pixels, what each came to, and why any has
    /// no value.
    func evaluatingExpressions(_ facts: ExpressionFacts, step index: Int) -> (step: Step, evaluated: [EvaluatedExpression], failures: [String]) {
        var evaluated: [EvaluatedExpression] = []
        var failures: [String] = []
        let bound = mappingLengths { d, parameter in
            guard case .expression(let expression) = d else { return d }
            let written = "\(parameter)_\(expression.canonicalText)"
            switch expression.evaluate(facts.value) {
            case .success(let value):
                // Lengths are at most 16384; far beyond that a value only needs to fail the
                // step's rules, not overflow an Int.
                let pixels = Int(max(-1e9, min(1e9, value)).rounded())
                evaluated.append(EvaluatedExpression(step: index, parameter: parameter, expression: expression.canonicalText, value: pixels))
                return .pixels(pixels)
            case .failure(let failure):
                failures.append("\(written): \(failure)")
                return d
            }
        }
        return (bound, evaluated, failures)
    }

    /// The step with the source's values written into its expressions, for steps the engine
    /// plans later against an image that is no longer the source (after a trim).
    func substitutingSourceFacts(_ facts: ExpressionFacts) -> Step {
        mappingLengths { d, _ in
            guard case .expression(let expression) = d else { return d }
            return .expression(expression.substituting(facts.sourceValue))
        }
    }
}
