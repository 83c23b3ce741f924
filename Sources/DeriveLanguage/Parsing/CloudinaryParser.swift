import Foundation

/// Parses Cloudinary transformation strings (`c_fill,w_250,h_250,g_auto/r_max/e_sepia`) into
/// the same model as JSON. Components are joined by `/` and applied in order; parameters inside
/// a component are joined by `,` and applied in a fixed order: trim, resize, rotate, effect,
/// round corners, border, opacity, background. Output settings (`f_`, `q_`, `fl_progressive`,
/// `fl_keep_iptc`, `fl_lossless`, `pg_`, `a_ignore`) may appear in any top-level component.
public struct CloudinaryParser: Sendable {
    public var limits: ChainLimits

    public init(limits: ChainLimits = .default) {
        self.limits = limits
    }

    public struct Result: Sendable {
        public var steps: [Step]
        public var settings: OutputSettings
        public var issues: [ValidationIssue]
        /// Parameters read as Cloudinary does and left out (`c_fill` without a size), each
        /// saying why: accepted, but the user should know.
        public var notes: [String] = []
    }

    /// What a delivery flag means to a batch worker that Derive reads without a step of its
    /// own: a note saying why it changes nothing here, or a flag Derive has with the note.
    enum DeliveryFlag {
        case note(String)
        case flag(String, String)
    }

    static func deliveryFlag(_ flag: String) -> DeliveryFlag? {
        let name = flag.split(separator: ":", maxSplits: 1).first.map(String.init) ?? flag
        let argument = flag.contains(":") ? String(flag.drop { $0 != ":" }.dropFirst()) : nil
        switch (name, argument) {
        case ("attachment", _):
            return .note("asks the browser to download the file (an HTTP Content-Disposition header)\(argument.map { " named \($0)" } ?? ""); a batch job writes files and serves no response, so it changes nothing")
        case ("immutable_cache", nil):
            return .note("sets an HTTP cache header on delivery; a batch job serves no response, so it changes nothing")
        case ("sanitize", nil):
            return .note("sanitizes SVG output; Derive writes rasters, and SVG only as e_vectorize's paths (no script, link or external reference), so it changes nothing")
        case ("any_format", nil):
            return .note("lets f_auto choose any format; Derive's f_auto already chooses among every format it writes")
        case ("awebp", nil), ("apng", nil):
            return .note("asks for an animated WebP or PNG when the output is animated; Derive writes the frame or pages its pg_ selects, so it changes nothing")
        case ("rasterize", nil):
            return .note("rasterizes a vector source; Derive always rasterizes, so it changes nothing")
        case ("keep_dar", nil):
            return .note("keeps a video's display aspect ratio; images have none, so it changes nothing")
        case ("animated", nil):
            return .note("delivers an animated source animated when f_auto chooses the format; Derive's f_auto keeps an animated format for an animated output, and writes the frames its pg_ selects, so it changes nothing")
        case ("mono", nil):
            return .note("mixes a video's or audio file's sound down to one channel; an image has no sound, so it changes nothing")
        case ("draco", nil):
            return .note("compresses the meshes of a 3D model (glTF) with Draco; an image has no mesh, so it changes nothing")
        case ("preserve_transparency", nil):
            return .note("keeps the transparency of an image with an alpha channel when f_auto chooses the format (Cloudinary picks PNG); Derive's f_auto only ever chooses among formats with alpha (WebP, AVIF, PNG, as allowed) for such an image, and a named format is written as named, so it changes nothing")
        case ("progressive", "semi"), ("progressive", "steep"):
            return .flag("progressive", "a progressive JPEG; libvips writes one scan script, so semi and steep are written as fl_progressive")
        case ("progressive", "none"):
            return .note("a baseline (not progressive) image, which is what Derive writes without fl_progressive")
        default:
            return nil
        }
    }

    /// Every parameter prefix the language knows.
    static let keys = ["c", "w", "h", "ar", "g", "x", "y", "dpr", "z", "a", "r", "e", "co", "b", "bo", "o", "l", "u", "fl", "f", "q", "pg", "t", "cs", "dn", "d", "dl"]
    static let flags = ["layer_apply", "progressive", "keep_iptc", "keep_metadata", "lossless", "strip_profile", "png8", "png24", "png32", "lossy", "tiff8_lzw", "ignore_mask_channels", "keep_attribution", "getinfo", "region_relative", "relative", "ignore_aspect_ratio", "tiled", "no_overflow", "text_no_trim", "cutter", "replace_image", "clip", "clip_evenodd"]
    static let effectNames = StepCatalogue.effectNames + ["trim"]

    /// Parses a string; `location` prefixes every issue (`chain`, `outputs[1].chain`).
    public func parse(_ text: String, location: String = "chain") -> Result {
        var run = ParseRun(limits: limits, location: location)
        if text.utf8.count > limits.maxTransformationLength {
            run.issues.append(ValidationIssue(location: location, reason: "is \(text.utf8.count) bytes; the limit is \(limits.maxTransformationLength)"))
            return Result(steps: [], settings: OutputSettings(), issues: run.issues)
        }
        if text.isEmpty { return Result(steps: [], settings: OutputSettings(), issues: []) }
        let components = text.split(separator: "/", omittingEmptySubsequences: false).enumerated().map { i, part in
            run.component(index: i, text: String(part))
        }
        if components.count > limits.maxChainLength * 2 {
            run.issues.append(ValidationIssue(location: location, reason: "has \(components.count) components; the limit is \(limits.maxChainLength * 2)"))
            return Result(steps: [], settings: OutputSettings(), issues: run.issues)
        }
        run.pairLayers(components)
        run.pairBlocks(components)
        run.noteUnusedReferences(components)
        run.chainHasLayer = components.contains { $0.opensLayer }
        run.writableFormatAt = components.filter { c in
            c.params["f"].flatMap(OutputFormat.parse) != nil && !c.opensLayer && !run.closing.contains { $0.key < c.index && c.index <= $0.value }
        }.map(\.index)
        let steps = run.applyingDensity(to: run.sequence(components, 0..<components.count, inLayer: false, depth: 0))
        run.checkAutomaticWidthIsLast(components)
        run.checkAutomaticDensity(steps)
        var issues = run.issuesInOrder
        if steps.length > limits.maxChainLength {
            issues.append(ValidationIssue(location: location, reason: "has \(steps.length) steps; the limit is \(limits.maxChainLength)"))
        }
        return Result(steps: steps, settings: run.settings, issues: issues, notes: run.notes)
    }
}

/// One component: its position, its text and its parameters in order.
struct Component {
    var index: Int
    var text: String
    var params: [String: String] = [:]
    var flags: [String] = []
    /// `$name_<value>` in the order written; they apply before the component's other parameters.
    var assignments: [VariableAssignment] = []
    /// `if_<condition>`, `if_else` or `if_end`.
    var branch: Branch?
    /// An `if_<condition>` was written here, whether or not it could be read.
    var hasCondition = false
    /// The parameters (all but assignments and `if_`), when a name among them comes from a
    /// variable (`e_$effect:100`): the planner writes the variables in and reads them then.
    var template: String?

    enum Branch: Equatable {
        case condition(Condition)
        case otherwise
        case end
    }

    /// A parameter of this component was refused: its other parameters are not read, so the
    /// refusal is the only complaint about it.
    var refused = false

    var label: String { "component \(index) (\(Quoted(text)))" }
    func has(_ key: String) -> Bool { params[key] != nil }
    var isLayerApply: Bool { flags.contains("layer_apply") }
    /// Opens a layer that a later `fl_layer_apply` closes: an overlay (`l_`) or an underlay (`u_`).
    var opensLayer: Bool { has("l") || has("u") }
    /// Nothing but the branch parameter: an `if_` like this opens a block up to its `if_end`.
    var isBranchAlone: Bool { params.isEmpty && flags.isEmpty && assignments.isEmpty && template == nil }
    var opensBlock: Bool { hasCondition && isBranchAlone }
}

/// The state of one parse: issues so far, settings found, and which `l_` each `fl_layer_apply` closes.
struct ParseRun {
    let limits: ChainLimits
    let location: String
    var issues: [ValidationIssue] = []
    /// The component of each issue: parameters are read for every component before steps are
    /// built, so issues are found out of order and sorted before they are returned.
    var issueComponents: [Int] = []
    var settings = OutputSettings()
    var closing: [Int: Int] = [:]
    /// The `if_else` and `if_end` of each block-opening `if_`.
    var blockElse: [Int: Int] = [:]
    var blockEnd: [Int: Int] = [:]
    /// The `if_else` component right after a one-component conditional (`if_ar_gt_1,c_fill,…/if_else,c_fit,…`).
    var singleElse: [Int: Int] = [:]
    /// Inside an `if_` block (or a one-component conditional) while building steps.
    var conditionDepth = 0
    /// Unsupported features already reported: a second use of one is a consequence of the
    /// first (`if_else` after `if_`, `w_$w` after `$w_100`), not news.
    var reported: Set<CloudinaryVocabulary.Unsupported> = []
    /// Parameters left out as Cloudinary ignores them, each with its component and reason.
    var notes: [String] = []
    /// `dpr_` components of their own, applied to the chain's resizes once it is read.
    var densities: [(Component, Double)] = []
    /// The component with `w_auto` or `w_auto:breakpoints`, read as the output's breakpoints.
    var automaticWidth: Component?
    /// The component with `dpr_auto`, read as the output's densities.
    var automaticDensity: Component?
    /// The top-level components whose `f_` names a format Derive writes (`f_auto`, `f_webp`):
    /// an earlier `f_` is replaced by them, as any setting given again is.
    var writableFormatAt: [Int] = []
    /// Some component opens a layer (`l_`, `u_`): a blend mode elsewhere may be meant for it.
    var chainHasLayer = false

    init(limits: ChainLimits, location: String) {
        self.limits = limits
        self.location = location
    }

