/// Layers in strings: `l_<source>` … `fl_layer_apply` (the long form, with the layer's own
/// chain between them) and `l_<source>,g_…` in one component, text wrapping beside `l_text`, and
/// the layer's source and placement.
extension ParseRun {
    mutating func longLayer(_ components: [Component], opener: Component, inner: Range<Int>, apply: Component, depth: Int) -> Overlay? {
        var source = layerSource(opener)
        var first = opener
        first.params["l"] = nil
        first.params["u"] = nil
        first.params["co"] = nil
        takeTextParameters(&source, from: &first)
        var placement = apply
        placement.flags.removeAll { $0 == "layer_apply" }
        // fl_text_no_trim anywhere in the layer (Cloudinary's SDKs write it beside l_text or in
        // a component of its own inside the layer) is the text's.
        var components = components
        var untrimmed = Self.takeFlag("text_no_trim", from: &placement)
        var i = inner.lowerBound
        while i < inner.upperBound {
            // A layer inside this one keeps its own.
            if components[i].opensLayer {
                i = closing[i].map { $0 + 1 } ?? i + 1
                continue
            }
            if Self.takeFlag("text_no_trim", from: &components[i]) { untrimmed = true }
            i += 1
        }
        if untrimmed { untrim(&source, in: apply) }
        let inOpener = Self.takeFlag("region_relative", from: &first)
        let regionRelative = Self.takeFlag("region_relative", from: &placement) || inOpener
        // fl_relative beside fl_layer_apply makes the layer's fractional sizes relative too.
        let relativeInApply = Self.takeFlag("relative", from: &placement)
        let tiled = Self.takeFlag("tiled", from: &placement) || Self.takeFlag("tiled", from: &first)
        if Self.takeFlag("no_overflow", from: &placement) || Self.takeFlag("no_overflow", from: &first) { noteNoOverflow(apply) }
        // Placement belongs to fl_layer_apply, but Cloudinary's own examples also put it beside
        // l_ (`l_mask,g_faces,w_1.1/fl_layer_apply`): there it places the layer too.
        let placedInOpener = ["g", "x", "y"].contains { placement.params[$0] == nil && first.params[$0] != nil }
        let (gravity, x, y) = placedInOpener ? layerPlacement(&first) : layerPlacement(&placement)
        var chain = first.params.isEmpty && first.flags.isEmpty ? [] : steps(from: first, inLayer: true)
        chain += sequence(components, inner, inLayer: true, depth: depth + 1)
        // e_ beside fl_layer_apply: a blend mode says how the layer combines with the image;
        // any other effect is the layer's last step, as the component that holds the flag
        // closes the layer ("similar to a closing bracket", Cloudinary's layer documentation;
        // `l_bike/e_sepia,fl_layer_apply` turns the bike sepia, not the whole image).
        var blend: BlendMode?
        var level: Int?
        if Self.takeFlag("cutter", from: &placement) || Self.takeFlag("cutter", from: &first) {
            blend = cutter(underlay: opener.has("u"), in: apply)
        }
        if Self.takeFlag("replace_image", from: &placement) || Self.takeFlag("replace_image", from: &first) {
            replaceImage(&blend, underlay: opener.has("u"), in: apply)
        }
        if let e = placement.params.removeValue(forKey: "e") {
            if let (mode, value) = blendMode(e, underlay: opener.has("u"), in: apply) {
                if let taken = blend { fail(apply, "e_\(e) beside \(taken.cloudinaryText(level: nil)): a layer combines with the image one way") }
                blend = mode
                level = value
            } else {
                var closing = apply
                closing.params = ["e": e]
                if let co = placement.params.removeValue(forKey: "co") { closing.params["co"] = co }
                closing.flags = []
                closing.assignments = []
                chain += steps(from: closing, inLayer: true)
            }
        }
        if relativeInApply { chain = Self.relative(chain) }
        if let key = placement.params.keys.sorted().first {
            // Cloudinary reads blend modes (e_multiply, e_screen, e_overlay, e_mask...) here;
            // its documentation does not say what other parameters beside the flag do.
            let written = "\(key)_\(placement.params[key]!)"
            fail(apply, CloudinaryVocabulary.notSupported("\(written) beside fl_layer_apply", CloudinaryVocabulary.feature(.besideLayerApply)))
        } else if let flag = placement.flags.first {
            fail(apply, CloudinaryVocabulary.notSupported("fl_\(flag) beside fl_layer_apply", CloudinaryVocabulary.feature(.besideLayerApply)))
        }
        return source.map {
            var overlay = Overlay(source: $0, chain: chain, gravity: gravity, x: x, y: y, regionRelative: regionRelative, underlay: opener.has("u"), blend: blend)
            overlay.blendLevel = level
            overlay.tiled = tiled
            return overlay
        }
    }

