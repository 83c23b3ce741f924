/// `dpr_<n>` in a component of its own (`c_scale,w_100/dpr_2.0`, as Cloudinary's SDKs write a
/// delivery DPR): a multiplying factor for the sizes the chain asks for. Cloudinary's reference
/// (https://cloudinary.com/documentation/transformation_reference, `dpr`) sets the device pixel
/// ratio of the delivered image and asks for a resize with a width or height beside it; its
/// support page (https://support.cloudinary.com/hc/en-us/articles/115000360709) calls DPR "a
/// multiplying factor for the output image dimensions". So Derive gives every resize of the
/// chain (inside conditionals too) that density, the same as writing `dpr_2.0` beside each
/// `w_`/`h_`; `c_scale,w_100/dpr_2.0` and `c_scale,w_100,dpr_2.0` are one output with one identity.
/// What Cloudinary also tunes with DPR (layers, text sizes) is refused rather than guessed.
extension Component {
    /// Nothing but `dpr_`: a density for the whole chain rather than a resize of its own.
    var isDensityAlone: Bool {
        params.count == 1 && params["dpr"] != nil && params["dpr"] != "auto" && flags.isEmpty && assignments.isEmpty
            && branch == nil && !hasCondition && template == nil
    }
}

extension ParseRun {
    /// Reads a `dpr_` component in the top-level chain; elsewhere refuses it, naming it.
    mutating func takeDensity(_ c: Component, topLevel: Bool) {
        let written = "dpr_" + (c.params["dpr"] ?? "")
        var p = c.params
        let before = issues.count
        // dpr_auto and malformed values are refused by resize(_:in:), and that says it all.
        guard let r = resize(&p, in: c), issues.count == before else { return }
        guard topLevel else {
            fail(c, "\(written) in its own component inside a layer or an if_ block: known to Cloudinary, not supported by Derive; put it beside the w_ or h_ it multiplies (c_scale,w_100,\(written))")
            return
        }
        guard let dpr = r.dpr, r.dprExpression == nil else {
            fail(c, "\(written) in its own component: known to Cloudinary, not supported by Derive: a density of its own is a number (dpr_2.0); put an expression beside the w_ or h_ it multiplies")
            return
        }
        if !(dpr > 0 && dpr <= 8) {
            fail(c, param: "dpr", "must be above 0 and at most 8, got \(Decimal6.string(dpr))")
            return
        }
        densities.append((c, dpr))
    }

    /// The chain with the density of its `dpr_` component given to every resize.
    mutating func applyingDensity(to steps: [Step]) -> [Step] {
        guard let (c, dpr) = densities.first else { return steps }
        let written = "dpr_" + (c.params["dpr"] ?? "")
        if densities.count > 1 {
            let all = densities.map { "dpr_" + ($0.0.params["dpr"] ?? "") }.joined(separator: ", ")
            fail(densities[1].0, "\(all) in components of their own: known to Cloudinary, not supported by Derive: Cloudinary does not document which density wins; give it once")
            return steps
        }
        if steps.contains(where: { Self.contains($0) { if case .overlay = $0 { true } else { false } } }) {
            fail(c, "\(written) in its own component with a layer: known to Cloudinary, not supported by Derive: Cloudinary scales layers and their text by the density too; put dpr_ beside the w_ or h_ it multiplies")
            return steps
        }
        if steps.contains(where: { Self.contains($0) { switch $0 { case .preset, .template: true; default: false } } }) {
            fail(c, "\(written) in its own component with t_ or a component named by variables: known to Cloudinary, not supported by Derive: their sizes are known only when planning; put dpr_ beside the w_ or h_ it multiplies")
            return steps
        }
        var resizes = 0, ownDensity = false
        let scaled = steps.map { Self.withDensity($0, dpr, resizes: &resizes, ownDensity: &ownDensity) }
        if ownDensity {
            fail(c, "\(written) in its own component and dpr_ beside a w_ or h_: known to Cloudinary, not supported by Derive: Cloudinary does not document which density wins; give it once")
            return steps
        }
        if resizes == 0 {
            // Cloudinary's reference: the density multiplies the dimensions the chain asks
            // for; with none asked the image keeps its size.
            note(c, "\(written) without a w_ or h_ in the chain: the density multiplies the sizes a chain asks for, and this one asks for none; the image keeps its size (Cloudinary would also thicken pixel borders by the density; Derive does not)")
            return steps
        }
        return scaled
    }