    mutating func fail(_ component: Component, _ reason: String) {
        issues.append(ValidationIssue(location: "\(location) \(component.label)", reason: reason))
        issueComponents.append(component.index)
    }

    /// A malformed value of a parameter: Cloudinary refuses it too, and the message says so.
    mutating func fail(_ component: Component, param: String, _ reason: String) {
        if let value = component.params[param] {
            fail(component, CloudinaryVocabulary.malformed("\(param)_\(value)", "\(param) \(reason)", hint: ""))
        } else {
            fail(component, "\(param) \(reason)")
        }
    }

    /// The issues by component, so the first line is about the earliest component at fault.
    var issuesInOrder: [ValidationIssue] {
        zip(issues, issueComponents).enumerated().sorted { ($0.element.1, $0.offset) < ($1.element.1, $1.offset) }.map(\.element.0)
    }

    /// Refuses what Cloudinary has and Derive does not, once per feature.
    mutating func refuse(_ component: Component, _ written: String, _ feature: CloudinaryVocabulary.Unsupported) {
        guard reported.insert(feature).inserted else { return }
        fail(component, CloudinaryVocabulary.notSupported(written, feature))
    }

    // MARK: - Components

    mutating func component(index: Int, text: String) -> Component {
        var component = Component(index: index, text: text)
        if text.isEmpty {
            fail(component, "is empty; remove the extra '/'")
            return component
        }
        let tokens = text.split(separator: ",", omittingEmptySubsequences: false)
        if tokens.contains(where: { Self.namesFromVariable(String($0)) }) {
            let rest = tokens.filter { !$0.hasPrefix("$") && !$0.hasPrefix("if_") }
            component.template = rest.joined(separator: ",")
            // The layer is recorded, so that a fl_layer_apply after it is known to close it.
            for token in rest where token.hasPrefix("l_") || token.hasPrefix("u_") { component.params[String(token.prefix(1))] = String(token.dropFirst(2)) }
        }
        for token in tokens {
            if component.template != nil && !token.hasPrefix("$") && !token.hasPrefix("if_") { continue }
            guard let underscore = token.firstIndex(of: "_"), underscore != token.startIndex else {
                fail(component, "\(Quoted(String(token))) is not a parameter; parameters are key_value, such as w_200")
                component.refused = true
                continue
            }
            let key = String(token[..<underscore])
            let value = String(token[token.index(after: underscore)...])
            if key.hasPrefix("$") {
                if let assignment = assignment(name: String(key.dropFirst()), value: value, written: String(token), in: component) {
                    component.assignments.append(assignment)
                } else {
                    component.refused = true
                }
                continue
            }
            if key == "if" {
                if component.branch != nil {
                    fail(component, "repeats if_; a component holds one condition (join conditions with _and_ or _or_)")
                    component.refused = true
                } else if let branch = branch(value, written: String(token), in: &component) {
                    component.branch = branch
                } else {
                    component.refused = true
                }
                continue
            }
            if key == "l", value.hasPrefix("lut:") {
                // A 3D LUT applied to the image: a step of its own, not a layer that a
                // fl_layer_apply closes.
                if component.params["lut"] != nil {
                    fail(component, "repeats l_lut:; put each LUT in its own component")
                } else {
                    component.params["lut"] = String(value.dropFirst(4))
                }
                continue
            }
            if key == "l" || key == "u" {
                if component.params[key] != nil {
                    fail(component, "repeats \(key)_; put each layer in its own component")
                    continue
                }
                if value.isEmpty {
                    fail(component, "\(key)_ has no value")
                    continue
                }
                // Kept even when refused, so that its fl_layer_apply still closes it.
                component.params[key] = value
            }
            if key == "p" {
                // Cloudinary reads the prefix when it generates a CSS sprite (the sprite API)
                // and nowhere else: on an image's transformation it changes nothing.
                note(component, "\(token): a CSS sprite's class prefix, which Cloudinary reads only when it generates a sprite; on an image it changes nothing")
                continue
            }
            if key != "fl", let feature = CloudinaryVocabulary.unsupported(key: key, value: value) {
                refuse(component, String(token), feature)
                component.refused = true
                continue
            }
            guard CloudinaryParser.keys.contains(key) else {
                if CloudinaryVocabulary.cloudinaryParameters.contains(key) {
                    fail(component, "\(token): known to Cloudinary, not supported by Derive")
                } else {
                    fail(component, CloudinaryVocabulary.unknown(String(token), what: "parameter \(Quoted(key + "_"))",
                                                             hint: Self.parameterHint(key)))
                }
                component.refused = true
                continue
            }
            if key == "fl" {
                for flag in value.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
                    if CloudinaryParser.flags.contains(flag) {
                        component.flags.append(flag)
                        continue
                    }
                    if let meaning = CloudinaryParser.deliveryFlag(flag) {
                        switch meaning {
                        case .note(let text): note(component, "fl_\(flag): \(text)")
                        case .flag(let name, let text):
                            component.flags.append(name)
                            note(component, "fl_\(flag): \(text)")
                        }
                        continue
                    }
                    component.refused = true
                    if let feature = CloudinaryVocabulary.unsupported(key: "fl", value: flag) {
                        refuse(component, "fl_" + flag, feature)
                    } else if CloudinaryVocabulary.cloudinaryFlags.contains(flag) {
                        fail(component, "fl_\(flag): known to Cloudinary, not supported by Derive; supported flags: " + CloudinaryParser.flags.joined(separator: ", "))
                    } else {
                        let supported = "; supported flags: " + CloudinaryParser.flags.joined(separator: ", ")
                        fail(component, CloudinaryVocabulary.unknown("fl_" + flag, what: "flag \(Quoted(flag))",
                                                                 hint: Suggest.hint(for: flag, among: CloudinaryParser.flags, else: supported)))
                    }
                }
                continue
            }
            if key == "l" || key == "u" { continue }
            if component.params[key] != nil {
                fail(component, "repeats \(key)_; put each \(key == "e" ? "effect" : "parameter") in its own component")
                continue
            }
            if value.isEmpty {
                fail(component, "\(key)_ has no value")
                continue
            }
            component.params[key] = value
        }
        return component
    }

    /// Whether a parameter takes a name (a mode, gravity, colour, effect, layer or text style)
    /// from a variable: `c_$mode`, `e_$effect:100`, `l_text:$style:Hi`. Output settings, flags
    /// and presets (`f_$f`, `t_$t`) are not among them: they are fixed before the chain runs.
    static func namesFromVariable(_ token: String) -> Bool {
        guard let underscore = token.firstIndex(of: "_"), !token.hasPrefix("$") else { return false }
        let key = token[..<underscore], value = token[token.index(after: underscore)...]
        switch key {
        case "c", "g", "b", "co": return value.contains("$")
        // The colour of a border; its width is a number, which may be an expression of variables.
        case "bo": return value.range(of: "px_solid_", options: .backwards).map { value[$0.upperBound...] }.map { $0.contains("$") } ?? value.contains("$")
        case "e": return value.prefix { $0 != ":" }.contains("$")
        case "l":
            // An image layer's name takes variables itself (`l_$logo`), across components too.
            guard value.hasPrefix("text:") else { return false }
            return value.dropFirst(5).prefix { $0 != ":" }.contains("$")
        default: return false
        }
    }

    /// "did you mean" for a parameter Cloudinary does not have, only when it is one edit from one
    /// Derive reads (`wx` → `w`), never a guess among one-letter names (`if` is not `f`).
    static func parameterHint(_ key: String) -> String {
        let supported = "; supported: " + CloudinaryParser.keys.map { $0 + "_" }.joined(separator: ", ")
        let near = CloudinaryParser.keys.filter { candidate in
            Suggest.editDistance(Array(key.lowercased()), Array(candidate)) == 1 && (candidate.count > 1 || key.lowercased().hasPrefix(candidate))
        }
        guard let best = near.max(by: { $0.count < $1.count }) else { return supported }
        return "; did you mean \(Quoted(best + "_"))?"
    }

    /// Matches each `fl_layer_apply` with the innermost open `l_` before it. Layers left open
    /// are the single-component form (`l_logo,g_north,x_10`), as is a layer whose own component
    /// holds the flag.
    mutating func pairLayers(_ components: [Component]) {
        var open: [Int] = []
        for c in components {
            if c.opensLayer && c.isLayerApply {
                // `l_badge,fl_layer_apply,g_north_east`: opened and closed at once, read as
                // the one-component form (shortLayer).
                continue
            } else if c.opensLayer {
                open.append(c.index)
            } else if c.isLayerApply {
                if let opener = open.popLast() {
                    closing[opener] = c.index
                } else if components[..<c.index].contains(where: { $0.params["lut"] != nil }) {
                    // Cloudinary's SDKs close l_lut: with fl_layer_apply as any layer; a LUT
                    // applies to the image where it is written, so the flag closes nothing.
                    note(c, "fl_layer_apply after l_lut:: a LUT applies to the image where it is written; the flag closes nothing")
                } else {
                    fail(c, CloudinaryVocabulary.malformed("fl_layer_apply", "no l_ or u_ layer is open for it to apply", hint: ""))
                }
            }
        }
    }

    mutating func sequence(_ components: [Component], _ range: Range<Int>, inLayer: Bool, depth: Int) -> [Step] {
        var steps: [Step] = []
        var i = range.lowerBound
        while i < range.upperBound {
            var c = components[i]
            if c.opensBlock {
                i = block(components, at: i, range: range, inLayer: inLayer, depth: depth, into: &steps)
                continue
            }
            if c.branch == .otherwise || c.branch == .end {
                // Matched by pairBlocks (or reported there); an if_else's other parameters
                // open its branch.
                c.branch = nil
                if c.isBranchAlone {
                    i += 1
                    continue
                }
            }
            if c.opensLayer && c.refused {
                // The refusal of the layer says it all: nothing inside it is read.
                i = closing[i].map { $0 < range.upperBound ? $0 + 1 : i + 1 } ?? i + 1
                continue
            }
            if c.refused {
                i += 1
                continue
            }
            if c.isDensityAlone {
                takeDensity(c, topLevel: !inLayer && depth == 0 && conditionDepth == 0)
                i += 1
                continue
            }
            if c.opensLayer {
                if depth + 1 > limits.maxOverlayDepth {
                    fail(c, "overlays are nested more than \(limits.maxOverlayDepth) deep")
                    return steps
                }
                if let template = c.template {
                    if let close = closing[i] {
                        guard close < range.upperBound, let layer = layerTemplate(components, opener: c, through: close) else {
                            fail(c, CloudinaryVocabulary.notSupported(template, CloudinaryVocabulary.feature(.variable)))
                            return steps
                        }
                        steps += layer
                        i = close + 1
                        continue
                    }
                    steps += self.steps(from: c, inLayer: inLayer)
                    i += 1
                    continue
                }
                if let close = closing[i], close >= range.upperBound {
                    fail(c, "a layer opened inside if_ … if_end is applied (fl_layer_apply) before the block's if_else or if_end")
                    return steps
                }
                if let close = closing[i], close < range.upperBound {
                    if let overlay = longLayer(components, opener: c, inner: (i + 1)..<close, apply: components[close], depth: depth) {
                        steps.append(.overlay(overlay))
                        validateText(of: overlay, in: c)
                        validateBlend(of: overlay, in: c)
                    }
                    i = close + 1
                    continue
                }
                if let overlay = shortLayer(c, depth: depth) {
                    if case .condition(let condition)? = c.branch {
                        steps.append(.conditional(Conditional(condition: condition, then: [.overlay(overlay)], otherwise: [])))
                    } else {
                        steps.append(.overlay(overlay))
                    }
                    validateText(of: overlay, in: c)
                    validateBlend(of: overlay, in: c)
                }
            } else if !c.isLayerApply {
                if case .condition(let condition)? = c.branch {
                    let otherwise = singleElse[i].flatMap { $0 < range.upperBound ? $0 : nil }
                    steps += singleConditional(c, condition: condition, otherwise: otherwise.map { components[$0] }, inLayer: inLayer)
                    if let otherwise { i = otherwise }
                } else {
                    steps += self.steps(from: c, inLayer: inLayer)
                }
            }
            i += 1
        }
        return steps
    }

    // MARK: - Steps of one component

    mutating func steps(from c: Component, inLayer: Bool) -> [Step] {
        let before = issues.count
        var p = c.params
        // Assignments apply before the component's other parameters, which may use them.
        var steps: [Step] = c.assignments.map(Step.assign)
        // Read when planning (an overlay's chain starts with the variables set before it).
        if let template = c.template { return steps + [.template(template)] }
        if let quality = takeSettings(&p, flags: c.flags, in: c, inLayer: inLayer) { steps.append(quality) }
        // Flags that place or combine a layer, with no layer to act on: Cloudinary's SDKs write
        // them on the base image (`c_scale,fl_relative,w_100`, `fl_region_relative`), where
        // there is nothing for them to change.
        for flag in ["region_relative", "tiled", "no_overflow", "cutter", "replace_image"] where c.flags.contains(flag) {
            note(c, "fl_\(flag) outside a layer: it places or combines a layer (beside l_ or fl_layer_apply), and there is none here; ignored")
        }
        if c.flags.contains("text_no_trim") {
            note(c, "fl_text_no_trim outside a layer: it keeps a text layer's padding (beside l_text:… or inside the layer), and there is none here; ignored")
        }

        if let name = p.removeValue(forKey: "t") {
            // `t_a.b` applies the named transformations a and b in turn, as Cloudinary's SDKs
            // write a list of them.
            // Percent-encoded names (`t_named%20with%20spaces`) are looked up decoded.
            let presets = validated(steps + name.split(separator: ".", omittingEmptySubsequences: false).map { Step.preset(String($0).removingPercentEncoding ?? String($0)) }, in: c)
            guard !p.isEmpty else { return presets }
            // The component's other parameters apply to what the named transformation makes,
            // as a component after it (settings are already taken, assignments already applied).
            var rest = c
            rest.params = p
            rest.assignments = []
            rest.flags.removeAll { ["progressive", "keep_iptc", "keep_metadata", "lossless", "strip_profile", "png8", "png24", "png32", "lossy", "tiff8_lzw", "ignore_mask_channels", "keep_attribution", "getinfo"].contains($0) }
            note(c, "t_\(name) beside other parameters: the named transformation applies first, then \(Quoted(p.keys.sorted().map { "\($0)_\(p[$0]!)" }.joined(separator: ","))) as a component after it (Cloudinary's documentation does not say in which order)")
            return presets + self.steps(from: rest, inLayer: inLayer)
        }

        // dpr_<n> beside output settings or other steps but no size (`q_auto,f_auto,dpr_2`, as
        // Cloudinary's documentation writes a delivery DPR): the chain's density, as in a
        // component of its own.
        if let dpr = p["dpr"], dpr != "auto", !["c", "w", "h", "ar", "z", "g"].contains(where: { p[$0] != nil }) {
            p["dpr"] = nil
            var alone = c
            alone.params = ["dpr": dpr]
            alone.flags = []
            alone.assignments = []
            takeDensity(alone, topLevel: !inLayer && conditionDepth == 0)
        }
        guard takeAutomaticDensity(&p, in: c, inLayer: inLayer), takeAutomaticWidth(&p, in: c, inLayer: inLayer) else { return steps }

        var effect: String?
        var trim: Trim?
        if let e = p.removeValue(forKey: "e") {
            if e == "trim" || e.hasPrefix("trim:") {
                trim = self.trim(e, in: c)
            } else {
                effect = e
            }
        }
        if let trim { steps.append(.trim(trim)) }
        // e_shadow takes its offset from x_ and y_ beside it (Cloudinary's SDK: Shadow.offsetX).
        var shadowOffset: (x: Length?, y: Length?) = (nil, nil)
        if let e = effect, e == "shadow" || e.hasPrefix("shadow:") || e == "gradient_fade" || e.hasPrefix("gradient_fade:") {
            shadowOffset.x = p.removeValue(forKey: "x").flatMap { offset($0, param: "x", in: c) }
            shadowOffset.y = p.removeValue(forKey: "y").flatMap { offset($0, param: "y", in: c) }
        }
        // A region effect takes its rectangle from x_, y_, w_ and h_ beside it.
        var region: Region?
        if let effect { region = self.region(for: effect, &p, in: c) }

        // a_auto_right / a_auto_left qualify the resize beside them (the requested box).
        // Cloudinary joins rotation modes with '.' (`a_auto_right.hflip`): the turn comes first,
        // then the rest are applied in turn after the resize.
        var autoTurn: AutoTurn?
        if let a = p["a"] {
            let modes = a.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            if let mode = modes.first, mode == "auto_right" || mode == "auto_left" {
                autoTurn = mode == "auto_right" ? .right : .left
                p["a"] = modes.count > 1 ? String(modes[1]) : nil
            }
        }
        let resizeKeys = ["c", "w", "h", "ar", "dpr", "g", "x", "y", "z"]
        var resize: Resize?
        if resizeKeys.contains(where: { p[$0] != nil }) {
            resize = self.resize(&p, in: c).flatMap { ignoringQualifiers($0, in: c) }
        }
        if c.flags.contains("ignore_aspect_ratio") { resize = ignoringAspectRatio(resize, in: c) }
        if let autoTurn {
            if resize == nil {
                note(c, "a_auto_\(autoTurn.rawValue) without a resize beside it: it turns the image when the requested box's orientation differs from the image's, and there is no box; nothing turns")
            } else {
                resize?.autoTurn = autoTurn
            }
        }
        if c.flags.contains("relative") {
            if !inLayer {
                note(c, "fl_relative outside a layer: it sizes a layer by the image it is placed on, and the base image's fractional sizes are already its own; ignored")
            } else {
                resize?.relative = true
            }
        }

        var rotations: [Rotate] = []
        if let a = p.removeValue(forKey: "a") {
            rotations = self.rotations(a, in: c)
        }
        var round: RoundCorners?
        if let r = p.removeValue(forKey: "r") {
            round = self.round(r, in: c)
        }

        // b_ is the pad colour with a pad mode, else the corner colour of a rotation or rounding,
        // else a step of its own that flattens transparency.
        let background = takeBackground(&p, resize: &resize, rotations: &rotations, round: &round, in: c)

        let colorizeColor = p.removeValue(forKey: "co")
        if let resize { steps.append(.resize(resize)) }
        steps += rotations.filter { $0 != Rotate() || $0.background != nil }.map(Step.rotate)
        if let effect, var parsed = self.effect(effect, color: colorizeColor, in: c) {
            if case .shadow(let n, let color, let x, let y) = parsed {
                parsed = .shadow(n, color: color, x: shadowOffset.x ?? x, y: shadowOffset.y ?? y)
            }
            if case .gradientFade(let n, let edges, _, _) = parsed {
                parsed = .gradientFade(n, edges: edges, x: shadowOffset.x, y: shadowOffset.y)
            }
            steps.append(.effect(EffectRules.with(parsed, region: region)))
        } else {
            ignoreUnusedColor(colorizeColor, in: c)
        }
        if let lut = p.removeValue(forKey: "lut"), let file = lutFile(lut, in: c) { steps.append(.lut(file)) }
        if let round { steps.append(.round(round)) }
        if let bo = p.removeValue(forKey: "bo"), let border = border(bo, in: c) {
            // A border 0 pixels wide draws nothing, as in Cloudinary.
            if border.width == 0 && border.widthExpression == nil {
                note(c, "bo_\(bo): a border 0 pixels wide draws nothing")
            } else {
                steps.append(.border(border))
            }
        }
        if let o = p.removeValue(forKey: "o") {
            if let value = Int(o) {
                steps.append(.opacity(.value(value)))
            } else if Self.looksNumeric(o) {
                fail(c, param: "o", "must be an integer 0–100, got \(Quoted(o))")
            } else if let value = wholeNumberExpression(o, param: "o", accepts: "an integer 0–100", in: c) {
                steps.append(.opacity(value))
            }
        }
        if let background { steps.append(.background(background)) }
        // A parameter refused while reading leaves its step incomplete; what the step rules
        // would say of it (`needs a width`) follows from that refusal and is not news.
        return issues.count > before ? steps : validated(steps, in: c)
    }

    /// b_, taken from `p` and given to what it colours: a pad mode's padding (or its fill from
    /// the image, b_blurred and b_auto), else the corners of a rotation or a rounding; returned
    /// when it colours none of them, to flatten transparency as a step of its own.
    mutating func takeBackground(_ p: inout [String: String], resize: inout Resize?, rotations: inout [Rotate], round: inout RoundCorners?,
                                 in c: Component) -> Color? {
        var background: Color?
        if let b = p.removeValue(forKey: "b"), let fill = padFill(b, in: c) {
            // b_blurred and b_auto fill a pad mode's padding from the image.
            if resize?.mode.pads == true {
                resize?.padFill = fill
            } else if resize == nil || resize?.mode.takesGravity == false && resize?.mode != .fillPad {
                // c_pad without a size pads nothing (and is ignored), as does a mode that
                // never pads: the padding's fill has nothing to fill.
                note(c, "b_\(b): it fills the padding of a pad mode, and nothing is padded here; ignored")
            } else {
                fail(c, "b_\(b): known to Cloudinary, not supported by Derive without a pad mode: it fills the padding of c_pad, c_lpad or c_mpad")
            }
        } else if let b = c.params["b"], !Self.isPadFill(b) {
            if let color = color(b, param: "b", in: c) {
                if resize?.mode.takesBackground == true {
                    resize?.background = color
                } else if !rotations.isEmpty {
                    for i in rotations.indices { rotations[i].background = color }
                } else if round != nil {
                    round?.background = color
                } else {
                    background = color
                }
            }
        }
        return background
    }

    /// The rectangle of a region effect (`e_pixelate_region`, `e_blur_region`...) from x_, y_,
    /// w_ and h_ beside it, taking them from `p`; nil for other effects or without any.
    mutating func region(for e: String, _ p: inout [String: String], in c: Component) -> Region? {
        guard let kind = Effect.Kind(rawValue: String(e.prefix { $0 != ":" })), EffectRules.takesRegion(kind),
              ["x", "y", "w", "h"].contains(where: { p[$0] != nil }) else { return nil }
        let x = p.removeValue(forKey: "x").flatMap { offset($0, param: "x", in: c) } ?? .pixels(0)
        let y = p.removeValue(forKey: "y").flatMap { offset($0, param: "y", in: c) } ?? .pixels(0)
        let w = p.removeValue(forKey: "w").flatMap { size($0, param: "w", in: c) }
        let h = p.removeValue(forKey: "h").flatMap { size($0, param: "h", in: c) }
        // A side not given reaches the image's far edge from the offset, as x_ and y_ not
        // given are 0: `e_pixelate_region,w_100` is a band the image's height, as
        // Cloudinary's SDKs write it.
        let width = w ?? Self.toFarEdge(from: x, axis: "w")
        let height = h ?? Self.toFarEdge(from: y, axis: "h")
        guard let width, let height else {
            fail(c, "e_\(kind.rawValue) without w_ or h_: known to Cloudinary, not supported by Derive with an expression for x_ or y_: give the region's w_ and h_")
            return nil
        }
        if w == nil || h == nil {
            note(c, "e_\(kind.rawValue) without \(w == nil && h == nil ? "w_ and h_" : w == nil ? "w_" : "h_"): the region reaches the image's far edge from its offset")
        }
        return Region(x: x, y: y, width: width, height: height)
    }


    /// `l_lut:<name>` as a path of safe segments (`folder:film.3dl` is `folder/film.3dl`).
    mutating func lutFile(_ lut: String, in c: Component) -> String? {
        let parts = lut.split(separator: ":", omittingEmptySubsequences: false)
        guard !lut.isEmpty, lut.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.:".contains($0)) }),
              !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            fail(c, CloudinaryVocabulary.malformed("l_lut:" + lut, "a LUT is a file name such as l_lut:warm.cube or l_lut:folder:film.3dl", hint: ""))
            return nil
        }
        return parts.joined(separator: "/")
    }

    /// Applies the shared step rules, reporting each issue under its Cloudinary parameter.
    mutating func validated(_ steps: [Step], in c: Component) -> [Step] {
        for step in steps {
            for issue in StepRules.issues(in: step, limits: limits) {
                let param = CloudinaryNames.parameter(for: step, field: issue.field)
                // An effect's settings are named with it: its amount (`e_sepia strength`) and the
                // others (e_fill_light's bias, e_recolor's matrix).
                var subject = param
                if case .effect(let e) = step, !issue.field.isEmpty { subject = "e_\(e.name) \(issue.field)" }
                if let bound = issue.bound, let value = c.params[param] {
                    fail(c, CloudinaryVocabulary.outOfRange("\(param)_\(value)", "\(subject) \(issue.reason)", bound: bound))
                } else if subject != param, let value = c.params[param] {
                    // An effect's settings out of their form Cloudinary refuses too: e_gradient_fade
                    // with x_ and y_ together among them (its reference: "Only one direction can
                    // be specified").
                    fail(c, CloudinaryVocabulary.malformed("\(param)_\(value)", "\(subject) \(issue.reason)", hint: ""))
                } else if subject != param {
                    fail(c, "\(subject) \(issue.reason)")
                } else if param.isEmpty {
                    fail(c, issue.reason)
                } else {
                    fail(c, param: param, issue.reason)
                }
            }
        }
        return steps
    }

    /// Takes the component's output settings into the output's; a quality inside an `if_`
    /// block is returned as a step of the branch instead.
    mutating func takeSettings(_ p: inout [String: String], flags: [String], in c: Component, inLayer: Bool) -> Step? {
        var found = OutputSettings()
        if let f = p.removeValue(forKey: "f") {
            if let format = OutputFormat.parse(f) {
                found.format = format
            } else if let refusal = OutputFormat.refusal(f) {
                // `f_flif/f_auto`: a later component names the format; Cloudinary encodes once,
                // at the end, with the last one given, so this one is never written.
                if !inLayer, let later = writableFormatAt.first(where: { $0 > c.index }) {
                    note(c, "f_\(f) is replaced by the f_ of component \(later): Cloudinary encodes once, with the last format given, so f_\(f) (which Derive does not write) is ignored")
                } else {
                    fail(c, refusal)
                }
            } else {
                let supported = "; supported: " + OutputFormat.spellings.joined(separator: ", ")
                fail(c, CloudinaryVocabulary.unknown("f_" + f, what: "format \(Quoted(f))", hint: Suggest.hint(for: f, among: OutputFormat.spellings, else: supported)))
            }
        }
        if var q = p.removeValue(forKey: "q") {
            // `q_70:qmax_20`: qmax caps a video encoder's quantizer (Cloudinary's reference
            // gives it for video); an image's quality is the level before it.
            if let range = q.range(of: #":qmax_\d+$"#, options: .regularExpression) {
                note(c, "q_\(q): qmax_ caps a video encoder's quantizer; for an image Derive reads the quality q_\(q[..<range.lowerBound]) and ignores qmax_")
                q = String(q[..<range.lowerBound])
            }
            let parts = q.split(separator: ":", maxSplits: 1).map(String.init)
            let autoChroma = q.range(of: #"^auto:[a-z]+:(444|420)$"#, options: .regularExpression) != nil
            if let first = parts.first, first != "auto", parts.count == 2, let chroma = ["444": ChromaSubsampling.full, "420": .half][parts[1]] {
                found.quality = QualityText.parse(first)
                found.chromaSubsampling = chroma
            } else if autoChroma, let cut = q.lastIndex(of: ":") {
                // `q_auto:low:444`: the automatic level, with the chroma subsampling after it.
                found.quality = QualityText.parse(String(q[..<cut]))
                found.chromaSubsampling = q.hasSuffix("444") ? .full : .half
            } else {
                found.quality = QualityText.parse(q)
            }
            if found.quality == nil && ExpressionParser.looksLikeExpression(q) {
                found.quality = decimalExpression(q, param: "q", accepts: "1–100, auto[:level]", in: c).map(Quality.expression)
            } else if found.quality == nil {
                fail(c, param: "q", "must be 1–100, auto or auto:best|good|eco|low (optionally with :444 or :420), got \(Quoted(q))")
            }
        }
        // dl_<ms>: each animation frame's time, an output setting.
        if let dl = p.removeValue(forKey: "dl") {
            if let ms = Int(dl), ms >= 0 {
                found.delay = ms
            } else {
                fail(c, CloudinaryVocabulary.malformed("dl_" + dl, "dl takes each frame's time in whole milliseconds (dl_200)", hint: ""))
            }
        }
        // e_loop[:<additional plays>]: how often the animation plays, an output setting.
        if let e = p["e"], e == "loop" || e.hasPrefix("loop:") {
            p["e"] = nil
            let extra = e.dropFirst(5)
            if e == "loop" {
                found.loop = 0
            } else if let n = Int(extra), n >= 0, n < 65_535 {
                found.loop = n + 1
            } else {
                fail(c, CloudinaryVocabulary.malformed("e_" + e, "e_loop takes the additional plays, a whole number from 0, or nothing to loop forever", hint: ""))
            }
        }
        // Derive's pixels are always sRGB (a CMYK source is converted): cs_srgb and cs_no_cmyk ask
        // for what it makes; cs_tinysrgb's point, a smaller profile, is met by writing none.
        // cs_cmyk and cs_keep_cmyk write CMYK (JPEG and TIFF; the planner checks the format);
        // cs_icc: and cs_srgb:truecolor are refused by the vocabulary before this.
        if let cs = p.removeValue(forKey: "cs") {
            switch cs {
            case "srgb", "no_cmyk": break
            case "tinysrgb": found.stripProfile = true
            case "cmyk": found.cmyk = .convert
            case "keep_cmyk": found.cmyk = .keep
            default:
                fail(c, CloudinaryVocabulary.unknown("cs_" + cs, what: "colour space \(Quoted(cs))",
                                                     hint: Suggest.hint(for: cs, among: ["srgb", "no_cmyk", "tinysrgb", "cmyk", "keep_cmyk"],
                                                                       else: "; Derive writes sRGB (cs_srgb, cs_no_cmyk, cs_tinysrgb) or CMYK (cs_cmyk, cs_keep_cmyk)")))
            }
        }
        if let dn = p.removeValue(forKey: "dn") {
            if let dpi = Int(dn) {
                if let problem = StepRules.check(dpi, in: EncodingLimits.density, field: "dn", derivesLimits: true).first, let bound = problem.bound {
                    fail(c, CloudinaryVocabulary.outOfRange("dn_" + dn, "\(problem.field) \(problem.reason)", bound: bound))
                } else {
                    found.density = dpi
                }
            } else {
                fail(c, param: "dn", "must be whole dots per inch (dn_300), got \(Quoted(dn))")
            }
        }
        // d_<image>: named as a layer is (`:` for folders); Cloudinary's public IDs carry their
        // extension (`d_avatar.png`).
        if let d = p.removeValue(forKey: "d") {
            let parts = d.split(separator: ":", omittingEmptySubsequences: false)
            if !d.isEmpty, d.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.:".contains($0)) }),
               !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
                found.defaultImage = parts.joined(separator: "/")
            } else {
                fail(c, CloudinaryVocabulary.malformed("d_" + d, "a default image is a name such as d_avatar.png or d_folder:avatar", hint: ""))
            }
        }
        let clipFlags = flags.filter { $0 == "clip" || $0 == "clip_evenodd" }
        if !clipFlags.isEmpty {
            // Beside fl_clip, pg_ chooses the path, by number or by name (pg_name:<name>).
            var clip = ClipSetting(evenOdd: clipFlags.contains("clip_evenodd"))
            if clipFlags.count > 1 { fail(c, "fl_clip and fl_clip_evenodd together: a path is filled by one rule") }
            if let pg = p.removeValue(forKey: "pg") {
                if pg.hasPrefix("name:"), let name = String(pg.dropFirst(5)).removingPercentEncoding, !name.isEmpty {
                    clip.name = name
                } else if let n = Int(pg), n >= 1 {
                    clip.number = n
                } else {
                    fail(c, CloudinaryVocabulary.malformed("pg_" + pg, "beside fl_clip, pg chooses the clipping path: pg_<number> or pg_name:<name>", hint: ""))
                }
            }
            found.clip = clip
        }
        if let pg = p.removeValue(forKey: "pg") {
            if let frame = Int(pg) {
                found.frame = frame
            } else if let pages = PageSet.parse(pg) {
                // Normalised, so that the same pages written twice in two spellings agree.
                found.pages = pages.normalised
            } else if pg.hasPrefix("name:") || pg.hasPrefix("embedded:") {
                // A Photoshop document's layers by name, or a smart object's embedded file:
                // read by Derive's own PSD reader before the source is decoded.
                if let psd = PSDSelection.parse(pg) {
                    found.psd = psd
                } else {
                    fail(c, CloudinaryVocabulary.malformed("pg_" + pg, "pg_name:<layer>[;<layer>...] names a PSD's layers; pg_embedded:<n> (from 1) or pg_embedded:name:<layer>[;<layer>...] its smart objects' embedded files", hint: ""))
                }
            } else {
                fail(c, CloudinaryVocabulary.malformed("pg_" + pg, "pg takes a page (3), a range upwards (2-4, 5-) or pages and ranges joined by ';' (1;3;5, 1-3;6)", hint: ""))
            }
        }
        if let a = p["a"] {
            let tokens = a.split(separator: ".").map(String.init)
            if tokens.contains("ignore") {
                found.autoOrient = false
                let rest = tokens.filter { $0 != "ignore" }
                if rest.isEmpty { p["a"] = nil } else { p["a"] = rest.joined(separator: ".") }
            }
        }
        for flag in flags {
            switch flag {
            case "progressive": found.progressive = true
            case "keep_iptc", "keep_metadata": found.strip = false
            case "lossless": found.lossless = true
            case "strip_profile": found.stripProfile = true
            case "png8", "png24", "png32":
                if let type = found.pngType, type.rawValue != flag {
                    fail(c, "fl_\(type.rawValue) and fl_\(flag) together: unknown to Cloudinary (a PNG has one colour type)")
                }
                found.pngType = PNGType(rawValue: flag)
            case "lossy": found.lossy = true
            case "tiff8_lzw": found.tiffLZW = true
            case "ignore_mask_channels": found.ignoreMaskChannels = true
            case "keep_attribution": found.keepAttribution = true
            case "getinfo": found.getInfo = true
            default: break
            }
        }
        guard found != OutputSettings() else { return nil }
        if inLayer {
            // A layer's own format or quality is how Cloudinary fetches the layer; its pixels
            // are drawn into the image, which has the output's.
            note(c, "output settings inside a layer (\(c.text)): the layer is drawn into the image, which is encoded with the output's settings; ignored")
            return nil
        }
        if conditionDepth > 0 {
            // A quality chosen by a condition (`if_!pro!_in_tags,q_90/if_else,q_30`): the
            // planner decides the branch, and with it the quality.
            var others = found
            others.quality = nil
            if let quality = found.quality, others == OutputSettings() { return .quality(quality) }
            fail(c, "output settings other than q_ (f_, pg_, a_ignore, fl_progressive, fl_keep_iptc, fl_lossless) inside if_ … if_end: known to Cloudinary, not supported by Derive: Derive chooses a quality by condition (if_…,q_80/if_else,q_30), but the format and the other settings apply to the whole output, which Derive sets before the chain runs")
            return nil
        }
        merge(found, in: c)
        return nil
    }

    /// A setting given again in a later component replaces the earlier one (Cloudinary encodes
    /// once, at the end, with the last value given); the notes say so.
    mutating func merge(_ found: OutputSettings, in c: Component) {
        let (merged, conflicts) = settings.filling(from: found)
        settings = merged
        guard !conflicts.isEmpty else { return }
        let (replaced, _) = found.filling(from: settings)
        for field in conflicts {
            note(c, "\(CloudinaryNames.setting(field))_ given again: the later value replaces the earlier one")
        }
        settings = replaced
    }

    mutating func resize(_ p: inout [String: String], in c: Component) -> Resize? {
        var r = Resize()
        if let mode = p.removeValue(forKey: "c") {
            guard let parsed = ResizeMode(rawValue: mode) else {
                let modes = ResizeMode.allCases.map(\.rawValue)
                if let feature = CloudinaryVocabulary.unsupported(key: "c", value: mode) {
                    refuse(c, "c_" + mode, feature)
                } else if CloudinaryVocabulary.cloudinaryCropModes.contains(mode) {
                    fail(c, "c_\(mode): known to Cloudinary, not supported by Derive; supported modes: " + modes.joined(separator: ", "))
                } else {
                    fail(c, CloudinaryVocabulary.unknown("c_" + mode, what: "crop mode \(Quoted(mode))",
                                                     hint: Suggest.hint(for: mode, among: modes, else: "; supported: " + modes.joined(separator: ", "))))
                }
                return nil
            }
            r.mode = parsed
        }
        r.width = p.removeValue(forKey: "w").flatMap { automaticWidthFallback($0, in: c) ?? size($0, param: "w", in: c) }
        r.height = p.removeValue(forKey: "h").flatMap { size($0, param: "h", in: c) }
        if let ar = p.removeValue(forKey: "ar") {
            r.aspectRatio = AspectRatio.parse(ar)
            if r.aspectRatio == nil {
                if ExpressionParser.looksLikeExpression(ar) {
                    r.aspectRatioExpression = decimalExpression(ar, param: "ar", accepts: "a ratio (16:9, 1.78)", in: c)
                } else {
                    fail(c, param: "ar", "must be a ratio such as 16:9 or 1.78, got \(Quoted(ar))")
                }
            }
        }
        if refusesAspectRatio(&r, in: c) { return nil }
        if let dpr = p.removeValue(forKey: "dpr") {
            if let feature = CloudinaryVocabulary.unsupported(key: "dpr", value: dpr) {
                refuse(c, "dpr_" + dpr, feature)
            } else if let value = Double(dpr), value.isFinite, dpr.allSatisfy({ $0.isNumber || $0 == "." }) {
                r.dpr = Decimal6.quantize(value)
            } else if ExpressionParser.looksLikeExpression(dpr) {
                r.dprExpression = decimalExpression(dpr, param: "dpr", accepts: "a number (2.0)", in: c)
            } else {
                fail(c, param: "dpr", "must be a number such as 2.0, got \(Quoted(dpr))")
            }
        }
        if let z = p.removeValue(forKey: "z") {
            if let zoom = Double(z), zoom.isFinite, z.allSatisfy({ $0.isNumber || $0 == "." }) {
                r.zoom = Decimal6.quantize(zoom)
            } else if ExpressionParser.looksLikeExpression(z) {
                r.zoomExpression = decimalExpression(z, param: "z", accepts: "a zoom factor (1.5)", in: c)
            } else {
                fail(c, param: "z", "must be a zoom factor such as 1.5, got \(Quoted(z))")
            }
        }
        let x = p.removeValue(forKey: "x").flatMap { offset($0, param: "x", in: c) }
        let y = p.removeValue(forKey: "y").flatMap { offset($0, param: "y", in: c) }
        if let g = p.removeValue(forKey: "g") {
            if g == "xy_center" {
                // x_ and y_ default to 0 as every offset does: the focal point is then the
                // top-left corner (or the given axis on it).
                if x == nil || y == nil {
                    note(c, "g_xy_center without \(x == nil && y == nil ? "x_ and y_" : x == nil ? "x_" : "y_"): the focal point's missing coordinate is 0, as for every offset")
                }
                r.gravity = .focus(x: x ?? .pixels(0), y: y ?? .pixels(0))
                return r
            }
            if let gravity = Gravity.parseToken(g) {
                r.gravity = gravity
            } else {
                fail(c, GravityMessages.unsupported(g, written: "g_" + g))
            }
        }
        r.x = x
        r.y = y
        return r
    }

    /// The length from an offset to the image's far edge: the rest of the image.
    static func toFarEdge(from offset: Length, axis: String) -> Length? {
        switch offset {
        case .pixels(let n) where n <= 0: return .fraction(1)
        case .pixels(let n):
            if case .success(let e) = ExpressionParser.parse("\(axis)_sub_\(n)") { return .expression(e) }
            return nil
        case .fraction(let f) where f >= 0 && f < 1: return .fraction(Decimal6.quantize(1 - f))
        default: return nil
        }
    }

    mutating func size(_ text: String, param: String, in c: Component) -> Length? {
        if let d = Length.parseCloudinary(text) { return d }
        if let feature = CloudinaryVocabulary.unsupported(key: param, value: text) {
            refuse(c, "\(param)_\(text)", feature)
            return nil
        }
        return expression(text, param: param, in: c)
    }

    mutating func offset(_ text: String, param: String, in c: Component) -> Length? {
        if let d = Length.parseCloudinary(text) { return d }
        return expression(text, param: param, in: c)
    }

    /// `iw_div_2` where a length goes; the planner evaluates it on each source.
    mutating func expression(_ text: String, param: String, in c: Component) -> Length? {
        switch ExpressionParser.parse(text) {
        case .success(let expression):
            return .expression(expression)
        case .failure(let problem):
            fail(c, problem.message("\(param)_\(text)", param: param + "_"))
        }
        return nil
    }

    /// A number that is not a whole one (`12.5`, `5.`, `-`), or nothing: refused as a bad number,
    /// not read as an expression.
    static func looksNumeric(_ text: String) -> Bool {
        text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }
    }

    /// An expression where a whole number goes (`o_w_div_10`, a radius of `r_`); the planner
    /// evaluates it on each source. `accepts` says what else the parameter takes.
    /// `written` is the parameter as written, when `text` is a part of it (one radius).
    /// `label` names the parameter in the hint (`e_blur:`), when not `<param>_`.
    mutating func wholeNumberExpression(_ text: String, param: String, written: String? = nil, label: String? = nil,
                                        accepts: String, in c: Component) -> WholeNumber? {
        let written = written ?? "\(param)_\(text)"
        switch ExpressionParser.parse(text) {
        case .success(let expression):
            return .expression(expression)
        case .failure(let problem):
            fail(c, problem.message(written, param: label ?? param + "_", accepts: accepts))
        }
        return nil
    }

    /// An expression where a decimal goes (`ar_iar`, `dpr_$d`, `z_$z`, an angle).
    mutating func decimalExpression(_ text: String, param: String, accepts: String, in c: Component) -> ArithmeticExpression? {
        switch ExpressionParser.parse(text) {
        case .success(let expression): return expression
        case .failure(let problem):
            fail(c, problem.message("\(param)_\(text)", param: param + "_", accepts: accepts))
            return nil
        }
    }

    /// `written`: how the parameter holding the colour was written, when it is more than `param_text`.
    mutating func color(_ text: String, param: String, written: String? = nil, in c: Component) -> Color? {
        if let color = Color.parse(text) { return color }
        if let feature = CloudinaryVocabulary.unsupported(key: param, value: text) {
            refuse(c, written ?? "\(param)_\(text)", feature)
            return nil
        }
        fail(c, CloudinaryVocabulary.unknown(written ?? "\(param)_\(text)", what: "colour \(Quoted(text))",
                                             hint: Suggest.hint(for: text, among: Color.allNames, else: "; use a CSS name or rgb:rrggbb[aa]")))
        return nil
    }

    /// `a_` values joined by '.' are applied in turn, as Cloudinary does (`a_12.13.14` turns by
    /// 12, then 13, then 14 degrees; its SDKs write a list of angles that way), so each angle is
    /// a rotation of its own. Angles are whole degrees; flips come first.
    mutating func rotations(_ text: String, in c: Component) -> [Rotate] {
        // A whole expression (`a_$angle`, `a_iar_mul_10`) is one rotation; its decimals are
        // not a list of angles.
        if ExpressionParser.looksLikeExpression(text) {
            return decimalExpression(text, param: "a", accepts: "whole degrees, hflip, vflip or ignore", in: c).map { [Rotate(angleExpression: $0)] } ?? []
        }
        var first = Rotate()
        var angles: [Double] = []
        for token in text.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            switch token {
            case "hflip": first.horizontalFlip.toggle()
            case "vflip": first.verticalFlip.toggle()
            case "auto_right", "auto_left":
                fail(c, param: "a", "a_\(token) turns the image before the resize beside it, so it must come first among the modes joined by '.' (a_\(token).hflip), got \(Quoted(text))")
                return []
            case "auto", "exif":
                if let feature = CloudinaryVocabulary.unsupported(key: "a", value: token) {
                    refuse(c, "a_\(token)", feature)
                } else {
                    fail(c, param: "a", "must be whole degrees, hflip, vflip or ignore, joined by '.' and applied in turn, got \(Quoted(token))")
                }
                return []
            default:
                guard let angle = Int(token), token.count <= 12 else {
                    fail(c, param: "a", "must be whole degrees, hflip, vflip or ignore, joined by '.' and applied in turn, got \(Quoted(token))")
                    return []
                }
                angles.append(Double(angle))
            }
        }
        first.angle = angles.first ?? 0
        return [first] + angles.dropFirst().map { Rotate(angle: $0) }
    }

    mutating func round(_ text: String, in c: Component) -> RoundCorners? {
        if text == "max" { return RoundCorners(radius: .max) }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard (1...4).contains(parts.count), !parts.contains(where: { Int($0) == nil && Self.looksNumeric($0) }) else {
            fail(c, param: "r", "must be max or 1–4 radii in pixels joined by ':', got \(Quoted(text))")
            return nil
        }
        var radii: [WholeNumber] = []
        for part in parts {
            if let n = Int(part) {
                radii.append(.value(n))
            } else if let e = wholeNumberExpression(part, param: "r", written: "r_" + text, accepts: "max, or 1–4 radii joined by ':', each pixels (20)", in: c) {
                radii.append(e)
            } else {
                return nil
            }
        }
        return RoundCorners(radius: .corners(radii))
    }

    mutating func border(_ text: String, in c: Component) -> Border? {
        var parts = text.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        // Cloudinary draws a fractional width in whole pixels (`bo_5.5px`): the nearest.
        if parts.count == 3, parts[0].hasSuffix("px"), Int(parts[0].dropLast(2)) == nil, let exact = ExpressionParser.number(String(parts[0].dropLast(2))), exact >= 0 {
            let nearest = Int(exact.rounded())
            note(c, "bo_\(parts[0]): a border is whole pixels; Derive draws the nearest, \(nearest)px")
            parts[0] = "\(nearest)px"
        }
        guard parts.count == 3, parts[0].hasSuffix("px"), let width = Int(parts[0].dropLast(2)), parts[1] == "solid" else {
            // The width as an expression: `bo_w_div_100px_solid_black`.
            if let solid = text.range(of: "px_solid_", options: .backwards), ExpressionParser.looksLikeExpression(String(text[..<solid.lowerBound])) {
                let widthText = String(text[..<solid.lowerBound])
                guard case .expression(let e)? = wholeNumberExpression(widthText, param: "bo", written: "bo_" + text, accepts: "a width in pixels", in: c),
                      let colour = color(String(text[solid.upperBound...]), param: "bo", in: c) else { return nil }
                return Border(width: 0, color: colour, widthExpression: e)
            }
            fail(c, param: "bo", "must be <width>px_solid_<color>, such as bo_4px_solid_black, got \(Quoted(text))")
            return nil
        }
        return color(parts[2], param: "bo", in: c).map { Border(width: width, color: $0) }
    }

    mutating func trim(_ text: String, in c: Component) -> Trim? {
        var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init).dropFirst()
        var trim = Trim()
        if let first = parts.first {
            guard let tolerance = Int(first) else {
                // A colour alone (`e_trim:white`, as Cloudinary's Dart SDK writes a colour
                // override with no tolerance) is the colour, at the default tolerance.
                if parts.count == 1, !first.isEmpty, Double(first) == nil {
                    guard let colour = color(first, param: "e", in: c) else { return nil }
                    note(c, "e_\(text): a colour with no tolerance before it is the colour to trim, at the default tolerance (e_trim:\(trim.tolerance):\(first))")
                    trim.color = colour
                    return trim
                }
                fail(c, CloudinaryVocabulary.malformed("e_" + text, "e_trim takes a tolerance 0–100 and optionally a colour", hint: ""))
                return nil
            }
            trim.tolerance = tolerance
            parts = parts.dropFirst()
        }
        if !parts.isEmpty {
            guard let color = color(parts.joined(separator: ":"), param: "e", in: c) else { return nil }
            trim.color = color
        }
        return trim
    }

    mutating func effect(_ text: String, color: String?, in c: Component) -> Effect? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let name = parts[0]
        if name.contains("$") {
            refuse(c, "e_" + text, CloudinaryVocabulary.feature(.variable))
            return nil
        }
        if BlendMode.effect(named: name) != nil {
            // `e_anti_removal:95`, `e_mask` with no layer anywhere: a blend mode combines a
            // layer with the image, and with none there is nothing for it to change (as
            // fl_cutter outside a layer).
            if !chainHasLayer {
                note(c, "e_\(text) with no layer in the chain: a blend mode says how a layer (l_ … fl_layer_apply) combines with the image, and there is none; ignored")
                return nil
            }
            fail(c, "e_\(text): known to Cloudinary, not supported by Derive outside fl_layer_apply: a blend mode says how a layer combines with the image; write it beside the flag (l_<layer>/e_\(name),fl_layer_apply)")
            return nil
        }
        var args = Array(parts.dropFirst())
        // e_contrast:level_<n>[;type_<linear|sigmoidal>], the form Cloudinary's newer SDKs write.
        // Derive's contrast is linear (about the middle grey): level_<n> alone and with
        // type_linear are e_contrast:<n>; a sigmoidal curve it does not draw.
        if name == "contrast", let first = args.first, first.hasPrefix("level_"), args.count == 1 {
            let fields = first.split(separator: ";").map(String.init)
            let level = String(fields[0].dropFirst("level_".count))
            let type = fields.count > 1 && fields[1].hasPrefix("type_") ? String(fields[1].dropFirst("type_".count)) : nil
            guard fields.count <= 2, fields.count == 1 || type != nil, Int(level) != nil else {
                fail(c, CloudinaryVocabulary.malformed("e_" + text, "e_contrast takes level_<whole number>, optionally ;type_linear or ;type_sigmoidal", hint: ""))
                return nil
            }
            switch type {
            case nil, "linear"?: args = [level]
            case "sigmoidal"?:
                fail(c, "e_\(text): known to Cloudinary, not supported by Derive: a sigmoidal contrast curve; Derive's e_contrast is linear (type_linear)")
                return nil
            default:
                fail(c, CloudinaryVocabulary.unknown("e_" + text, what: "contrast type \(Quoted(type!))", hint: "; types: linear, sigmoidal"))
                return nil
            }
        }
        if let d = StepCatalogue.effect(named: name), d.form == .declared {
            return declaredEffect(d, arguments: args, color: color, in: c, written: text)
        }
        guard let kind = Effect.Kind(rawValue: name), kind != .declared else {
            refuseUnknownEffect(text, name: name, in: c)
            return nil
        }
        if kind == .replaceColor { return replaceColor(text, args: args, color: color, in: c) }
        if kind == .theme { return theme(text, args: args, color: color, in: c) }
        // e_tint[:equalize]:<amount>:<colour>[:<position>]:<colour>…: Cloudinary's gradient tint
        // of up to ten colours (its SDKs: "equalize:amount:color1:color1_position:color2:…").
        if kind == .tint, args.first == "equalize" || (args.count > 2 && Color.parse(args.dropFirst().joined(separator: ":")) == nil) {
            return tintGradient(text, args: args, color: color, in: c)
        }
        // e_assist_colorblind[:<strength>|xray]
        if kind == .assistColorblind, args.first == "xray" {
            if args.count > 1 { fail(c, "e_assist_colorblind:xray takes no strength") }
            ignoreUnusedColor(color, in: c)
            return .assistColorblind(.value(EffectRules.defaultAmount(of: .assistColorblind) ?? 10), xray: true)
        }
        // e_cartoonify:bw, as Cloudinary's Dart SDK writes black and white with no line strength:
        // the default line strength, black and white.
        if kind == .cartoonify, args == ["bw"] {
            ignoreUnusedColor(color, in: c)
            let strength = EffectRules.defaultAmount(of: .cartoonify) ?? 50
            note(c, "e_\(text): bw with no line strength before it is black and white at the default line strength (e_cartoonify:\(strength):bw)")
            return .cartoonify(.value(strength), colors: .blackwhite)
        }
        if kind == .distort {
            ignoreUnusedColor(color, in: c, appliesTo: "e_colorize, e_make_transparent, e_shadow, e_outline and text layers")
            return distort(args, in: c)
        }
        if kind == .gradientFade { return gradientFade(text, args: args, color: color, in: c) }
        if kind == .recolor {
            ignoreUnusedColor(color, in: c)
            return recolor(args, in: c)
        }
        if kind == .vectorize { return vectorize(args, color: color, in: c, written: text) }
        return effect(kind, args: args, color: color, in: c, written: text)
    }

    /// An effect name Derive does not read: said to be Cloudinary's or not, with a hint.
    mutating func refuseUnknownEffect(_ text: String, name: String, in c: Component) {
        let supported = "; supported: " + CloudinaryParser.effectNames.joined(separator: ", ")
        if let feature = CloudinaryVocabulary.unsupported(key: "e", value: text) {
            refuse(c, "e_" + text, feature)
        } else if CloudinaryVocabulary.cloudinaryEffects.contains(name) {
            fail(c, "e_\(text): known to Cloudinary, not supported by Derive: \(CloudinaryVocabulary.plannedEffects)\(supported)")
        } else {
            fail(c, CloudinaryVocabulary.unknown("e_" + text, what: "effect \(Quoted(name))",
                                             hint: Suggest.hint(for: name, among: CloudinaryParser.effectNames, else: supported)))
        }
    }

    /// `co_` beside an effect that takes no colour: Cloudinary ignores it, and the notes say so.
    mutating func ignoreUnusedColor(_ color: String?, in c: Component,
                                    appliesTo: String = "e_colorize, e_make_transparent and text layers") {
        guard color != nil else { return }
        note(c, "co_\(c.params["co"] ?? "") is ignored, as Cloudinary ignores a colour nothing uses: co_ applies to \(appliesTo)")
    }

    /// The amount of `e_<name>:<amount>`: a whole number or an expression.
    mutating func effectAmount(_ first: String, name: String, in c: Component, written text: String) -> WholeNumber? {
        if let n = Int(first) { return .value(n) }
        if Self.looksNumeric(first) {
            fail(c, "e_\(name) takes a whole-number amount, got \(Quoted(first))")
            return nil
        }
        return wholeNumberExpression(first, param: "e", written: "e_" + text, label: "e_\(name):", accepts: "a whole-number amount", in: c)
    }

    /// An effect with an amount (and, for some, a colour or a second value), once its name is
    /// known and the effects with forms of their own are read.
    mutating func effect(_ kind: Effect.Kind, args: [String], color: String?, in c: Component, written text: String) -> Effect? {
        let name = kind.rawValue
        var amount: WholeNumber?
        if let first = args.first {
            guard let n = effectAmount(first, name: name, in: c, written: text) else { return nil }
            amount = n
        }
        var effectColor: Color?
        switch kind {
        case .tint:
            if args.count > 1 {
                effectColor = self.color(args.dropFirst().joined(separator: ":"), param: "e", in: c)
                if effectColor == nil { return nil }
            }
            ignoreUnusedColor(color, in: c, appliesTo: "e_colorize; give the tint colour as e_tint:<amount>:<color>")
        case .makeTransparent, .shadow:
            if args.count > 1 { fail(c, "e_\(name) takes one amount; give the colour with co_") }
            if let color {
                effectColor = self.color(color, param: "co", in: c)
                if effectColor == nil { return nil }
            }
        case .vectorize:
            // The number of colours; vectorize(...) reads the tracing settings after it.
            ignoreUnusedColor(color, in: c)
        case .cartoonify:
            // e_cartoonify[:<line strength>][:<colour reduction>|bw]
            if args.count > 2 { fail(c, "e_cartoonify takes a line strength and a colour reduction (or bw)") }
            ignoreUnusedColor(color, in: c)
            var colors = CartoonColors.auto
            if args.count == 2 {
                if args[1] == "bw" {
                    colors = .blackwhite
                } else if let r = Int(args[1]) {
                    colors = .reduction(r)
                } else {
                    fail(c, "e_cartoonify takes a whole-number colour reduction (0 to 100) or bw, got \(Quoted(args[1]))")
                    return nil
                }
            }
            return .cartoonify(amount ?? .value(EffectRules.defaultAmount(of: .cartoonify) ?? 50), colors: colors)
        default:
            if args.count > 1 { fail(c, "e_\(name) takes one amount") }
            ignoreUnusedColor(color, in: c)
        }
        return EffectRules.make(kind, amount: amount, color: effectColor)
    }
}

