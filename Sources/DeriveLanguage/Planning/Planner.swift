/// Turns a resolved job and a source's header facts into a plan: per output the concrete
/// operations with exact sizes, and one decode size for the whole job — the smallest decode
/// that serves every output at full quality, so the engine shrinks on load and decodes once.
public struct Planner: Sendable {
    public var limits: ChainLimits
    /// When an output needs faces, the decode keeps at least this shorter side (where the source
    /// has it), so that the detector, which enlarges at most twice, sees faces of 5% of the
    /// shorter side at its working size (`FaceDetectionSettings.shortSide`). 0: no minimum.
    public var faceDecodeShortSide: Int
    /// For a detector that reads a canvas (CenterFace), the canvas: when an output needs faces,
    /// the decode is then at least the size that fits it (aspect kept), which is all the detector
    /// reads, so the detector's copy is the decode itself when no output needs more pixels, and
    /// `faceDecodeShortSide` is not used. nil: the shorter-side rule.
    public var faceDecodeCanvas: Size?

    public init(limits: ChainLimits = .default, faceDecodeShortSide: Int = FaceDetectionSettings.defaultShortSide / 2,
                faceDecodeCanvas: Size? = nil) {
        self.limits = limits
        self.faceDecodeShortSide = faceDecodeShortSide
        self.faceDecodeCanvas = faceDecodeCanvas
    }

    /// The planner a job runs with when `faces` describes detection and the detector that will
    /// look reads a canvas (CenterFace) or not (dlib): the engine's, and `derive explain`'s.
    public init(limits: ChainLimits = .default, faces: FaceDetectionSettings, detectorReadsCanvas: Bool) {
        self.init(limits: limits, faceDecodeShortSide: faces.enabled ? faces.shortSide / 2 : 0,
                  faceDecodeCanvas: faces.enabled && detectorReadsCanvas ? faces.canvas : nil)
    }

    /// The decode scale face detection needs on an upright source of `oriented` size: what fits
    /// `canvas` when there is one, else a shorter side of `shortSide` (0: none).
    public static func faceDecodeScale(_ oriented: Size, shortSide: Int, canvas: Size?) -> Double {
        if let canvas {
            return min(Double(canvas.width) / Double(oriented.width), Double(canvas.height) / Double(oriented.height))
        }
        return shortSide > 0 ? Double(shortSide) / Double(min(oriented.width, oriented.height)) : 0
    }

    public func plan(_ job: ResolvedJob, source: SourceFacts) throws(ValidationError) -> Plan {
        var issues: [ValidationIssue] = []
        if source.width < 1 || source.height < 1 {
            throw ValidationError(location: "source", reason: "has no pixels (\(source.width)x\(source.height))")
        }

        // 1. Each output planned at full resolution, in the oriented source's coordinates.
        var drafts: [Draft] = []
        for (index, output) in job.outputs.enumerated() {
            drafts += draft(output, index: index, source: source, asset: job.asset, issues: &issues)
        }
        if !issues.isEmpty { throw ValidationError(issues) }

        // 2. One page selection for the decode; outputs that want another page pick it.
        let pages = pageSelection(drafts)
        if case .all = pages {
            for i in drafts.indices {
                if let selected = drafts[i].pages {
                    drafts[i].output.operations.insert(.selectPages(selected), at: 0)
                } else if !drafts[i].output.keepsAnimation {
                    drafts[i].output.operations.insert(.selectPage(drafts[i].page), at: 0)
                }
            }
        }

        // 3. The decode scale is the largest any output needs; raster sources never upscale.
        let oriented = source.orientedSize
        var scale = drafts.map { demand($0.output.operations, start: oriented) }.max() ?? 1
        if drafts.contains(where: { $0.output.operations.contains { $0.needsFaces } }) {
            scale = max(scale, Self.faceDecodeScale(oriented, shortSide: faceDecodeShortSide, canvas: faceDecodeCanvas))
        }
        if source.format.isScalable {
            let dimensionCap = Double(limits.maxOutputDimension) / Double(max(oriented.width, oriented.height))
            let pixelCap = (Double(limits.maxOutputPixels) / Double(oriented.pixels)).squareRoot()
            scale = min(scale, dimensionCap, pixelCap)
        } else {
            scale = min(scale, 1)
        }
        let decodeSize = scale == 1 ? oriented : Size(ResizeGeometry.px(Double(oriented.width) * scale),
                                                     ResizeGeometry.px(Double(oriented.height) * scale))

        // 4. Operations rewritten for the decoded image.
        let outputs = drafts.map { draft -> PlannedOutput in
            var output = draft.output
            output.operations = rebase(output.operations, full: oriented, decoded: decodeSize)
            return output
        }
        return Plan(source: source, decode: DecodePlan(size: decodeSize, scale: Decimal6.quantize(scale), pages: pages), outputs: outputs)
    }