    /// Whether the step, or one inside its conditional, is such a step.
    static func contains(_ step: Step, _ match: (Step) -> Bool) -> Bool {
        if match(step) { return true }
        if case .conditional(let c) = step { return (c.then + c.otherwise).contains { contains($0, match) } }
        return false
    }

    static func withDensity(_ step: Step, _ dpr: Double, resizes: inout Int, ownDensity: inout Bool) -> Step {
        switch step {
        case .resize(var r):
            resizes += 1
            if r.dpr != nil || r.dprExpression != nil { ownDensity = true }
            r.dpr = dpr
            return .resize(r)
        case .conditional(var c):
            c.then = c.then.map { withDensity($0, dpr, resizes: &resizes, ownDensity: &ownDensity) }
            c.otherwise = c.otherwise.map { withDensity($0, dpr, resizes: &resizes, ownDensity: &ownDensity) }
            return .conditional(c)
        default:
            return step
        }
    }
}

/// `dpr_auto` in a batch job. Cloudinary takes the density from the browser's DPR client hint
/// (its JavaScript library rounds the device's ratio up to a whole number); a batch job has no
/// browser, so it makes the output at the densities devices have, 1, 2 and 3: the output's
/// `densities`, each variant with every size of the chain multiplied by its density (as
/// `dpr_<n>` in a component of its own does), stored and recorded with its width.
extension ParseRun {
    static let automaticDensities: [Double] = [1, 2, 3]

    /// `dpr_auto` in `p`: the output's densities. False when refused.
    mutating func takeAutomaticDensity(_ p: inout [String: String], in c: Component, inLayer: Bool) -> Bool {
        guard p["dpr"] == "auto" else { return true }
        p["dpr"] = nil
        if inLayer || conditionDepth > 0 {
            fail(c, CloudinaryVocabulary.notSupported("dpr_auto inside a layer or an if_ block", CloudinaryVocabulary.feature(.automaticDensity)))
            return false
        }
        if let w = p["w"], AutomaticWidth.parse(w) != nil {
            // w_auto's breakpoints are widths in device pixels (a browser's Width hint counts
            // them), from the smallest up to the image's own: every width a density would
            // multiply a layout width to is among them already.
            note(c, "dpr_auto beside w_\(w): w_auto's breakpoints are widths in device pixels up to the image's own, which already hold every width a density would ask for; no density variants of their own")
            return true
        }
        automaticDensity = c
        merge(OutputSettings(densities: Self.automaticDensities), in: c)
        note(c, "dpr_auto: a batch job has no browser to send a DPR client hint, so Derive makes the output at densities 1, 2 and 3, every size of the chain multiplied by each, each stored and recorded with its width")
        return true
    }

    /// The chain a density applies to: sizes to multiply, and no layer, named component or
    /// density of its own (as for `dpr_<n>` in a component of its own).
    mutating func checkAutomaticDensity(_ steps: [Step]) {
        guard let c = automaticDensity else { return }
        let feature = CloudinaryVocabulary.feature(.automaticDensity)
        if let other = densities.first {
            fail(c, CloudinaryVocabulary.notSupported("dpr_auto and dpr_\(other.0.params["dpr"] ?? "")", feature))
        } else if steps.contains(where: { Self.contains($0) { if case .overlay = $0 { true } else { false } } }) {
            fail(c, CloudinaryVocabulary.notSupported("dpr_auto with a layer", feature))
        } else if steps.contains(where: { Self.contains($0) { if case .template = $0 { true } else { false } } }) {
            fail(c, CloudinaryVocabulary.notSupported("dpr_auto with a component named by variables", feature))
        } else if steps.contains(where: { Self.contains($0) { if case .resize(let r) = $0 { r.dpr != nil || r.dprExpression != nil } else { false } } }) {
            fail(c, CloudinaryVocabulary.notSupported("dpr_auto and dpr_ beside a w_ or h_", feature))
        } else if !steps.contains(where: { Self.contains($0) { if case .resize = $0 { true } else { false } } })
                    && !steps.contains(where: { if case .preset = $0 { true } else { false } }) {
            // Every density would multiply no size: one output, the image at its own size.
            settings.densities = nil
            note(c, "dpr_auto without a w_ or h_ in the chain: the density multiplies the sizes a chain asks for, and this one asks for none; one output, the image at its own size")
        }
    }
}

