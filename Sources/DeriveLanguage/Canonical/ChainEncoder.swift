/// Writes the model as JSON in the same schema the decoder reads, so that any chain Derive
/// prints can be read back to the same value.
public enum ChainEncoder {
    public static func json(_ job: JobSpec) -> JSONValue {
        var members: [JSONMember] = [JSONMember(key: "version", value: .int(job.version))]
        if let source = job.source { members.append(JSONMember(key: "source", value: .string(source))) }
        if let preset = job.preset {
            members.append(JSONMember(key: "preset", value: .string(preset)))
        } else {
            members.append(JSONMember(key: "outputs", value: .array(job.outputs.map(json))))
        }
        if !job.asset.tags.isEmpty { members.append(JSONMember(key: "tags", value: .array(job.asset.tags.map(JSONValue.string)))) }
        if !job.asset.context.isEmpty { members.append(JSONMember(key: "context", value: job.asset.contextJSON)) }
        return .object(members)
    }

    public static func json(_ output: OutputSpec) -> JSONValue {
        var members = [JSONMember(key: "name", value: .string(output.name)),
                       JSONMember(key: "chain", value: json(output.chain))]
        members += settingsMembers(output.settings)
        return .object(members)
    }

    public static func json(_ chain: [Step]) -> JSONValue {
        .array(chain.map(json))
    }

    static func settingsMembers(_ s: OutputSettings) -> [JSONMember] {
        var members: [JSONMember] = []
        func add(_ key: String, _ value: JSONValue?) {
            if let value { members.append(JSONMember(key: key, value: value)) }
        }
        add("format", s.format.map { .string($0.rawValue) })
        add("quality", s.quality.map(json))
        add("strip", s.strip.map(JSONValue.bool))
        add("progressive", s.progressive.map(JSONValue.bool))
        add("stripProfile", s.stripProfile.map(JSONValue.bool))
        add("density", s.density.map(JSONValue.int))
        add("pngType", s.pngType.map { .string($0.rawValue) })
        add("lossy", s.lossy.map(JSONValue.bool))
        add("loop", s.loop.map(JSONValue.int))
        add("delay", s.delay.map(JSONValue.int))
        add("tiffLZW", s.tiffLZW.map(JSONValue.bool))
        add("ignoreMaskChannels", s.ignoreMaskChannels.map(JSONValue.bool))
        add("colorSpace", s.cmyk.map { .string($0.rawValue) })
        add("keepAttribution", s.keepAttribution.map(JSONValue.bool))
        add("getInfo", s.getInfo.map(JSONValue.bool))
        add("defaultImage", s.defaultImage.map(JSONValue.string))
        add("lossless", s.lossless.map(JSONValue.bool))
        add("effort", s.effort.map(JSONValue.int))
        add("chromaSubsampling", s.chromaSubsampling.map { .string($0.rawValue) })
        add("autoOrient", s.autoOrient.map(JSONValue.bool))
        add("frame", s.frame.map(JSONValue.int))
        add("pages", s.pages.map { .string($0.text) })
        add("breakpoints", s.breakpoints.map(json))
        add("densities", s.densities.map { .array($0.map(JSONValue.decimal)) })
        add("formats", s.formats.map { .array($0.map { .string($0.rawValue) }) })
        add("clip", s.clip.map { clip in
            var fields: [JSONMember] = []
            if clip.evenOdd { fields.append(JSONMember(key: "evenOdd", value: .bool(true))) }
            if let number = clip.number { fields.append(JSONMember(key: "path", value: .int(number))) }
            if let name = clip.name { fields.append(JSONMember(key: "path", value: .string(name))) }
            return .object(fields)
        })
        add("psd", s.psd.map { psd in
            switch psd {
            case .layers(let names): .object([JSONMember(key: "layers", value: .array(names.map(JSONValue.string)))])
            case .embedded(let n): .object([JSONMember(key: "embedded", value: .int(n))])
            case .embeddedNamed(let names): .object([JSONMember(key: "embedded", value: .array(names.map(JSONValue.string)))])
            }
        })
        return members
    }

    static func json(_ quality: Quality) -> JSONValue {
        switch quality {
        case .value(let q): .int(q)
        case .auto(let level): .string("auto:\(level.rawValue)")
        case .expression(let e): .string(e.canonicalText)
        }
    }

    static func json(_ b: Breakpoints) -> JSONValue {
        var members = [JSONMember(key: "minWidth", value: .int(b.minWidth)),
                       JSONMember(key: "maxWidth", value: .int(b.maxWidth))]
        switch b.spacing {
        case .step(let step): members.append(JSONMember(key: "step", value: .int(step)))
        case .bytes(let bytes): members.append(JSONMember(key: "bytes", value: .int(bytes)))
        }
        members.append(JSONMember(key: "maxCount", value: .int(b.maxCount)))
        return .object(members)
    }

    public static func json(_ step: Step) -> JSONValue {
        .object([JSONMember(key: step.key, value: body(step))])
    }