    /// fl_no_overflow keeps a layer from growing the canvas, which a Derive layer never does
    /// (what falls outside the image is cut off): nothing to do, and the notes say so.
    mutating func noteNoOverflow(_ c: Component) {
        note(c, "fl_no_overflow: a layer never extends the canvas in Derive (what falls outside the image is cut off); the flag changes nothing")
    }

    /// `fl_cutter` beside `fl_layer_apply` (or `fl_cutter.layer_apply`, as Cloudinary's SDKs write it).
    mutating func cutter(underlay: Bool, in c: Component) -> BlendMode {
        if underlay { fail(c, "fl_cutter beside fl_layer_apply of an underlay (u_): known to Cloudinary, not supported by Derive: Derive blends overlays (l_) only; an underlay is drawn beneath the image") }
        return .cutter
    }

    /// `fl_replace_image` beside `l_` or `fl_layer_apply`: the layer, through its own chain,
    /// replaces the image (a flag of Cloudinary's, which its SDKs write as
    /// `l_sample,fl_replace_image,e_cartoonify`).
    mutating func replaceImage(_ blend: inout BlendMode?, underlay: Bool, in c: Component) {
        if let taken = blend {
            fail(c, "fl_replace_image beside \(taken.cloudinaryText(level: nil)): a layer combines with the image one way")
        } else if underlay {
            fail(c, "fl_replace_image beside an underlay (u_): known to Cloudinary, not supported by Derive: the layer that replaces the image is an overlay (l_)")
        } else {
            blend = .replaceImage
        }
    }

    /// A blend mode written as `e_<mode>` beside `fl_layer_apply` (`cutter` for `fl_cutter`),
    /// with `e_anti_removal`'s level (nil when not written or Cloudinary's default); nil for any
    /// other effect.
    mutating func blendMode(_ e: String, underlay: Bool, in c: Component) -> (mode: BlendMode, level: Int?)? {
        let parts = e.split(separator: ":", maxSplits: 1).map(String.init)
        guard let mode = BlendMode.effect(named: parts[0]) else { return nil }
        let written = mode.cloudinaryText(level: nil)
        if underlay { fail(c, "\(written) beside fl_layer_apply of an underlay (u_): known to Cloudinary, not supported by Derive: Derive blends overlays (l_) only; an underlay is drawn beneath the image") }
        guard parts.count == 2 else { return (mode, nil) }
        guard mode == .antiRemoval else {
            // Not a blend mode with a value: read as an effect, and refused as one.
            return nil
        }
        guard let level = Int(parts[1]), (1...100).contains(level) else {
            fail(c, CloudinaryVocabulary.malformed("e_" + e, "e_anti_removal's level is a whole number from 1 to 100", hint: ""))
            return (mode, nil)
        }
        return (mode, level == BlendMode.defaultAntiRemovalLevel ? nil : level)
    }