/// `w_auto` in a batch job. Cloudinary takes the width from the browser's Width client hint,
/// rounded up to the step (100 px unless given), and uses the fallback width when the browser
/// sends no hint (https://cloudinary.com/documentation/responsive_server_side_client_hints);
/// `w_auto:breakpoints` picks, among the widths its responsive breakpoints would make of the
/// image (50 to 1000 px, 20 KB apart, at most 20), the one that fits the hint. A batch job has
/// no browser, so:
/// - `w_auto:<step>:<fallback>` is the fallback width, rounded up to the step;
/// - `w_auto` and `w_auto:<step>` are every width a browser could be given: the multiples of the
///   step from the step to 1000 px (at most 20 of them, capped at the image's width);
/// - `w_auto:breakpoints[_<min>_<max>_<KB>_<count>][:json]` is every breakpoint;
/// each variant stored and recorded, through the output's `breakpoints` (their widths are
/// those of the chain's result). The plan's notes say which reading was taken.
enum AutomaticWidth: Equatable {
    case fallback(step: Int, width: Int)
    case variants(Breakpoints, json: Bool)

    static let defaultStep = 100

    /// The reading of `w_<text>`, nil when it is not `auto…`, or the reason it is malformed.
    static func parse(_ text: String) -> Result<AutomaticWidth, AutomaticWidthError>? {
        guard text == "auto" || text.hasPrefix("auto:") else { return nil }
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).dropFirst().map(String.init)
        if parts.first?.hasPrefix("breakpoints") == true {
            var json = false
            if parts.last == "json" && parts.count == 2 {
                json = true
                parts.removeLast()
            }
            guard parts.count == 1 else { return .failure(.malformed) }
            let words = parts[0].split(separator: "_", omittingEmptySubsequences: false).dropFirst()
            // Whole numbers of at most 9 digits: a kilobyte count times 1000 stays far from overflow.
            let n = words.compactMap { $0.count <= 9 ? Int($0) : nil }.filter { $0 > 0 }
            guard n.count == words.count, n.count <= 4, parts[0].hasPrefix("breakpoints_") || parts[0] == "breakpoints" else {
                return .failure(.malformed)
            }
            let b = Breakpoints(minWidth: n.count > 0 ? n[0] : Breakpoints.defaultMinWidth,
                                maxWidth: n.count > 1 ? n[1] : Breakpoints.defaultMaxWidth,
                                spacing: .bytes(n.count > 2 ? n[2] * 1000 : Breakpoints.defaultBytes),
                                maxCount: n.count > 3 ? n[3] : Breakpoints.defaultMaxCount)
            return .success(.variants(b, json: json))
        }
        // At most 9 digits each: the fallback is rounded up to the step by adding them.
        guard parts.count <= 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 9 && $0.allSatisfy({ $0.isASCII && $0.isNumber }) }),
              let step = parts.isEmpty ? defaultStep : Int(parts[0]), step > 0 else { return .failure(.malformed) }
        if parts.count == 2 {
            guard let fallback = Int(parts[1]), fallback > 0 else { return .failure(.malformed) }
            // Cloudinary rounds the width up to the step: the fallback too.
            return .success(.fallback(step: step, width: (fallback + step - 1) / step * step))
        }
        return .success(.variants(Breakpoints(minWidth: step, maxWidth: max(step, Breakpoints.defaultMaxWidth), spacing: .step(step),
                                              maxCount: Breakpoints.defaultMaxCount), json: false))
    }

    enum AutomaticWidthError: Error { case malformed }
}

extension ParseRun {
    /// `w_auto:<step>:<fallback>`: the fallback width, rounded up to the step.
    mutating func automaticWidthFallback(_ text: String, in c: Component) -> Length? {
        guard case .success(.fallback(let step, let width))? = AutomaticWidth.parse(text) else { return nil }
        let rounded = text.hasSuffix(":\(width)") ? "" : ", rounded up to the step of \(step) px"
        note(c, "w_\(text): a batch job has no browser to send a Width client hint, so the width is the fallback, \(width) px\(rounded), as Cloudinary delivers without one")
        return .pixels(width)
    }