    /// Plans steps on an image of a known size. The engine calls this for what the plan
    /// deferred (after a trim) and for an overlay's own chain.
    /// `faceCount` is the number of faces the engine found in the job's image, nil when it did
    /// not look (`fc` is then refused).
    public func operations(for steps: [Step], input: Size, sourceFormat: ImageFormat? = nil, faceCount: Int? = nil,
                           illustrationScore: Double? = nil,
                           location: String = "chain") throws(ValidationError) -> (operations: [ImageOperation], size: Size?) {
        var issues: [ValidationIssue] = []
        // The source's values of expressions were written in when the plan deferred these
        // steps; an overlay's chain starts from the overlay, which is its own source.
        var facts = ExpressionFacts(initial: input, current: input, page: 1, pageCount: 1)
        facts.faceCount = faceCount
        facts.illustrationScore = illustrationScore
        facts.atRunTime = true
        let walk = self.walk(steps, from: input, facts: facts, sourceFormat: sourceFormat, location: location, issues: &issues)
        // The plan refuses a quality in a deferred branch; an overlay's chain has none of its
        // own (it is drawn into the image, encoded with the output's).
        if walk.quality != nil {
            issues.append(ValidationIssue(location: location, reason: "q_ inside an overlay's chain or a branch decided when the engine runs: known to Cloudinary, not supported by Derive: the output's quality is fixed before the engine runs"))
        }
        if !issues.isEmpty { throw ValidationError(issues) }
        return (walk.operations, walk.size)
    }

    // MARK: - Outputs

    struct Draft {
        var output: PlannedOutput
        var page: Int
        /// The pages of a page set (`pg_2-4`), in order: the output animates them.
        var pages: [Int]? = nil
    }

    /// A page set resolved on the source: every page it names must exist, and the output's
    /// format must hold several frames (Cloudinary documents page sets for PDF delivery, which
    /// Derive does not write; a still format cannot hold them).
    func selectedPages(_ set: PageSet, format: OutputFormat, source: SourceFacts, label: String,
                       issues: inout [ValidationIssue]) -> [Int]? {
        let written = "pg_\(set.text)"
        if set.highestNamed > source.pages {
            issues.append(ValidationIssue(location: "\(label).pages", reason: "\(written): page \(set.highestNamed) does not exist; the source has \(source.pages)"))
            return nil
        }
        guard let pages = set.pages(count: source.pages, limit: PageSet.maxFrames) else {
            issues.append(ValidationIssue(location: "\(label).pages", reason: "\(written) selects more than \(PageSet.maxFrames) frames, Derive's limit"))
            return nil
        }
        guard format.holdsPages || format == .auto else {
            issues.append(ValidationIssue(location: "\(label).pages", reason: "\(written): known to Cloudinary, not supported by Derive with \(format.rawValue): Cloudinary makes a PDF of several pages, which Derive does not write, and \(format.rawValue) holds one image; select one page (pg_<n>), or write a format that holds them: an animation (f_gif, f_webp or f_auto) or a multi-page TIFF (f_tiff)"))
            return nil
        }
        return pages
    }