extension ParseRun {
    static func isPadFill(_ b: String) -> Bool {
        b == "blurred" || b.hasPrefix("blurred:") || b == "auto" || b.hasPrefix("auto:")
    }

    /// `b_blurred[:<intensity>][:<brightness>]` and `b_auto[:<mode>]`; nil for a colour (or a
    /// malformed fill, refused here).
    mutating func padFill(_ b: String, in c: Component) -> PadFill? {
        guard Self.isPadFill(b) else { return nil }
        let parts = b.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        if parts[0] == "auto" { return autoPadFill(b, parts: Array(parts.dropFirst()), in: c) }
        guard parts.count <= 3 else {
            fail(c, "b_blurred takes an intensity and a brightness: b_blurred:<1-2000>:<-300-100>")
            return nil
        }
        var values = [PadFill.blurredDefaults.intensity, PadFill.blurredDefaults.brightness]
        for (i, text) in parts.dropFirst().enumerated() {
            guard let n = Int(text) else {
                fail(c, "b_blurred takes whole numbers (b_blurred:<intensity>:<brightness>), got \(Quoted(text))")
                return nil
            }
            let (range, name) = i == 0 ? (PadFill.intensityRange, "intensity") : (PadFill.brightnessRange, "brightness")
            if let problem = StepRules.check(n, in: range, field: "b_blurred \(name)").first {
                fail(c, CloudinaryVocabulary.outOfRange("b_" + b, "\(problem.field) \(problem.reason)", bound: problem.bound ?? .cloudinary))
                return nil
            }
            values[i] = n
        }
        return .blurred(intensity: values[0], brightness: values[1])
    }