    /// `l_logo,g_north,x_10`: the layer, its chain and its placement in one component. With
    /// `fl_layer_apply` there too (`l_badge,fl_layer_apply,g_north_east`, as Cloudinary accepts)
    /// it means the same as the two components `l_badge/fl_layer_apply,g_north_east`: a blend
    /// mode beside the flag blends, and every other parameter is the layer's, as without it.
    mutating func shortLayer(_ c: Component, depth: Int) -> Overlay? {
        var source = layerSource(c)
        var rest = c
        rest.params["l"] = nil
        rest.params["u"] = nil
        rest.params["co"] = nil
        takeTextParameters(&source, from: &rest)
        let regionRelative = Self.takeFlag("region_relative", from: &rest)
        let tiled = Self.takeFlag("tiled", from: &rest)
        if Self.takeFlag("no_overflow", from: &rest) { noteNoOverflow(c) }
        var blend: BlendMode?
        var level: Int?
        // In the one-component form, fl_cutter and a blend mode beside l_ combine the layer with
        // the image as beside fl_layer_apply (Cloudinary's SDKs write `l_sample,fl_cutter` and
        // `e_multiply,l_icon`); the flag itself changes nothing here.
        _ = Self.takeFlag("layer_apply", from: &rest)
        if Self.takeFlag("cutter", from: &rest) { blend = cutter(underlay: c.has("u"), in: c) }
        if Self.takeFlag("replace_image", from: &rest) { replaceImage(&blend, underlay: c.has("u"), in: c) }
        if let e = rest.params["e"], let (mode, value) = blendMode(e, underlay: c.has("u"), in: c) {
            if let taken = blend { fail(c, "e_\(e) beside \(taken.cloudinaryText(level: nil)): a layer combines with the image one way") }
            rest.params["e"] = nil
            blend = mode
            level = value
        }
        let (gravity, x, y) = layerPlacement(&rest)
        let chain = rest.params.isEmpty && rest.flags.isEmpty ? [] : steps(from: rest, inLayer: true)
        return source.map {
            var overlay = Overlay(source: $0, chain: chain, gravity: gravity, x: x, y: y, regionRelative: regionRelative, underlay: c.has("u"), blend: blend)
            overlay.blendLevel = level
            overlay.tiled = tiled
            return overlay
        }
    }

    /// What beside `l_text` belongs to the text: its wrapping width, the outline of a `_stroke`
    /// (`bo_`) and `fl_text_no_trim`.
    mutating func takeTextParameters(_ source: inout Overlay.Source?, from c: inout Component) {
        wrapText(&source, taking: &c)
        if case .text(let t)? = source, t.stroke != nil { c.params["bo"] = nil }
        if Self.takeFlag("text_no_trim", from: &c) { untrim(&source, in: c) }
    }

    /// `fl_text_no_trim`: the text keeps a margin around its ink; an image layer has none to keep.
    mutating func untrim(_ source: inout Overlay.Source?, in c: Component) {
        switch source {
        case .text(var t)?:
            t.noTrim = true
            source = .text(t)
        case .image?, .snapshot?:
            fail(c, "fl_text_no_trim applies to a text layer (l_text:…), not an image layer")
        case nil:
            break
        }
    }

    /// `c_fit,w_<pixels>` beside `l_text` is Cloudinary's text wrapping: the text is set in
    /// lines no wider than w, not rendered on one line and then shrunk. The two parameters leave
    /// the layer's chain and become the text's width. As in Cloudinary, a fractional width
    /// does not wrap: it stays a resize of the rendered text.
    mutating func wrapText(_ source: inout Overlay.Source?, taking c: inout Component) {
        guard case .text(var text)? = source, c.params["c"] == "fit", let w = c.params["w"], let width = Int(w) else { return }
        if let h = c.params["h"] {
            fail(c, "h_\(h) with c_fit beside l_text: known to Cloudinary, not supported by Derive: a height for the wrapped text; give c_fit,w_<pixels> alone to wrap")
            c.params["h"] = nil
        }
        c.params["c"] = nil
        c.params["w"] = nil
        text.width = width
        source = .text(text)
    }