    func draft(_ output: CanonicalOutput, index: Int, source: SourceFacts, asset: AssetFacts, issues: inout [ValidationIssue]) -> [Draft] {
        let label = "outputs[\(index)] (\(Quoted(output.name)))"
        // The decoder applies EXIF orientation; an output that ignores it turns the image back.
        let autoOrient = output.encoding.autoOrient
        var start = autoOrient ? source.orientedSize : source.storedSize
        var prefix: [ImageOperation] = []
        if !autoOrient && source.orientation != 1 { prefix.append(.unorient(orientation: source.orientation)) }
        // fl_ignore_mask_channels: a TIFF's mask channel is not the image's alpha.
        var source = source
        if output.encoding.ignoreMaskChannels && source.hasMaskChannel {
            prefix.append(.dropMaskChannel)
            source.hasAlpha = false
        }
        // dn_: a vector or page source (its header's size is at 72 dpi) is rasterised at this
        // density, so the chain starts from that many pixels; the decode follows the resample.
        if let dpi = output.encoding.density, source.format.isScalable, dpi != 72 {
            let k = Double(dpi) / 72
            let rasterised = Size(ResizeGeometry.px(Double(start.width) * k), ResizeGeometry.px(Double(start.height) * k))
            if rasterised.width > limits.maxOutputDimension || rasterised.height > limits.maxOutputDimension || rasterised.pixels > limits.maxOutputPixels {
                issues.append(ValidationIssue(location: "\(label).density", reason: CloudinaryVocabulary.outOfRange("dn_\(dpi)", "rasterises the \(source.format.rawValue) at \(rasterised); the limit is \(limits.maxOutputDimension) pixels per side and \(limits.maxOutputPixels) pixels in all", bound: .derive)))
                return []
            }
            prefix.append(.resize(rasterised))
            start = rasterised
        }

        let page = output.encoding.frame ?? 1
        if page > source.pages {
            issues.append(ValidationIssue(location: "\(label).frame", reason: "frame \(page) does not exist; the source has \(source.pages)"))
            return []
        }
        let format = output.encoding.format == .original
            ? OutputFormat.original(for: source.format, hasAlpha: source.hasAlpha) : output.encoding.format
        var encoding = format.isConcrete ? output.encoding.resolved(to: format) : { var e = output.encoding; e.format = format; return e }()
        // cs_cmyk: a CMYK file, which only JPEG and TIFF hold. cs_keep_cmyk: CMYK when the
        // source is, in those formats; sRGB otherwise (a note says why).
        var cmykNote: String?
        switch output.encoding.cmyk {
        case .convert?:
            guard CMYKOutput.formats.contains(format) else {
                issues.append(ValidationIssue(location: "\(label).colorSpace", reason: "cs_cmyk with f_\(format.rawValue): known to Cloudinary, not supported by Derive: only JPEG and TIFF hold CMYK; write f_jpg or f_tiff"))
                return []
            }
        case .keep?:
            if !source.isCMYK {
                cmykNote = "cs_keep_cmyk: the source is not CMYK, so there is none to keep; the output is sRGB"
            } else if !CMYKOutput.formats.contains(format) {
                cmykNote = "cs_keep_cmyk: a \(format.rawValue) output holds no CMYK (only JPEG and TIFF do); the output is sRGB"
            }
            encoding.cmyk = cmykNote == nil ? .convert : nil
        case nil:
            break
        }
        var selected: [Int]?
        if let set = output.encoding.pages {
            selected = selectedPages(set, format: format, source: source, label: label, issues: &issues)
            if selected == nil { return [] }
        }
        let keepsAnimation = selected != nil
            || source.isAnimated && output.encoding.frame == nil && (format.canAnimate || format == .auto)
        // A hash of the canonical output, the same for every breakpoint width; when the chain
        // reads the asset's tags or context, of those too, so that an asset with other tags is
        // another output (not one reused from a run that took the other branch).
        let identity = output.chain.contains(where: \.readsAssetAnywhere)
            ? SHA256.hex(output.identityText + "\n" + asset.identityText) : output.identity

        // With a page set, cp is its first page (the frame decisions are made on).
        var facts = ExpressionFacts(initial: start, current: start, page: selected?.first ?? page, pageCount: source.pages)
        facts.asset = asset
        func planned(_ steps: [Step], breakpoint: Int?) -> PlannedOutput? {
            let before = issues.count
            let steps = steps.map { $0.writingAssetValues(asset, overlaysOnly: true) }
            let walk = self.walk(steps, from: start, facts: facts, sourceFormat: source.format, location: label, issues: &issues)
            guard issues.count == before else { return nil }
            if format == .svg, let reason = Self.svgRefusal(walk.operations, chain: steps, source: source.format) {
                issues.append(ValidationIssue(location: "\(label).format", reason: reason))
                return nil
            }
            var encoding = encoding
            // A quality chosen in a branch must be known now: one left to the engine (after
            // faces or a trim decide the branch) would come after the encoding is fixed.
            if walk.operations.contains(where: { if case .deferred(let rest) = $0 { rest.contains(where: \.setsQuality) } else { false } }) {
                issues.append(ValidationIssue(location: label, reason: "q_ inside an if_ decided when the engine runs (on fc, ils or a size after e_trim): known to Cloudinary, not supported by Derive: the output's quality is fixed before the engine runs; decide it on values known when planning (the source's size, tags, context, variables)"))
                return nil
            }
            // An image variable is kept where the plan puts it: steps the engine plans later
            // (after a trim, or deciding on fc or ils) have no kept image to draw.
            let kept = walk.operations.compactMap { if case .snapshot(let name) = $0 { name } else { nil } }
            if let name = kept.first(where: { name in walk.operations.contains { if case .deferred(let rest) = $0 { rest.contains { $0.drawsLayer(named: "$" + name) } } else { false } } }) {
                issues.append(ValidationIssue(location: label, reason: "l_$\(name) after a step whose size or branch the engine decides (e_trim, fl_cutter, fl_replace_image, fc, ils): known to Cloudinary, not supported by Derive: the image $\(name)_current keeps is drawn only by layers planned with it; draw it before that step"))
                return nil
            }
            if let q = walk.quality { encoding.quality = q }
            if case .expression(let e)? = encoding.quality {
                guard let q = quality(e, walk: walk, facts: facts, label: label, issues: &issues) else { return nil }
                encoding.quality = .value(q)
            }
            return PlannedOutput(name: output.name, identity: identity, breakpointWidth: breakpoint, size: walk.size,
                                 operations: prefix + walk.operations, encoding: encoding, keepsAnimation: keepsAnimation,
                                 breakpointSearch: nil, canonical: output, expressions: walk.expressions,
                                 variables: walk.variables, conditions: walk.conditions, notes: output.notes)
        }

        if let densities = output.encoding.densities {
            // One variant per density, every size of the chain multiplied by it, named by its
            // width as a breakpoint is; densities that come to the same width make one file.
            var widths: Set<Int> = []
            var drafts: [Draft] = []
            for density in densities {
                var resizes = 0, ignored = false
                // The canonical form writes density 1 for a resize without one.
                let ownDensity = output.chain.contains { ParseRun.contains($0) { if case .resize(let r) = $0 { (r.dpr ?? 1) != 1 || r.dprExpression != nil } else { false } } }
                let chain = output.chain.map { ParseRun.withDensity($0, density, resizes: &resizes, ownDensity: &ignored) }
                if ownDensity || resizes == 0 {
                    issues.append(ValidationIssue(location: label, reason: ownDensity
                        ? "densities: a resize of the chain has a density of its own (dpr_); give one or the other"
                        : "densities: the chain has no resize with a width or height for a density to multiply"))
                    return []
                }
                guard var variant = planned(chain, breakpoint: nil) else { return [] }
                guard let width = variant.size?.width else {
                    issues.append(ValidationIssue(location: label, reason: "densities: the output's width depends on the content (after a trim), so its density variants cannot be named by it"))
                    return []
                }
                guard widths.insert(width).inserted else { continue }
                variant.breakpointWidth = width
                drafts.append(Draft(output: variant, page: page, pages: selected))
            }
            return drafts
        }
        if format == .svg, output.encoding.breakpoints != nil {
            issues.append(ValidationIssue(location: "\(label).breakpoints", reason: "f_svg: known to Cloudinary, not supported by Derive with breakpoints: an SVG scales to any width, so Derive makes no responsive widths of it; drop the breakpoints or write a raster format"))
            return []
        }
        guard var base = planned(output.chain, breakpoint: nil) else { return [] }
        if format != .svg, let trace = Self.vectorTrace(in: output.chain), !trace.isDefault {
            base.notes.append("e_vectorize: detail, despeckle, paths and corners shape the paths of an f_svg output; this output is \(format.rawValue), a raster of the flat colours, and does not use them")
        }
        if let cmykNote { base.notes.append(cmykNote) }
        if output.encoding.ignoreMaskChannels && !source.hasMaskChannel {
            base.notes.append("fl_ignore_mask_channels: the source has no mask channel (a TIFF extra channel whose ExtraSamples tag is unspecified), so there is nothing to ignore")
        }
        guard let breakpoints = output.encoding.breakpoints else {
            return [Draft(output: base, page: page, pages: selected)]
        }
        let cap = min(breakpoints.maxWidth, base.size?.width ?? breakpoints.maxWidth)
        switch breakpoints.spacing {
        case .bytes(let bytes):
            var searched = base
            searched.breakpointSearch = BreakpointSearch(minWidth: min(breakpoints.minWidth, cap), maxWidth: cap,
                                                         bytes: bytes, maxCount: breakpoints.maxCount)
            return [Draft(output: searched, page: page, pages: selected)]
        case .step(let step):
            let widths = Self.breakpointWidths(min: breakpoints.minWidth, max: cap, step: step, maxCount: breakpoints.maxCount)
            return widths.compactMap { width in
                planned(output.chain + [.resize(Resize(mode: .limit, width: .pixels(width)))], breakpoint: width)
                    .map { Draft(output: $0, page: page, pages: selected) }
            }
        }
    }