    /// `e_recolor:<9 or 16 numbers>`: a 3x3 or 4x4 colour matrix, row by row.
    mutating func recolor(_ args: [String], in c: Component) -> Effect? {
        guard !args.isEmpty else {
            fail(c, "e_recolor needs a colour matrix: 9 numbers (3x3, RGB) or 16 (4x4, RGBA), row by row, such as e_recolor:0.3:0.6:0.1:0.3:0.6:0.1:0.3:0.6:0.1")
            return nil
        }
        var values: [Double] = []
        for a in args {
            guard let v = Double(a), v.isFinite, a.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-" || $0 == "+") }) else {
                fail(c, "e_recolor takes numbers, got \(Quoted(a))")
                return nil
            }
            values.append(v)
        }
        return .recolor(values)
    }

    /// `e_tint[:equalize]:<amount>:<colour>[:<n>p]:<colour>[:<n>p]…` (TintGradient): the amount
    /// may be left out after `equalize`; a colour is a name, `rgb:<hex>` or bare hex.
    mutating func tintGradient(_ text: String, args: [String], color: String?, in c: Component) -> Effect? {
        var rest = args[...]
        let equalize = rest.first == "equalize"
        if equalize { rest = rest.dropFirst() }
        var amount = EffectRules.defaultAmount(of: .tint).map(WholeNumber.value) ?? .value(60)
        if let first = rest.first, Int(first) != nil || Self.looksNumeric(first) || (Color.parse(first) == nil && first != "rgb") {
            if let n = Int(first) {
                amount = .value(n)
            } else {
                guard let n = wholeNumberExpression(first, param: "e", written: "e_" + text, label: "e_tint:", accepts: "a whole-number amount", in: c) else { return nil }
                amount = n
            }
            rest = rest.dropFirst()
        }
        var colors: [Color] = []
        var positions: [Int?] = []
        while var word = rest.popFirst() {
            if word == "rgb", let hex = rest.popFirst() { word += ":" + hex }
            if Color.parse(word) == nil, [3, 6].contains(word.count), word.allSatisfy({ $0.isASCII && $0.isHexDigit }) { word = "rgb:" + word }
            guard let parsed = self.color(word, param: "e", written: "e_" + text, in: c) else { return nil }
            colors.append(parsed)
            if let next = rest.first, next.hasSuffix("p"), let p = Int(next.dropLast()) {
                positions.append(p)
                rest = rest.dropFirst()
            } else {
                positions.append(nil)
            }
        }
        if colors.isEmpty {
            colors = [EffectRules.tintDefaultColor]
            positions = [nil]
        }
        guard colors.count <= TintGradient.maxColors else {
            fail(c, CloudinaryVocabulary.malformed("e_" + text, "e_tint takes up to \(TintGradient.maxColors) colours, got \(colors.count)", hint: ""))
            return nil
        }
        let gradient = TintGradient(colors: colors, positions: positions, equalize: equalize)
        switch gradient.positionProblem {
        case .backwards(let reason)?:
            fail(c, "e_\(text): known to Cloudinary, not supported by Derive: \(reason); Cloudinary does not document what positions out of order mean, so Derive reads them only in order (red:20p:blue:60p)")
            return nil
        case .outOfRange(let reason)?:
            fail(c, CloudinaryVocabulary.malformed("e_" + text, reason, hint: ""))
            return nil
        case nil:
            break
        }
        ignoreUnusedColor(color, in: c, appliesTo: "e_colorize; give the tint's colours as e_tint:<amount>:<color>:<color>")
        return .tintGradient(amount: amount, gradient: gradient)
    }

    /// `e_replace_color:<to>[:<tolerance>][:<from>]`; a colour may be written `rgb:<hex>`.
    mutating func replaceColor(_ text: String, args: [String], color: String?, in c: Component) -> Effect? {
        var rest = args[...]
        // Cloudinary's examples write bare hex here (e_replace_color:aa7812).
        func takeColor() -> String? {
            guard var word = rest.popFirst() else { return nil }
            if word == "rgb", let hex = rest.popFirst() { word += ":" + hex }
            if Color.parse(word) == nil, [3, 6].contains(word.count), word.allSatisfy({ $0.isASCII && $0.isHexDigit }) { word = "rgb:" + word }
            return word
        }
        guard let toText = takeColor(), !toText.isEmpty else {
            fail(c, "e_replace_color needs a target colour: e_replace_color:<to>[:<tolerance>][:<from>]")
            return nil
        }
        guard let to = self.color(toText, param: "e", written: "e_" + text, in: c) else { return nil }
        var tolerance = WholeNumber.value(EffectRules.defaultAmount(of: .replaceColor) ?? 50)
        if let t = rest.popFirst() {
            if let n = Int(t) {
                tolerance = .value(n)
            } else if ExpressionParser.looksLikeExpression(t) {
                guard let n = wholeNumberExpression(t, param: "e", written: "e_" + text, label: "e_replace_color:",
                                                    accepts: "a whole-number tolerance", in: c) else { return nil }
                tolerance = n
            } else {
                fail(c, "e_replace_color takes a whole-number tolerance after the target colour, got \(Quoted(t))")
                return nil
            }
        }
        var from: Color?
        if let f = takeColor() {
            guard let parsed = self.color(f, param: "e", written: "e_" + text, in: c) else { return nil }
            from = parsed
        }
        if !rest.isEmpty { fail(c, "e_replace_color takes a target colour, a tolerance and a source colour, got \(Quoted(text))") }
        ignoreUnusedColor(color, in: c)
        return .replaceColor(tolerance, to: to, from: from)
    }
}