    /// The chain with its fractional sizes made relative to the image the overlay is placed on.
    static func relative(_ chain: [Step]) -> [Step] {
        chain.map { step in
            guard case .resize(var r) = step, r.width?.isFraction == true || r.height?.isFraction == true else { return step }
            r.relative = true
            return .resize(r)
        }
    }

    /// Removes a flag from a component; whether it was there.
    static func takeFlag(_ flag: String, from c: inout Component) -> Bool {
        let had = c.flags.contains(flag)
        c.flags.removeAll { $0 == flag }
        return had
    }

    /// Takes g_, x_ and y_ out of a component as an overlay's placement.
    mutating func layerPlacement(_ c: inout Component) -> (Gravity?, Length?, Length?) {
        var gravity: Gravity?
        if let g = c.params.removeValue(forKey: "g") {
            if let parsed = Gravity.parseToken(g) {
                gravity = parsed
            } else {
                fail(c, GravityMessages.unsupported(g, written: "g_" + g))
            }
        }
        let x = c.params.removeValue(forKey: "x").flatMap { offset($0, param: "x", in: c) }
        let y = c.params.removeValue(forKey: "y").flatMap { offset($0, param: "y", in: c) }
        return (gravity, x, y)
    }

    mutating func layerSource(_ c: Component) -> Overlay.Source? {
        // An underlay (`u_`) names its source as an overlay does.
        let key = c.has("l") ? "l" : "u"
        guard let value = c.params[key] else { return nil }
        if value.hasPrefix("text:") {
            return text(String(value.dropFirst(5)), color: c.params["co"], border: c.params["bo"], key: key, in: c).map(Overlay.Source.text)
        }
        if c.params["co"] != nil {
            fail(c, param: "co", "applies to text layers and e_colorize, not image layers")
        }
        if value.hasPrefix("fetch:") {
            guard let uri = Base64URL.decode(String(value.dropFirst(6))), !uri.isEmpty else {
                fail(c, "\(key)_fetch: needs the source URL in base64url")
                return nil
            }
            return .image(uri)
        }
        // `$name` in a layer's name is a text variable, written in when planning.
        let allowed = value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.:$".contains($0)) }
            && value.split(separator: "$", omittingEmptySubsequences: false).dropFirst().allSatisfy { $0.first?.isLetter == true }
        guard allowed, !value.split(separator: ":", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            fail(c, "\(key)_ expects a name such as \(key)_logo or \(key)_folder:logo, \(key)_fetch:<base64url URL> or \(key)_text:<font>_<size>:<text>, got \(Quoted(value))")
            return nil
        }
        return .image(value.replacingOccurrences(of: ":", with: "/"))
    }

    /// `$style_!Arial_12!/l_text:$style:Hi/…/fl_layer_apply`: a text layer whose style comes
    /// from a variable, in the long form. The whole layer, from `l_text` to `fl_layer_apply`,
    /// is kept as written and read when planning with the variable's text written in, as a
    /// one-component template is (Cloudinary's user-defined variables documentation gives text
    /// styles among the values a variable holds). Nil when the layer is not one of text.
    mutating func layerTemplate(_ components: [Component], opener: Component, through close: Int) -> [Step]? {
        guard let template = opener.template else { return nil }
        let text = ([template] + components[(opener.index + 1)...close].map(\.text)).joined(separator: "/")
        guard Self.isLayerTemplate(text) else { return nil }
        return opener.assignments.map(Step.assign) + [.template(text)]
    }

    /// Whether a template of several components is a text layer with its style from a
    /// variable, opened in its first component and applied in its last.
    static func isLayerTemplate(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 1, let first = parts.first, let last = parts.last,
              first.split(separator: ",").contains(where: { $0.hasPrefix("l_text:") && namesFromVariable(String($0)) }),
              last.split(separator: ",").contains(where: { $0.hasPrefix("fl_") && $0.dropFirst(3).split(separator: ".").contains("layer_apply") }) else { return false }
        return true
    }
}