    /// `q_<expression>` on the output as the chain leaves it: the source's values, the final
    /// size as `w` and `h`, the variables as last set.
    func quality(_ e: ArithmeticExpression, walk: Walk, facts: ExpressionFacts, label: String, issues: inout [ValidationIssue]) -> Int? {
        var final = facts
        final.variables = walk.bindings
        final.current = walk.size ?? facts.initial
        let here = "\(label).quality"
        if walk.size == nil, e.values.contains(where: { !$0.isSourceFact }) {
            issues.append(ValidationIssue(location: here, reason: "q_\(e.canonicalText): w, h and ar are not known when the output's size depends on the content (after a trim)"))
            return nil
        }
        switch final.evaluate(e) {
        case .success(let value):
            let q = Int(max(-1e9, min(1e9, value)).rounded())
            guard (1...100).contains(q) else {
                issues.append(ValidationIssue(location: here, reason: "must be between 1 and 100, got \(q) (on this source q_\(e.canonicalText) is \(q))"))
                return nil
            }
            return q
        case .failure(let failure):
            issues.append(ValidationIssue(location: here, reason: "q_\(e.canonicalText): \(failure)"))
            return nil
        }
    }

    /// Widths from `min` to `max` every `step` (always including `max`), thinned evenly to
    /// `maxCount` keeping both ends.
    public static func breakpointWidths(min minWidth: Int, max maxWidth: Int, step: Int, maxCount: Int) -> [Int] {
        let low = Swift.min(minWidth, maxWidth)
        var widths = Array(stride(from: low, to: maxWidth, by: Swift.max(1, step)))
        widths.append(maxWidth)
        guard widths.count > maxCount else { return widths }
        if maxCount <= 1 { return [maxWidth] }
        let last = Double(widths.count - 1)
        let picked = (0..<maxCount).map { widths[Int((Double($0) * last / Double(maxCount - 1)).rounded())] }
        return Array(Set(picked)).sorted()
    }