    static func body(_ step: Step) -> JSONValue {
        var m: [JSONMember] = []
        func add(_ key: String, _ value: JSONValue?) {
            if let value { m.append(JSONMember(key: key, value: value)) }
        }
        switch step {
        case .resize(let r):
            add("mode", .string(r.mode.rawValue))
            add("width", r.width?.json)
            add("height", r.height?.json)
            add("aspectRatio", r.aspectRatio.map(JSONValue.decimal) ?? r.aspectRatioExpression.map { .string($0.canonicalText) })
            add("gravity", r.gravity.map(json))
            add("x", r.x?.json)
            add("y", r.y?.json)
            add("dpr", r.dpr.map(JSONValue.decimal) ?? r.dprExpression.map { .string($0.canonicalText) })
            add("background", r.background.map { .string($0.hex) })
            switch r.padFill {
            case .blurred(let i, let b)?:
                add("padFill", .object([JSONMember(key: "blurred", value: .object([JSONMember(key: "intensity", value: .int(i)),
                                                                                   JSONMember(key: "brightness", value: .int(b))]))]))
            case .auto(let mode, let palette)?:
                add("padFill", .object([JSONMember(key: "auto", value: .string(mode.rawValue))]
                    + (palette.isEmpty ? [] : [JSONMember(key: "palette", value: .array(palette.map { .string($0.hex) }))])))
            case .gradient(let g)?:
                add("padFill", .object([JSONMember(key: "gradient", value: .object([
                    JSONMember(key: "from", value: .string(g.source.rawValue)), JSONMember(key: "contrast", value: .bool(g.contrast)),
                    JSONMember(key: "colors", value: .int(g.colors)), JSONMember(key: "direction", value: .string(g.direction.rawValue)),
                ] + (g.palette.isEmpty ? [] : [JSONMember(key: "palette", value: .array(g.palette.map { .string($0.hex) }))])))]))
            case nil: break
            }
            add("zoom", r.zoom.map(JSONValue.decimal) ?? r.zoomExpression.map { .string($0.canonicalText) })
            add("relative", r.relative ? .bool(true) : nil)
            add("autoTurn", r.autoTurn.map { .string($0.rawValue) })
        case .rotate(let r):
            add("angle", r.angleExpression.map { .string($0.canonicalText) } ?? .decimal(r.angle))
            switch (r.horizontalFlip, r.verticalFlip) {
            case (true, true): add("flip", .string("both"))
            case (true, false): add("flip", .string("horizontal"))
            case (false, true): add("flip", .string("vertical"))
            case (false, false): break
            }
            add("background", r.background.map { .string($0.hex) })
        case .round(let r):
            switch r.radius {
            case .max: add("radius", .string("max"))
            case .corners(let radii): add("radius", .array(radii.map(\.json)))
            }
            add("background", r.background.map { .string($0.hex) })
        case .effect(.declared(let d)):
            return d.declaration.json(d.values)
        case .effect(let e):
            if let field = EffectRules.amountField(of: e.kind), let amount = e.amount { add(field, amount.json) }
            switch e {
            case .tint(_, let color): add("color", .string(color.hex))
            case .tintGradient(_, let gradient):
                add("colors", .array(gradient.colors.map { .string($0.hex) }))
                if gradient.positions.contains(where: { $0 != nil }) { add("positions", .array(gradient.positions.map { $0.map(JSONValue.int) ?? .null })) }
                if gradient.equalize { add("equalize", .bool(true)) }
            case .replaceColor(_, let to, let from):
                add("to", .string(to.hex))
                add("from", from.map { .string($0.hex) })
            case .makeTransparent(_, let color): add("color", color.map { .string($0.hex) })
            case .theme(_, let color): add("color", .string(color.hex))
            case .distort(.corners(let corners)): add("corners", .array(corners.map(\.json)))
            case .distort(.arc(let degrees)): add("arc", .int(degrees))
            case .gradientFade(_, let edges, let x, let y):
                // `symmetric: true` as before symmetric_pad existed, so those chains keep their identity.
                if edges == .symmetric { add("symmetric", .bool(true)) }
                if edges == .symmetricPad { add("type", .string(edges.rawValue)) }
                add("x", x?.json)
                add("y", y?.json)
            case .shadow(_, let color, let x, let y):
                add("color", .string(color.hex))
                add("x", x.json)
                add("y", y.json)
            case .vectorize(_, let trace):
                // Only what differs from Cloudinary's defaults, so `e_vectorize:6` keeps its identity.
                add("detail", trace.detail?.json)
                add("despeckle", trace.despeckle?.json)
                add("paths", trace.paths.map(JSONValue.int))
                add("corners", trace.corners.map(JSONValue.int))
            case .cartoonify(_, .reduction(let r)): add("reduction", .int(r))
            case .cartoonify(_, .blackwhite): add("reduction", .string("bw"))
            case .assistColorblind(_, xray: true): add("xray", .bool(true))
            case .recolor(let matrix): add("matrix", .array(matrix.map(JSONValue.decimal)))
            case .blurRegion(_, let region?), .pixelateRegion(_, let region?):
                add("x", region.x.json)
                add("y", region.y.json)
                add("width", region.width.json)
                add("height", region.height.json)
            default: break
            }
        case .trim(let t):
            add("tolerance", .int(t.tolerance))
            add("color", t.color.map { .string($0.hex) })
        case .background(let color):
            add("color", .string(color.hex))
        case .border(let b):
            add("width", b.widthExpression.map { .string($0.canonicalText) } ?? .int(b.width))
            add("color", .string(b.color.hex))
        case .opacity(let o):
            add("percent", o.json)
        case .overlay(let o):
            switch o.source {
            case .image(let source): add("image", .string(source))
            // Only in a plan (`derive explain`): a chain names it `$img`.
            case .snapshot(let name): add("snapshot", .string(name))
            case .text(let t):
                // A text without variables is a string, as it always was (and keeps its identity).
                let text: JSONValue = t.variableNames.isEmpty ? .string(t.text) : .array(t.parts.map { part in
                    switch part {
                    case .literal(let s): .string(s)
                    case .variable(let name): .object([JSONMember(key: "variable", value: .string(name))])
                    }
                })
                var members: [JSONMember] = [
                    JSONMember(key: "text", value: text), JSONMember(key: "font", value: .string(t.font)),
                    JSONMember(key: "size", value: .int(t.size)), JSONMember(key: "bold", value: .bool(t.bold)),
                    JSONMember(key: "italic", value: .bool(t.italic)), JSONMember(key: "color", value: .string(t.color.hex)),
                ]
                // Only when given, so text without wrapping keeps the identity it always had.
                if let width = t.width { members.append(JSONMember(key: "width", value: .int(width))) }
                // Likewise the decorations and spacing.
                if t.underline { members.append(JSONMember(key: "underline", value: .bool(true))) }
                if t.strikethrough { members.append(JSONMember(key: "strikethrough", value: .bool(true))) }
                if let spacing = t.letterSpacing { members.append(JSONMember(key: "letterSpacing", value: .int(spacing))) }
                if let spacing = t.lineSpacing { members.append(JSONMember(key: "lineSpacing", value: .int(spacing))) }
                if let alignment = t.alignment { members.append(JSONMember(key: "alignment", value: .string(alignment.rawValue))) }
                if let stroke = t.stroke {
                    members.append(JSONMember(key: "stroke", value: .object([
                        JSONMember(key: "width", value: .int(stroke.width)), JSONMember(key: "color", value: .string(stroke.color.hex)),
                    ])))
                }
                if !t.antialias { members.append(JSONMember(key: "antialias", value: .bool(false))) }
                if t.noTrim { members.append(JSONMember(key: "noTrim", value: .bool(true))) }
                add("text", .object(members))
            }
            add("chain", json(o.chain))
            add("gravity", o.gravity.map(json))
            add("x", o.x?.json)
            add("y", o.y?.json)
            if o.regionRelative { add("regionRelative", .bool(true)) }
            // Only when set, so an overlay keeps the identity it always had.
            if o.underlay { add("underlay", .bool(true)) }
            if let blend = o.blend { add("blend", .string(blend.rawValue)) }
            if let level = o.blendLevel { add("blendLevel", .int(level)) }
            if o.tiled { add("tiled", .bool(true)) }
        case .validate(let c):
            add("minWidth", c.minWidth.map(JSONValue.int))
            add("maxWidth", c.maxWidth.map(JSONValue.int))
            add("minHeight", c.minHeight.map(JSONValue.int))
            add("maxHeight", c.maxHeight.map(JSONValue.int))
            add("maxPixels", c.maxPixels.map(JSONValue.int))
            add("formats", c.formats.map { .array($0.map { .string($0.rawValue) }) })
        case .preset(let name), .lut(let name):
            return .string(name)
        case .assign(let a):
            add("name", .string(a.name))
            switch a.value {
            case .number(.number(let n)): add("value", n == n.rounded() && abs(n) < 1e15 ? .int(Int(n)) : .decimal(n))
            case .number(let e): add("value", .string(e.canonicalText))
            case .text(let t): add("text", .string(t))
            case .asset(let read): add("asset", .string(read.canonicalText))
            case .reference(let id): add("reference", .string(id))
            case .currentImage: add("image", .string("current"))
            }
            if a.isDefault { add("default", .bool(true)) }
        case .template(let text):
            return .string(text)
        case .quality(let q):
            return Self.json(q)
        case .conditional(let c):
            add("condition", .string(c.condition.canonicalText))
            add("then", json(c.then))
            if !c.otherwise.isEmpty { add("else", json(c.otherwise)) }
        }
        return .object(m)
    }

    static func json(_ gravity: Gravity) -> JSONValue {
        switch gravity {
        case .compass(let c): .string(c.rawValue)
        case .smart(let s): .string(s.rawValue)
        case .focus(let x, let y): .object(["x": x.json, "y": y.json])
        }
    }
}