extension ParseRun {
    /// `e_theme:color_<colour>[:photosensitivity_<0..200>]` (either order), as Cloudinary's
    /// SDKs write it: the colour a name or bare hex (`color_fff`), opaque.
    mutating func theme(_ text: String, args: [String], color: String?, in c: Component) -> Effect? {
        let written = "e_" + text
        var themeColor: Color?
        var sensitivity = WholeNumber.value(EffectRules.defaultAmount(of: .theme) ?? 100)
        // color_rgb:<hex>, Derive's own spelling of a colour, is one argument.
        var merged: [String] = []
        for arg in args {
            if merged.last == "color_rgb", arg.allSatisfy({ $0.isASCII && $0.isHexDigit }) { merged[merged.count - 1] += ":" + arg } else { merged.append(arg) }
        }
        for arg in merged {
            if arg.hasPrefix("color_") {
                var value = String(arg.dropFirst("color_".count))
                if Color.parse(value) == nil, [3, 6].contains(value.count), value.allSatisfy({ $0.isASCII && $0.isHexDigit }) { value = "rgb:" + value }
                guard let parsed = self.color(value, param: "e", written: written, in: c) else { return nil }
                guard parsed.isOpaque else {
                    fail(c, CloudinaryVocabulary.malformed(written, "e_theme's colour is the new background, an opaque colour", hint: ""))
                    return nil
                }
                themeColor = parsed
            } else if arg.hasPrefix("photosensitivity_") {
                let value = String(arg.dropFirst("photosensitivity_".count))
                if let n = Int(value) {
                    sensitivity = .value(n)
                } else if ExpressionParser.looksLikeExpression(value) {
                    guard let n = wholeNumberExpression(value, param: "e", written: written, label: "e_theme:photosensitivity_",
                                                        accepts: "a whole number from 0 to 200", in: c) else { return nil }
                    sensitivity = n
                } else {
                    fail(c, CloudinaryVocabulary.malformed(written, "photosensitivity takes a whole number from 0 to 200, got \(Quoted(value))", hint: ""))
                    return nil
                }
            } else {
                fail(c, CloudinaryVocabulary.malformed(written, "e_theme takes color_<colour> and photosensitivity_<0-200>, got \(Quoted(arg))", hint: ""))
                return nil
            }
        }
        guard let themeColor else {
            fail(c, CloudinaryVocabulary.malformed(written, "e_theme needs the new background colour: e_theme:color_<colour>[:photosensitivity_<0-200>]", hint: ""))
            return nil
        }
        ignoreUnusedColor(color, in: c)
        return .theme(sensitivity, color: themeColor)
    }
}