    func pageSelection(_ drafts: [Draft]) -> PageSelection {
        if drafts.contains(where: { $0.output.keepsAnimation }) { return .all }
        let pages = Set(drafts.map(\.page))
        return pages.count == 1 ? .page(pages.first!) : .all
    }

    // MARK: - Walking a chain

    struct Walk {
        var operations: [ImageOperation] = []
        /// Nil once the size depends on the content.
        var size: Size?
        var expressions: [EvaluatedExpression] = []
        var variables: [EvaluatedVariable] = []
        var conditions: [DecidedCondition] = []
        /// The variables as the chain leaves them, for `q_$q`.
        var bindings: [String: VariableBinding] = [:]
        /// The last quality step walked (`q_` in the branch an `if_` took), over the output's.
        var quality: Quality?
    }

    func walk(_ steps: [Step], from start: Size, facts: ExpressionFacts, sourceFormat: ImageFormat?, location: String,
              issues: inout [ValidationIssue]) -> Walk {
        var walk = Walk(operations: [], size: start)
        var facts = facts
        // The steps to walk, with the top-level step each belongs to and its label: the
        // branch a conditional takes is spliced in after it.
        var pending: [(step: Step, index: Int, label: String)] = steps.enumerated().map { ($1, $0, "step \($0)") }
        var k = -1
        while k + 1 < pending.count {
            k += 1
            let (written, j, label) = pending[k]
            guard var size = walk.size else { break }
            let here = "\(location) \(label) (\(written.key))"
            // Expressions are evaluated on the image this step receives, then the step is
            // checked as if it had been written with their values.
            var stepFacts = facts
            stepFacts.current = size
            let unknownFaces = facts.faceCount == nil && written.namesFaceCount
            if unknownFaces || facts.illustrationScore == nil && written.namesIllustrationScore {
                if facts.atRunTime {
                    issues.append(ValidationIssue(location: here, reason: unknownFaces
                        ? "fc (the face count) is not known: no faces were looked for (face detection is off; see DERIVE_FACE_DETECTION)"
                        : "ils (the illustration score) is not known here: it is measured on the job's image, not on a layer's"))
                } else {
                    // Only the engine knows the faces: it plans this step and the rest once
                    // it has found them, with the same evaluator.
                    walk.operations.append(.deferred(stepFacts.assignments + pending[k...].map { $0.step.substitutingSourceFacts(stepFacts) }))
                }
                walk.size = nil
                break
            }
            switch written {
            case .quality(let q):
                walk.quality = q
                continue
            case .assign(let a):
                if a.isDefault && (facts.variables[a.name] != nil || facts.images.contains(a.name)) { continue }
                if case .currentImage = a.value {
                    // The engine keeps the image here for the layers that name it.
                    facts.variables[a.name] = nil
                    facts.images.insert(a.name)
                    walk.operations.append(.snapshot(a.name))
                    walk.variables.append(EvaluatedVariable(step: j, name: a.name, assigned: a.value.cloudinaryText, value: .text("the image at this point, \(size)")))
                    continue
                }
                facts.images.remove(a.name)
                switch stepFacts.binding(of: a.value) {
                case .success(let value):
                    facts.variables[a.name] = value
                    walk.variables.append(EvaluatedVariable(step: j, name: a.name, assigned: a.value.cloudinaryText, value: value))
                case .failure(let failure):
                    issues.append(ValidationIssue(location: here, reason: "$\(a.name)_\(a.value.cloudinaryText): \(failure)"))
                    walk.size = nil
                }
                continue
            case .conditional(let c):
                switch stepFacts.decide(c.condition) {
                case .success(let holds):
                    walk.conditions.append(DecidedCondition(step: j, condition: c.condition.canonicalText, holds: holds))
                    let branch = holds ? c.then : c.otherwise
                    let name = holds ? "then" : "else"
                    pending.insert(contentsOf: branch.enumerated().map { ($1, j, "\(label) (if) \(name) step \($0)") }, at: k + 1)
                case .failure(let reason):
                    issues.append(ValidationIssue(location: here, reason: "if_\(c.condition.canonicalText): \(reason.description)"))
                    walk.size = nil
                }
                continue
            case .template(let text):
                switch stepFacts.expanding(text, limits: limits) {
                case .success(let expanded):
                    pending.insert(contentsOf: expanded.enumerated().map { ($1, j, "\(label) (template) step \($0)") }, at: k + 1)
                case .failure(let reason):
                    issues.append(ValidationIssue(location: here, reason: reason.description))
                    walk.size = nil
                }
                continue
            default:
                break
            }
            let evaluation = written.evaluatingExpressions(stepFacts, step: j)
            if !evaluation.failures.isEmpty {
                issues += evaluation.failures.map { ValidationIssue(location: here, reason: $0) }
                walk.size = nil
                break
            }
            var step = evaluation.step
            if !evaluation.evaluated.isEmpty {
                let values = evaluation.evaluated.map { "\($0.written) is \($0.value)" }.joined(separator: ", ")
                let problems = StepRules.issues(in: step, limits: limits)
                if !problems.isEmpty {
                    issues += problems.map { problem in
                        let reason = "\(problem.field.isEmpty ? "" : problem.field + " ")\(problem.reason) (on this source \(values))"
                        // Named as written when one expression gave the value at fault.
                        let param = CloudinaryNames.parameter(for: step, field: problem.field)
                        guard let bound = problem.bound, !param.isEmpty,
                              let culprit = evaluation.evaluated.first(where: { $0.parameter == param || $0.parameter.hasPrefix(param + "_") }) else {
                            return ValidationIssue(location: here, reason: reason)
                        }
                        return ValidationIssue(location: here, reason: CloudinaryVocabulary.outOfRange(culprit.written, reason, bound: bound))
                    }
                    walk.size = nil
                    break
                }
                walk.expressions += evaluation.evaluated
            }
            // a_auto_right/left: a quarter turn first when the box's orientation is not the
            // image's; then the resize as written, on the turned image.
            if case .resize(var r) = step, let turn = r.autoTurn {
                if let degrees = turn.degrees(for: size, box: ResizeGeometry.requestedBox(r, input: size)) {
                    walk.operations.append(.rotate(degrees: degrees, canvas: size.swapped, background: nil))
                    size = size.swapped
                    walk.size = size
                }
                r.autoTurn = nil
                step = .resize(r)
            }
            plan(step, on: size, rest: pending[(k + 1)...].map(\.step), facts: stepFacts, sourceFormat: sourceFormat, at: here,
                 into: &walk, issues: &issues)
            if let size = walk.size, size.width > limits.maxOutputDimension || size.height > limits.maxOutputDimension
                || size.pixels > limits.maxOutputPixels {
                issues.append(ValidationIssue(location: here, reason: "would make a \(size) image: known to Cloudinary, not supported by Derive: beyond Derive's limits: the limit is \(limits.maxOutputDimension) pixels per side and \(limits.maxOutputPixels) pixels in all"))
                walk.size = nil
                break
            }
        }
        walk.bindings = facts.variables
        return walk
    }

