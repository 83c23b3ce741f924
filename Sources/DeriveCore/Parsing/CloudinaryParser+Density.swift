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
        params.count == 1 && params["dpr"] != nil && flags.isEmpty && assignments.isEmpty
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
            fail(c, "\(written) without a w_ or h_ in the chain: known to Cloudinary, not supported by Derive: the density multiplies the sizes a chain asks for, and Cloudinary's reference asks for a resize with a width or height beside it; add one (c_scale,w_400/\(written))")
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

/// `w_auto:<step>:<fallback>` in a batch job. Cloudinary takes the width from the browser's
/// Width client hint, rounded up to the step, and uses the fallback width when the browser sends
/// no hint (https://cloudinary.com/documentation/responsive_server_side_client_hints). A batch job
/// has no browser, so no hint ever comes: the width is the fallback, and the plan's notes say so.
/// `w_auto` without a fallback and `w_auto:breakpoints` stay refused (CloudinaryVocabulary).
extension ParseRun {
    mutating func automaticWidthFallback(_ text: String, in c: Component) -> Length? {
        guard let fallback = CloudinaryVocabulary.automaticWidthFallback(text) else { return nil }
        note(c, "w_\(text): a batch job has no browser to send a Width client hint, so the width is the fallback, \(fallback) px, as Cloudinary delivers without one")
        return .pixels(fallback)
    }
}

extension CloudinaryVocabulary {
    /// The fallback of `auto:<step>:<fallback>` (both positive whole numbers), else nil.
    static func automaticWidthFallback(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "auto", parts[1].allSatisfy(\.isNumber), parts[2].allSatisfy(\.isNumber),
              let step = Int(parts[1]), let fallback = Int(parts[2]), step > 0, fallback > 0 else { return nil }
        return fallback
    }
}