    /// `w_auto`, `w_auto:<step>` and `w_auto:breakpoints…` in `p`: the output's breakpoints,
    /// with the component's crop mode and gravity, which only qualify the width. False when
    /// refused.
    mutating func takeAutomaticWidth(_ p: inout [String: String], in c: Component, inLayer: Bool) -> Bool {
        guard let w = p["w"], let parsed = AutomaticWidth.parse(w) else { return true }
        let written = "w_" + w
        guard case .success(let reading) = parsed else {
            fail(c, CloudinaryVocabulary.malformed(written, "w_auto takes w_auto[:<step>[:<fallback>]] or w_auto:breakpoints[_<min>_<max>_<KB>_<count>][:json]", hint: ""))
            return false
        }
        guard case .variants(let breakpoints, let json) = reading else { return true }
        let feature = CloudinaryVocabulary.feature(.automaticWidth)
        if inLayer || conditionDepth > 0 {
            fail(c, CloudinaryVocabulary.notSupported("\(written) inside a layer or an if_ block", feature))
            return false
        }
        if let other = ["h", "ar", "dpr"].first(where: { p[$0] != nil }) {
            fail(c, CloudinaryVocabulary.notSupported("\(written) with \(other)_\(p[other]!)", feature))
            return false
        }
        // The variants scale the result; a crop of the asked width is another thing.
        if p["c"] == "crop" {
            fail(c, CloudinaryVocabulary.notSupported("\(written) with c_crop", feature))
            return false
        }
        if let earlier = automaticWidth {
            fail(c, CloudinaryVocabulary.notSupported("\(written) after \(earlier.text) in component \(earlier.index)", feature))
            return false
        }
        // Its numbers, named as written: a count or width past Derive's limits, or none at all.
        if let problem = StepRules.settingsIssues(OutputSettings(breakpoints: breakpoints), limits: limits).first {
            let reason = "\(problem.field) \(problem.reason)"
            fail(c, problem.bound.map { CloudinaryVocabulary.outOfRange(written, reason, bound: $0) } ?? CloudinaryVocabulary.malformed(written, reason, hint: ""))
            return false
        }
        for key in ["w", "c", "g", "x", "y"] { p[key] = nil }
        automaticWidth = c
        merge(OutputSettings(breakpoints: breakpoints), in: c)
        let spacing: String
        switch breakpoints.spacing {
        case .step(let step): spacing = "every \(step) px from \(breakpoints.minWidth)"
        case .bytes(let bytes): spacing = "from \(breakpoints.minWidth) px, \(bytes / 1000) KB apart"
        }
        note(c, "\(written): a batch job has no browser to send a Width client hint, so Derive makes every width one could ask for: \(spacing) up to \(breakpoints.maxWidth) px (at most \(breakpoints.maxCount), capped at the image's width), each stored and recorded as a breakpoint"
             + (json ? "; :json lists the widths, which the job's report does" : ""))
        return true
    }

    /// The widths are those of the chain's result: nothing but output settings may follow the
    /// component that asks for them.
    mutating func checkAutomaticWidthIsLast(_ components: [Component]) {
        guard let c = automaticWidth else { return }
        let settingsFlags: Set<String> = ["progressive", "keep_iptc", "keep_metadata", "lossless", "strip_profile", "keep_attribution", "ignore_mask_channels"]
        // A later component already refused says it all.
        for later in components[(c.index + 1)...] where !later.refused && !issueComponents.contains(later.index) {
            let onlySettings = later.params.keys.allSatisfy { ["f", "q", "pg"].contains($0) || ($0 == "a" && later.params["a"] == "ignore") }
                && later.flags.allSatisfy(settingsFlags.contains) && later.assignments.isEmpty && later.branch == nil && later.template == nil
            if !onlySettings {
                fail(later, CloudinaryVocabulary.notSupported("\(Quoted(later.text)) after w_\(c.params["w"] ?? "auto")", CloudinaryVocabulary.feature(.automaticWidth)))
                return
            }
        }
    }
}