    /// What one step (its expressions evaluated, checked) does to an image of `size`: the
    /// operations it adds to `walk` and the size it leaves, nil when that depends on the
    /// content (`rest`, the steps after it, then wait for the engine) or the step is refused.
    private func plan(_ step: Step, on size: Size, rest: [Step], facts stepFacts: ExpressionFacts, sourceFormat: ImageFormat?,
                      at here: String, into walk: inout Walk, issues: inout [ValidationIssue]) {
        // Steps the engine plans later see the source's values as they are here.
        func deferred(_ rest: [Step]) -> ImageOperation {
            .deferred(stepFacts.assignments + rest.map { $0.substitutingSourceFacts(stepFacts) })
        }
        switch step {
        case .resize(let r) where FaceGeometry.cutsAroundFaces(r):
            walk.operations.append(.faceCrop(r))
            walk.size = FaceGeometry.plannedSize(for: r, input: size)
            if walk.size == nil {
                // The region is the face's: the rest waits for its size, as after a trim.
                if !rest.isEmpty { walk.operations.append(deferred(rest)) }
            }
        case .resize(let r) where (r.mode == .fillPad || r.mode == .autoPad) && ResizeGeometry.layout(r, input: size).window != nil:
            // The box of a fill; the engine fills it or pads, by the faces it finds.
            var pad = r
            pad.mode = .pad
            let background = ResizeGeometry.layout(pad, input: size).canvas?.background ?? r.background ?? .transparent
            let output = ResizeGeometry.layout(r, input: size).output
            walk.operations.append(.fillPad(output, background: background))
            walk.size = output
        case .resize(let r) where r.relative:
            issues.append(ValidationIssue(location: here, reason: "fl_relative: sizes a layer by the image it is placed on, so it belongs in an overlay's own chain"))
            walk.size = nil
        case .resize(let r):
            let layout = ResizeGeometry.layout(r, input: size)
            if layout.scaled != size { walk.operations.append(.resize(layout.scaled)) }
            switch layout.window {
            case .rect(let rect)?: walk.operations.append(.crop(rect))
            case .smart(let s, let strategy)?: walk.operations.append(.smartCrop(s, strategy))
            case nil: break
            }
            if let canvas = layout.canvas {
                let placed = layout.window?.size ?? layout.scaled
                let at = Rect(x: canvas.origin.x, y: canvas.origin.y, width: placed.width, height: placed.height)
                if let fill = r.padFill {
                    walk.operations.append(.padFill(at: at, canvas: canvas.size, fill: fill))
                } else {
                    walk.operations.append(.embed(at: at, canvas: canvas.size, background: canvas.background))
                }
            }
            walk.size = layout.output
        case .rotate(let r):
            if r.horizontalFlip { walk.operations.append(.flip(horizontal: true)) }
            if r.verticalFlip { walk.operations.append(.flip(horizontal: false)) }
            if r.angle != 0 {
                let canvas = ResizeGeometry.rotatedSize(size, degrees: r.angle)
                let background = ResizeGeometry.isRightAngle(r.angle) ? nil : (r.background ?? .transparent)
                walk.operations.append(.rotate(degrees: r.angle, canvas: canvas, background: background))
                walk.size = canvas
            }
        case .round(let r):
            walk.operations.append(.round(r.radius, background: r.background ?? .transparent))
        case .effect(let e):
            if case .distort(.corners(let corners)) = e, let problem = DistortGeometry.problem(DistortGeometry.points(corners, on: size)) {
                // Pixels and percentages mixed: the shape is known only on the image.
                issues.append(ValidationIssue(location: here, reason: "e_distort corners \(problem) (on this \(size) image)"))
                walk.size = nil
                return
            }
            if case .gradientFade(let n, .symmetricPad, let x, let y) = e, let pad = walk.operations.last, let planned = Self.fadingIntoPadding(pad, .gradientFade(n, edges: .symmetric, x: x, y: y)) {
                walk.operations.removeLast()
                walk.operations += planned
                return
            }
            walk.operations.append(.effect(e))
            if let grown = EffectGeometry.size(of: e, on: size) { walk.size = grown }
        case .trim(let t):
            walk.operations.append(.trim(t))
            if !rest.isEmpty { walk.operations.append(deferred(rest)) }
            walk.size = nil
        case .background(let color):
            walk.operations.append(.flatten(color))
        case .border(let b):
            walk.operations.append(.border(b))
            walk.size = Size(size.width + 2 * b.width, size.height + 2 * b.width)
        case .opacity(let o):
            walk.operations.append(.opacity(o.planned))
        case .overlay(var o):
            // The overlay's chain is planned when it is loaded, against the overlay alone:
            // the job's faces are not the overlay's.
            if o.chain.contains(where: \.namesFaceCount) {
                issues.append(ValidationIssue(location: here, reason: "fc in an overlay's own chain: known to Cloudinary, not supported by Derive (the engine counts the faces of the main image only); decide with if_fc_… around the layer"))
                walk.size = nil
                return
            }
            // Sizes given relative to the image it is placed on (fl_relative) are pixels of
            // this image, which the overlay's own planning does not see.
            o.chain = o.chain.map { step in
                guard case .resize(var r) = step, r.relative else { return step }
                if case .fraction(let f)? = r.width { r.width = .pixels(ResizeGeometry.px(f * Double(size.width))) }
                if case .fraction(let f)? = r.height { r.height = .pixels(ResizeGeometry.px(f * Double(size.height))) }
                r.relative = false
                return .resize(r)
            }
            // It starts with the variables set here, and its text is written with their values.
            if !o.chain.isEmpty && !stepFacts.variables.isEmpty { o.chain = stepFacts.assignments + o.chain }
            if case .image(let name) = o.source, name.hasPrefix("$"), stepFacts.images.contains(String(name.dropFirst())) {
                // `l_$img` with `$img_current`: the image the engine kept.
                o.source = .snapshot(String(name.dropFirst()))
            } else if case .image(let name) = o.source, name.contains("$") {
                switch stepFacts.naming(name) {
                case .success(let resolved): o.source = .image(resolved)
                case .failure(let reason):
                    issues.append(ValidationIssue(location: here, reason: reason.description))
                    walk.size = nil
                    return
                }
            }
            if case .text(let layer) = o.source {
                switch stepFacts.resolving(layer) {
                case .success(let resolved): o.source = .text(resolved)
                case .failure(let reason):
                    issues.append(ValidationIssue(location: here, reason: reason.description))
                    walk.size = nil
                    return
                }
            }
            walk.operations.append(.overlay(o))
            if o.blend == .cutter || o.blend == .replaceImage {
                // fl_cutter cuts the image to the layer's rectangle, whose size the engine
                // learns when it draws the layer: the rest waits for it, as after a trim.
                if !rest.isEmpty { walk.operations.append(deferred(rest)) }
                walk.size = nil
            }
        case .lut(let name):
            walk.operations.append(.lut(name))
        case .validate(let c):
            for reason in Self.violations(of: c, size: size, format: sourceFormat) {
                issues.append(ValidationIssue(location: here, reason: reason))
            }
        case .preset(let name):
            issues.append(ValidationIssue(location: here, reason: "preset \(Quoted(name)) was not expanded; resolve the job before planning"))
        case .assign, .conditional, .template, .quality:
            return
        }
    }

