/// The plan as JSON, for `derive explain` and for job reports.
extension Plan {
    public var json: JSONValue {
        .object([
            "source": source.json,
            "decode": decode.json,
            "outputs": .array(outputs.map(\.json)),
        ])
    }
}

extension SourceFacts {
    public var json: JSONValue {
        .object([
            "format": .string(format.rawValue),
            "width": .int(width),
            "height": .int(height),
            "orientation": .int(orientation),
            "orientedWidth": .int(orientedSize.width),
            "orientedHeight": .int(orientedSize.height),
            "pages": .int(pages),
            "hasAlpha": .bool(hasAlpha),
        ])
    }
}

extension DecodePlan {
    public var json: JSONValue {
        let pagesValue: JSONValue
        switch pages {
        case .all: pagesValue = .string("all")
        case .page(let n): pagesValue = .int(n)
        }
        var members: [JSONMember] = [JSONMember(key: "width", value: .int(size.width)), JSONMember(key: "height", value: .int(size.height)),
                                     JSONMember(key: "scale", value: .decimal(scale)), JSONMember(key: "pages", value: pagesValue)]
        if let region {
            members.append(JSONMember(key: "region", value: .object(["x": .int(region.x), "y": .int(region.y),
                                                                     "width": .int(region.width), "height": .int(region.height)])))
        }
        return .object(members)
    }
}

extension PlannedOutput {
    public var json: JSONValue {
        var members: [JSONMember] = [JSONMember(key: "name", value: .string(name))]
        if let breakpointWidth { members.append(JSONMember(key: "breakpointWidth", value: .int(breakpointWidth))) }
        members += [
            JSONMember(key: "width", value: size.map { .int($0.width) } ?? .null),
            JSONMember(key: "height", value: size.map { .int($0.height) } ?? .null),
            JSONMember(key: "format", value: .string(encoding.format.rawValue)),
            JSONMember(key: "quality", value: encoding.quality.map(ChainEncoder.json) ?? .null),
            JSONMember(key: "keepsAnimation", value: .bool(keepsAnimation)),
            JSONMember(key: "identity", value: .string(identity)),
            JSONMember(key: "transformation", value: (try? CloudinaryPrinter.string(for: canonical)).map(JSONValue.string) ?? .null),
            JSONMember(key: "operations", value: .array(operations.map(\.json))),
        ]
        if !expressions.isEmpty {
            members.append(JSONMember(key: "expressions", value: .array(expressions.map { e in
                .object(["step": .int(e.step), "parameter": .string(e.parameter), "expression": .string(e.expression), "value": e.exact.map(JSONValue.decimal) ?? .int(e.value)])
            })))
        }
        if !variables.isEmpty {
            members.append(JSONMember(key: "variables", value: .array(variables.map { v in
                let value: JSONValue = switch v.value {
                case .number(let n): .decimal(n)
                case .text(let t): .string(t)
                }
                return .object(["step": .int(v.step), "name": .string(v.name), "assigned": .string(v.assigned), "value": value])
            })))
        }
        if !conditions.isEmpty {
            members.append(JSONMember(key: "conditions", value: .array(conditions.map { c in
                .object(["step": .int(c.step), "condition": .string(c.condition), "holds": .bool(c.holds)])
            })))
        }
        if !notes.isEmpty {
            members.append(JSONMember(key: "notes", value: .array(notes.map(JSONValue.string))))
        }
        if !faceNotes.isEmpty {
            members.append(JSONMember(key: "faces", value: .array(faceNotes.map(JSONValue.string))))
        }
        if let search = breakpointSearch {
            members.append(JSONMember(key: "breakpointSearch", value: .object([
                "minWidth": .int(search.minWidth), "maxWidth": .int(search.maxWidth),
                "bytes": .int(search.bytes), "maxCount": .int(search.maxCount),
            ])))
        }
        if size == nil {
            members.append(JSONMember(key: "note", value: .string("the final size depends on the content (trim); the engine plans the deferred steps once it is known")))
        }
        members.append(JSONMember(key: "canonical", value: canonical.json))
        return .object(members)
    }
}