/// The Cloudinary parameter behind each model field, for messages about strings.
enum CloudinaryNames {
    static func parameter(for step: Step, field: String) -> String {
        switch step {
        case .resize:
            switch field {
            case "width": return "w"
            case "height": return "h"
            case "aspectRatio": return "ar"
            case "gravity": return "g"
            case "gravity.x", "x": return "x"
            case "gravity.y", "y": return "y"
            case "dpr": return "dpr"
            case "zoom": return "z"
            case "relative": return "fl_relative"
            case "background", "padFill": return "b"
            case "autoTurn": return "a_auto"
            default: return ""
            }
        case .rotate: return "a"
        case .round: return "r"
        case .effect, .trim: return "e"
        case .border: return "bo"
        case .opacity: return "o"
        case .background: return "b"
        case .overlay:
            switch field {
            case "gravity": return "g"
            case "x": return "x"
            case "y": return "y"
            default: return "l"
            }
        case .preset: return "t"
        case .lut: return "l_lut"
        case .assign(let a): return "$" + a.name
        case .conditional: return "if"
        case .template: return ""
        case .validate: return ""
        case .quality: return "q"
        }
    }

    /// The Cloudinary name of each output setting, for messages about settings from strings.
    static func setting(_ field: String) -> String {
        switch field {
        case "format": "f"
        case "quality", "chromaSubsampling": "q"
        case "frame", "pages": "pg"
        case "lossless": "fl_lossless"
        case "progressive": "fl_progressive"
        case "stripProfile": "fl_strip_profile"
        case "density": "dn"
        case "pngType": "fl_png8"
        case "lossy": "fl_lossy"
        case "loop": "e_loop"
        case "delay": "dl"
        case "tiffLZW": "fl_tiff8_lzw"
        case "ignoreMaskChannels": "fl_ignore_mask_channels"
        case "colorSpace": "cs"
        case "keepAttribution": "fl_keep_attribution"
        case "getInfo": "fl_getinfo"
        case "defaultImage": "d"
        case "clip": "fl_clip"
        case "strip": "fl_keep_iptc"
        case "autoOrient": "a_ignore"
        default: field
        }
    }
}

/// base64url (RFC 4648 §5), with or without padding, as used by `l_fetch:`.
enum Base64URL {
    static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> String? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_=".contains($0)) }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 = base64.replacingOccurrences(of: "=", with: "")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