    /// Reasons an image breaks the constraints of a `validate` step (empty when it passes).
    public static func violations(of c: ImageConstraints, size: Size, format: ImageFormat?) -> [String] {
        var reasons: [String] = []
        if let min = c.minWidth, size.width < min { reasons.append("width \(size.width) is below the minimum \(min)") }
        if let max = c.maxWidth, size.width > max { reasons.append("width \(size.width) is above the maximum \(max)") }
        if let min = c.minHeight, size.height < min { reasons.append("height \(size.height) is below the minimum \(min)") }
        if let max = c.maxHeight, size.height > max { reasons.append("height \(size.height) is above the maximum \(max)") }
        if let max = c.maxPixels, size.pixels > max { reasons.append("\(size) is \(size.pixels) pixels, above the maximum \(max)") }
        if let formats = c.formats, let format, !formats.contains(format) {
            reasons.append("format \(format.rawValue) is not allowed (allowed: \(formats.map(\.rawValue).joined(separator: ", ")))")
        }
        return reasons
    }

    // MARK: - Decode size

    /// The scale (relative to the full-size image the output starts from) its first resample
    /// needs. Operations before it that commute with scaling can run on a smaller decode; any
    /// other operation, or no resample at all, needs full size.
    func demand(_ operations: [ImageOperation], start: Size) -> Double {
        var current = start
        for operation in operations {
            switch operation {
            case .resize(let target):
                return max(Double(target.width) / Double(current.width), Double(target.height) / Double(current.height))
            case .crop(let rect): current = rect.size
            case .smartCrop(let size, _): current = size
            // Scaled by at most the fill's factor, decided on whatever size it is given.
            case .fillPad(let target, _):
                return max(Double(target.width) / Double(current.width), Double(target.height) / Double(current.height))
            case .unorient(let orientation): if orientation >= 5 { current = current.swapped }
            case .rotate(_, let canvas, _) where operation.commutesWithScaling: current = canvas
            default:
                if !operation.commutesWithScaling { return 1 }
            }
        }
        return 1
    }