extension ImageOperation {
    public var json: JSONValue {
        func op(_ name: String, _ rest: [JSONMember] = []) -> JSONValue {
            .object([JSONMember(key: "op", value: .string(name))] + rest)
        }
        func size(_ s: Size) -> [JSONMember] {
            [JSONMember(key: "width", value: .int(s.width)), JSONMember(key: "height", value: .int(s.height))]
        }
        func rect(_ r: Rect) -> [JSONMember] {
            [JSONMember(key: "x", value: .int(r.x)), JSONMember(key: "y", value: .int(r.y))] + size(r.size)
        }
        func body(_ step: Step) -> [JSONMember] {
            if case .object(let members) = ChainEncoder.body(step) { return members }
            return []
        }
        switch self {
        case .selectPage(let page): return op("selectPage", [JSONMember(key: "page", value: .int(page))])
        case .selectPages(let pages): return op("selectPages", [JSONMember(key: "pages", value: .array(pages.map(JSONValue.int)))])
        case .unorient(let o): return op("unorient", [JSONMember(key: "orientation", value: .int(o))])
        case .dropMaskChannel: return op("dropMaskChannel", [])
        case .resize(let s): return op("resize", size(s))
        case .crop(let r): return op("crop", rect(r))
        case .smartCrop(let s, let strategy):
            return op("smartCrop", size(s) + [JSONMember(key: "strategy", value: .string(strategy.rawValue))])
        case .faceCrop(let r): return op("faceCrop", body(.resize(r)))
        case .fillPad(let s, let background):
            return op("fillPad", size(s) + [JSONMember(key: "background", value: .string(background.hex))])
        case .embed(let at, let canvas, let background):
            return op("embed", rect(at) + [JSONMember(key: "canvasWidth", value: .int(canvas.width)),
                                           JSONMember(key: "canvasHeight", value: .int(canvas.height)),
                                           JSONMember(key: "background", value: .string(background.hex))])
        case .padFill(let at, let canvas, let fill):
            return op("padFill", rect(at) + [JSONMember(key: "canvasWidth", value: .int(canvas.width)),
                                             JSONMember(key: "canvasHeight", value: .int(canvas.height)),
                                             JSONMember(key: "fill", value: .string(fill.cloudinaryText))])
        case .flip(let horizontal): return op("flip", [JSONMember(key: "axis", value: .string(horizontal ? "horizontal" : "vertical"))])
        case .rotate(let degrees, let canvas, let background):
            var m = [JSONMember(key: "degrees", value: .decimal(degrees))] + size(canvas)
            if let background { m.append(JSONMember(key: "background", value: .string(background.hex))) }
            return op("rotate", m)
        case .round(let radius, let background): return op("round", body(.round(RoundCorners(radius: radius, background: background))))
        case .effect(let e): return op(e.name, body(.effect(e)))
        case .trim(let t): return op("trim", body(.trim(t)))
        case .lut(let name): return op("lut", [JSONMember(key: "file", value: .string(name))])
        case .flatten(let c): return op("flatten", [JSONMember(key: "color", value: .string(c.hex))])
        case .border(let b): return op("border", body(.border(b)))
        case .opacity(let o): return op("opacity", [JSONMember(key: "percent", value: .int(o))])
        case .overlay(let o): return op("overlay", body(.overlay(o)))
        case .snapshot(let name): return op("snapshot", [JSONMember(key: "variable", value: .string(name))])
        case .deferred(let steps): return op("deferred", [JSONMember(key: "chain", value: ChainEncoder.json(steps))])
        }
    }
}

/// The plan as `derive explain` prints it for a deployment: each output also says the encoder
/// effort it will be written at and where that came from (`EngineSettings.effort(for:format:)`).
extension Plan {
    public func json(engine: EngineSettings) -> JSONValue {
        .object([
            "source": source.json,
            "decode": decode.json,
            "outputs": .array(outputs.map { $0.json(engine: engine) }),
        ])
    }
}

extension PlannedOutput {
    public func json(engine: EngineSettings) -> JSONValue {
        guard case .object(var members) = json else { return json }
        func effort(_ format: OutputFormat) -> JSONValue {
            let (effort, source) = engine.effort(for: encoding.resolved(to: format), format: format)
            let from = switch source {
            case .output: "the output's effort"
            case .deployment: "DERIVE_\(format.rawValue.uppercased())_EFFORT"
            case .frontier: "\(format.rawValue)'s default"
            }
            return .object([JSONMember(key: "effort", value: .int(effort)), JSONMember(key: "from", value: .string(from))])
        }
        let formats = encoding.format.isConcrete ? [encoding.format] : engine.autoFormats
        let efforts = formats.filter { EngineSettings.effortFormats.contains($0) }
        guard !efforts.isEmpty, let at = members.firstIndex(where: { $0.key == "quality" }) else { return .object(members) }
        let value: JSONValue = encoding.format.isConcrete ? effort(encoding.format)
            : .object(efforts.map { JSONMember(key: $0.rawValue, value: effort($0)) })
        members.insert(JSONMember(key: "effort", value: value), at: at + 1)
        return .object(members)
    }
}
