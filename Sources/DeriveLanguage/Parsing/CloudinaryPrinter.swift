/// Prints a chain (and the settings strings can carry) as a Cloudinary transformation string.
/// Each step becomes one component and defaults are left out, so printing a canonical output
/// and parsing the result gives back the same canonical output.
public enum CloudinaryPrinter {
    /// Thrown for what has no string spelling: `validate` steps, `effort`, `breakpoints`.
    public struct Unprintable: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { "cannot be written as a transformation string: \(reason)" }
    }

    public static func string(for output: CanonicalOutput) throws(Unprintable) -> String {
        var components = try components(output.chain)
        if let settings = try settingsComponent(output.encoding) { components.append(settings) }
        // In a component of its own: its pg_ chooses the path, not a page.
        if let clip = output.encoding.clip { components.append(clipComponent(clip)) }
        // Its own component too: a page (pg_3) may be in the settings'.
        if let psd = output.encoding.psd { components.append("pg_" + psd.cloudinaryText) }
        return components.joined(separator: "/")
    }

    public static func string(for chain: [Step]) throws(Unprintable) -> String {
        try components(chain).joined(separator: "/")
    }

    static func components(_ chain: [Step]) throws(Unprintable) -> [String] {
        var out: [String] = []
        for step in chain {
            out += try components(step)
        }
        return out
    }

    static func components(_ step: Step) throws(Unprintable) -> [String] {
        switch step {
        case .resize(let r): return [resize(r)]
        case .rotate(let r):
            var tokens: [String] = []
            if r.horizontalFlip { tokens.append("hflip") }
            if r.verticalFlip { tokens.append("vflip") }
            if let e = r.angleExpression {
                guard tokens.isEmpty else { throw Unprintable(reason: "a flip with an angle expression exists only in JSON; write the flip in a component of its own") }
                tokens.append(e.canonicalText)
            } else if r.angle != 0 || tokens.isEmpty {
                // a_ takes whole degrees: Cloudinary reads a_12.5 as 12 then 5 degrees.
                guard r.angle == r.angle.rounded() else { throw Unprintable(reason: "a fractional angle (\(Decimal6.string(r.angle))) exists only in JSON; a_ takes whole degrees") }
                tokens.append(Decimal6.string(r.angle))
            }
            var params = ["a_" + tokens.joined(separator: ".")]
            if let b = r.background, b != .transparent { params.append("b_" + color(b)) }
            return [params.joined(separator: ",")]
        case .round(let r):
            var params: [String]
            switch r.radius {
            case .max: params = ["r_max"]
            case .corners(let radii):
                params = [Set(radii).count == 1 ? "r_\(radii[0].cloudinaryText)" : "r_" + radii.map(\.cloudinaryText).joined(separator: ":")]
            }
            if let b = r.background, b != .transparent { params.append("b_" + color(b)) }
            return [params.joined(separator: ",")]
        case .effect(let e): return [effect(e)]
        case .trim(let t):
            var text = "e_trim"
            if t.tolerance != EffectRules.trimDefaultTolerance || t.color != nil { text += ":\(t.tolerance)" }
            if let c = t.color { text += ":" + color(c) }
            return [text]
        case .background(let c): return ["b_" + color(c)]
        case .border(let b): return ["bo_\(b.widthExpression?.canonicalText ?? String(b.width))px_solid_" + color(b.color)]
        case .opacity(let o): return ["o_\(o.cloudinaryText)"]
        case .overlay(let o): return try overlay(o)
        case .preset(let name):
            // `t_a.b` is two named transformations in a string.
            guard !name.contains(".") else { throw Unprintable(reason: "a preset name with a '.' (\(Quoted(name))) exists only in JSON; t_a.b applies a, then b") }
            return ["t_" + name]
        case .template(let text): return [text]
        case .quality(let q): return ["q_" + (q == .auto(.good) ? "auto" : q.text)]
        case .assign(let a):
            if a.isDefault { throw Unprintable(reason: "a named transformation's default for $\(a.name) exists only in the expanded chain") }
            return ["$\(a.name)_\(a.value.cloudinaryText)"]
        case .conditional(let c):
            return ["if_" + c.condition.canonicalText] + (try components(c.then))
                + (c.otherwise.isEmpty ? [] : ["if_else"] + (try components(c.otherwise))) + ["if_end"]
        case .lut(let name): return ["l_lut:" + name.replacingOccurrences(of: "/", with: ":")]
        case .validate:
            throw Unprintable(reason: "validate steps exist only in JSON")
        }
    }

    static func resize(_ r: Resize) -> String {
        var p = ["c_" + r.mode.rawValue]
        if let w = r.width { p.append("w_" + w.cloudinaryText) }
        if let h = r.height { p.append("h_" + h.cloudinaryText) }
        if let ar = r.aspectRatio { p.append("ar_" + Decimal6.string(ar)) }
        if let ar = r.aspectRatioExpression { p.append("ar_" + ar.canonicalText) }
        switch r.gravity {
        case .focus(let x, let y)?:
            p += ["g_xy_center", "x_" + x.cloudinaryText, "y_" + y.cloudinaryText]
        case let gravity?:
            // Offsets without a gravity would read as top-left offsets, so a gravity is written
            // whenever offsets are, even the default one.
            let offsets = [("x", r.x), ("y", r.y)].compactMap { name, d in d.flatMap { $0 == .pixels(0) ? nil : "\(name)_" + $0.cloudinaryText } }
            if gravity != r.mode.defaultGravity(hasOffsets: false) || !offsets.isEmpty, let token = gravity.token {
                p.append("g_" + token)
            }
            p += offsets
        case nil:
            if let x = r.x { p.append("x_" + x.cloudinaryText) }
            if let y = r.y { p.append("y_" + y.cloudinaryText) }
        }
        if let dpr = r.dpr, dpr != 1 { p.append("dpr_" + Decimal6.string(dpr)) }
        if let dpr = r.dprExpression { p.append("dpr_" + dpr.canonicalText) }
        if let b = r.background, b != .transparent { p.append("b_" + color(b)) }
        if let fill = r.padFill { p.append("b_" + fill.cloudinaryText) }
        if let zoom = r.zoom { p.append("z_" + Decimal6.string(zoom)) }
        if let zoom = r.zoomExpression { p.append("z_" + zoom.canonicalText) }
        if r.relative { p.append("fl_relative") }
        if let turn = r.autoTurn { p.append("a_auto_" + turn.rawValue) }
        return p.joined(separator: ",")
    }

    static func effect(_ e: Effect) -> String {
        let name = "e_" + e.name
        switch e {
        case .declared(let d):
            return d.declaration.cloudinaryText(d.values)
        case .tint(let amount, let c):
            return "\(name):\(amount):" + color(c)
        case .tintGradient(let amount, let gradient):
            let stops = zip(gradient.colors, gradient.positions).map { c, p in color(c) + (p.map { ":\($0)p" } ?? "") }
            return "\(name):" + (gradient.equalize ? "equalize:" : "") + "\(amount):" + stops.joined(separator: ":")
        case .blurRegion(let amount, let region?), .pixelateRegion(let amount, let region?):
            let amountText = amount == EffectRules.defaultAmount(of: e.kind).map(WholeNumber.value) ? "" : ":\(amount)"
            return name + amountText + ",x_\(region.x.cloudinaryText),y_\(region.y.cloudinaryText),w_\(region.width.cloudinaryText),h_\(region.height.cloudinaryText)"
        case .replaceColor(let tolerance, let to, let from):
            let toleranceIsDefault = tolerance == EffectRules.defaultAmount(of: .replaceColor).map(WholeNumber.value)
            if let from { return "\(name):\(color(to)):\(tolerance):\(color(from))" }
            return "\(name):\(color(to))" + (toleranceIsDefault ? "" : ":\(tolerance)")
        case .theme(let photosensitivity, let c):
            let sensitivityIsDefault = photosensitivity == EffectRules.defaultAmount(of: .theme).map(WholeNumber.value)
            // Cloudinary's SDKs write the colour as a name or bare hex (color_fff).
            let written = color(c).hasPrefix("rgb:") ? String(c.hex.dropFirst()) : color(c)
            return "\(name):color_" + written + (sensitivityIsDefault ? "" : ":photosensitivity_\(photosensitivity)")
        case .makeTransparent(let tolerance, let c):
            let amountText = tolerance == EffectRules.defaultAmount(of: .makeTransparent).map(WholeNumber.value) ? "" : ":\(tolerance)"
            return name + amountText + (c.map { ",co_" + color($0) } ?? "")
        case .assistColorblind(_, xray: true):
            return name + ":xray"
        case .vectorize(let colors, let trace) where !trace.isDefault:
            let colorsText = colors == EffectRules.defaultAmount(of: .vectorize).map(WholeNumber.value) ? "" : ":colors:\(colors)"
            return name + colorsText + trace.cloudinaryArguments
        case .cartoonify(let lines, let colors):
            let linesText = lines == EffectRules.defaultAmount(of: .cartoonify).map(WholeNumber.value) ? "" : ":\(lines)"
            switch colors {
            case .auto: return name + linesText
            case .reduction(let r): return "\(name):\(lines):\(r)"
            case .blackwhite: return "\(name):\(lines):bw"
            }
        case .distort(let d):
            return "\(name):" + d.cloudinaryArguments
        case .gradientFade(let strength, let edges, let x, let y):
            let isDefault = strength == EffectRules.defaultAmount(of: .gradientFade).map(WholeNumber.value)
            var text = name + (edges == .one ? "" : ":" + edges.rawValue) + (isDefault ? "" : ":\(strength)")
            if let x { text += ",x_" + x.cloudinaryText }
            if let y { text += ",y_" + y.cloudinaryText }
            return text
        case .shadow(let strength, let c, let x, let y):
            let amountText = strength == EffectRules.defaultAmount(of: .shadow).map(WholeNumber.value) ? "" : ":\(strength)"
            return name + amountText + ",co_" + color(c) + ",x_" + x.cloudinaryText + ",y_" + y.cloudinaryText
        case .recolor(let matrix):
            return name + ":" + matrix.map(Decimal6.string).joined(separator: ":")
        default:
            guard let amount = e.amount, amount != EffectRules.defaultAmount(of: e.kind).map(WholeNumber.value) else { return name }
            return "\(name):\(amount)"
        }
    }

    static func overlay(_ o: Overlay) throws(Unprintable) -> [String] {
        var opener: String
        switch o.source {
        case .image(let source):
            // A name is folders of plain characters: no scheme's colon, no leading slash.
            let isName = source.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { part in
                    !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.$".contains($0)) }
                }
            opener = isName ? "l_" + source.replacingOccurrences(of: "/", with: ":") : "l_fetch:" + Base64URL.encode(source)
        case .snapshot(let name):
            opener = "l_$" + name
        case .text(let t):
            var style = [percentEncode(t.font), String(t.size)]
            if t.bold { style.append("bold") }
            if t.italic { style.append("italic") }
            if t.underline { style.append("underline") }
            if t.strikethrough { style.append("strikethrough") }
            if let spacing = t.letterSpacing { style.append("letter_spacing_\(spacing)") }
            if let spacing = t.lineSpacing { style.append("line_spacing_\(spacing)") }
            if let alignment = t.alignment { style.append(alignment.rawValue) }
            if t.stroke != nil { style.append("stroke") }
            if !t.antialias { style.append("antialias_none") }
            opener = "l_text:" + style.joined(separator: "_") + ":" + t.parts.map { part in
                switch part {
                case .literal(let s): percentEncode(s)
                case .variable(let name): "$(\(name))"
                }
            }.joined()
            if t.color != .black { opener += ",co_" + color(t.color) }
            if let stroke = t.stroke { opener += ",bo_\(stroke.width)px_solid_" + color(stroke.color) }
            if let width = t.width { opener += ",c_fit,w_\(width)" }
            if t.noTrim { opener += ",fl_text_no_trim" }
        }
        if o.underlay { opener = "u_" + opener.dropFirst(2) }
        var apply = o.regionRelative ? ["fl_layer_apply", "fl_region_relative"] : ["fl_layer_apply"]
        if let g = o.gravity, g != .center, let token = g.token { apply.append("g_" + token) }
        if let x = o.x, x != .pixels(0) { apply.append("x_" + x.cloudinaryText) }
        if let y = o.y, y != .pixels(0) { apply.append("y_" + y.cloudinaryText) }
        if let blend = o.blend { apply.append(blend.cloudinaryText(level: o.blendLevel)) }
        if o.tiled { apply.append("fl_tiled") }
        return [opener] + (try components(o.chain)) + [apply.joined(separator: ",")]
    }

    static func clipComponent(_ clip: ClipSetting) -> String {
        var p = [clip.evenOdd ? "fl_clip_evenodd" : "fl_clip"]
        if let number = clip.number { p.append("pg_\(number)") }
        if let name = clip.name { p.append("pg_name:" + percentEncode(name)) }
        return p.joined(separator: ",")
    }

    static func settingsComponent(_ s: EncodingSettings) throws(Unprintable) -> String? {
        var p: [String] = []
        if s.format != .original { p.append("f_" + s.format.rawValue) }
        let defaultQuality: Quality? = s.format.isConcrete && !s.lossless ? .value(s.format.defaultQuality) : nil
        if let suffix = s.chromaSubsampling.cloudinarySuffix {
            guard case .value(let q)? = s.quality ?? defaultQuality else {
                throw Unprintable(reason: "chroma subsampling is written as q_<n>:\(suffix) and needs a numeric quality")
            }
            p.append("q_\(q):\(suffix)")
        } else if let q = s.quality, q != defaultQuality {
            p.append("q_" + (q == .auto(.good) ? "auto" : q.text))
        }
        if let density = s.density { p.append("dn_\(density)") }
        if let image = s.defaultImage { p.append("d_" + image.replacingOccurrences(of: "/", with: ":")) }
        if s.frame != nil { p.append("pg_\(s.frame!)") }
        if let pages = s.pages { p.append("pg_" + pages.text) }
        if !s.autoOrient { p.append("a_ignore") }
        var flags: [String] = []
        if s.progressive { flags.append("progressive") }
        if !s.strip { flags.append("keep_iptc") }
        if s.lossless { flags.append("lossless") }
        if s.stripProfile { flags.append("strip_profile") }
        if let type = s.pngType { flags.append(type.rawValue) }
        if s.lossy { flags.append("lossy") }
        if s.tiffLZW { flags.append("tiff8_lzw") }
        if s.ignoreMaskChannels { flags.append("ignore_mask_channels") }
        if let cmyk = s.cmyk { p.append("cs_" + cmyk.rawValue) }
        if s.keepAttribution { flags.append("keep_attribution") }
        if s.getInfo { flags.append("getinfo") }
        if !flags.isEmpty { p.append("fl_" + flags.joined(separator: ".")) }
        if let loop = s.loop { p.append(loop == 0 ? "e_loop" : "e_loop:\(loop - 1)") }
        if let delay = s.delay { p.append("dl_\(delay)") }
        if let effort = s.effort, s.format.isConcrete, effort != s.format.canonicalEffort {
            throw Unprintable(reason: "effort exists only in JSON")
        }
        if s.effort != nil && !s.format.isConcrete {
            throw Unprintable(reason: "effort exists only in JSON")
        }
        if let b = s.breakpoints { p.append("w_" + (try automaticWidth(b))) }
        if let densities = s.densities {
            guard densities == ParseRun.automaticDensities else { throw Unprintable(reason: "densities other than dpr_auto's 1, 2 and 3 exist only in JSON") }
            p.append("dpr_auto")
        }
        return p.isEmpty ? nil : p.joined(separator: ",")
    }

    /// Breakpoints as the `w_auto` that reads as them, when one does.
    static func automaticWidth(_ b: Breakpoints) throws(Unprintable) -> String {
        switch b.spacing {
        case .bytes(let bytes) where bytes % 1000 == 0:
            return "auto:breakpoints_\(b.minWidth)_\(b.maxWidth)_\(bytes / 1000)_\(b.maxCount)"
        case .step(let step) where b.minWidth == step && b.maxWidth == max(step, Breakpoints.defaultMaxWidth) && b.maxCount == Breakpoints.defaultMaxCount:
            return step == AutomaticWidth.defaultStep ? "auto" : "auto:\(step)"
        default:
            throw Unprintable(reason: "these breakpoints exist only in JSON (w_auto:breakpoints spaces widths by whole KB; w_auto:<step> starts at the step and ends at 1000 px)")
        }
    }

    /// A colour's CSS name when it has one, else `rgb:rrggbb[aa]`.
    static func color(_ c: Color) -> String {
        if c == .transparent { return "transparent" }
        if c.isOpaque, let name = shortestName[UInt32(c.red) << 16 | UInt32(c.green) << 8 | UInt32(c.blue)] { return name }
        return c.cloudinaryText
    }

    private static let shortestName: [UInt32: String] = {
        var names: [UInt32: String] = [:]
        for (name, rgb) in Color.named {
            if let existing = names[rgb], existing.count < name.count || (existing.count == name.count && existing < name) { continue }
            names[rgb] = name
        }
        return names
    }()

    /// Percent-encodes everything but unreserved characters, so `,` `/` `:` `%` in text survive.
    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(UnicodeScalar(byte))
            if byte < 0x80 && (c.isLetter || c.isNumber || "-._~".contains(c)) {
                out.append(c)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}