    /// Rewrites full-resolution operations for the decoded image: leading operations that
    /// commute with scaling get scaled coordinates, and a resample to the full-resolution size
    /// is inserted before the first operation that needs exact pixels (unless it is one).
    func rebase(_ operations: [ImageOperation], full start: Size, decoded: Size) -> [ImageOperation] {
        if start == decoded { return operations }
        var full = start
        var small = decoded
        var out: [ImageOperation] = []
        for (i, operation) in operations.enumerated() {
            let sx = Double(small.width) / Double(full.width)
            let sy = Double(small.height) / Double(full.height)
            switch operation {
            case .resize(let target):
                // The decode often lands exactly on the first resize's size already.
                return out + (target == small ? operations[(i + 1)...] : operations[i...])
            case .crop(let rect):
                let x = ResizeGeometry.clamp(Int((Double(rect.x) * sx).rounded()), 0, small.width - 1)
                let y = ResizeGeometry.clamp(Int((Double(rect.y) * sy).rounded()), 0, small.height - 1)
                let w = ResizeGeometry.clamp(Int((Double(rect.width) * sx).rounded()), 1, small.width - x)
                let h = ResizeGeometry.clamp(Int((Double(rect.height) * sy).rounded()), 1, small.height - y)
                out.append(.crop(Rect(x: x, y: y, width: w, height: h)))
                full = rect.size
                small = Size(w, h)
            case .smartCrop(let size, let strategy):
                let w = ResizeGeometry.clamp(Int((Double(size.width) * sx).rounded()), 1, small.width)
                let h = ResizeGeometry.clamp(Int((Double(size.height) * sy).rounded()), 1, small.height)
                out.append(.smartCrop(Size(w, h), strategy))
                full = size
                small = Size(w, h)
            case .fillPad:
                // Decided on the image it receives (its factor is relative), so no resample
                // back to full size first.
                return out + operations[i...]
            case .unorient(let orientation):
                out.append(operation)
                if orientation >= 5 {
                    full = full.swapped
                    small = small.swapped
                }
            case .rotate(let degrees, let canvas, let background) where operation.commutesWithScaling:
                let rotated = ResizeGeometry.rotatedSize(small, degrees: degrees)
                out.append(.rotate(degrees: degrees, canvas: rotated, background: background))
                full = canvas
                small = rotated
            default:
                if operation.commutesWithScaling {
                    out.append(operation)
                } else {
                    if full != small { out.append(.resize(full)) }
                    return out + operations[i...]
                }
            }
        }
        if full != small { out.append(.resize(full)) }
        return out
    }
}
