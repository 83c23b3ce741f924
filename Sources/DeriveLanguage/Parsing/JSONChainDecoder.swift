/// Reads jobs, outputs and chains from JSON into the model. Every unknown key, wrong type,
/// out-of-range value and contradiction is reported with its path; nothing is ignored.
public struct JSONChainDecoder: Sendable {
    public var limits: ChainLimits

    public init(limits: ChainLimits = .default) {
        self.limits = limits
    }

    public static let jobKeys = ["version", "$schema", "source", "outputs", "preset", "tags", "context"]
    public static let outputKeys = ["name", "chain", "format", "quality", "strip", "stripProfile", "density", "pngType", "lossy", "loop", "delay", "tiffLZW", "ignoreMaskChannels", "colorSpace", "keepAttribution", "getInfo", "defaultImage", "progressive", "lossless", "effort",
                                    "chromaSubsampling", "autoOrient", "frame", "pages", "breakpoints", "densities", "formats", "clip", "psd"]
    public static let stepKeys = ["resize", "rotate", "round", "trim", "background", "border", "opacity", "overlay",
                                  "validate", "preset", "variable", "if", "template", "lut", "quality"] + StepCatalogue.effectNames
    static let resizeKeys = ["mode", "width", "height", "aspectRatio", "gravity", "x", "y", "dpr", "background", "padFill", "zoom", "relative", "autoTurn"]
    static let breakpointKeys = ["minWidth", "maxWidth", "step", "bytes", "maxCount"]
    static let overlayKeys = ["image", "text", "chain", "gravity", "x", "y", "regionRelative", "underlay", "blend", "blendLevel", "tiled"]
    static let textKeys = ["text", "font", "size", "bold", "italic", "color", "width", "underline", "strikethrough", "letterSpacing", "lineSpacing", "alignment", "stroke", "antialias", "noTrim"]
    static let constraintKeys = ["minWidth", "maxWidth", "minHeight", "maxHeight", "maxPixels", "formats"]

    /// Parses and decodes a job document (`{"source": ..., "outputs": [...]}`).
    public func decodeJob(json text: String) throws(ValidationError) -> JobSpec {
        try decodeJob(Self.parse(text))
    }

    public func decodeJob(_ value: JSONValue) throws(ValidationError) -> JobSpec {
        let log = IssueCollector()
        let job = readJob(value, log: log, requireSource: true)
        if let job, log.isEmpty { return job }
        throw ValidationError(log.issues)
    }

    /// Decodes whatever a person may hand to `derive explain`: a job, `{"outputs": [...]}`, a
    /// single output object, or a bare chain array. Outputs without a name are called `default`.
    public func decodeDocument(_ value: JSONValue) throws(ValidationError) -> JobSpec {
        let log = IssueCollector()
        var job: JobSpec?
        switch value {
        case .array:
            let chain = readChain(value, at: .root, log: log, depth: 0)
            job = JobSpec(source: nil, outputs: [OutputSpec(name: "default", chain: chain)])
        case .object(let members) where members.contains(where: { Self.jobKeys.contains($0.key) }):
            job = readJob(value, log: log, requireSource: false)
        case .object:
            if let output = readOutput(value, at: .root, log: log, defaultName: "default") {
                job = JobSpec(source: nil, outputs: [output])
            }
        default:
            log.add(.root, "expected a job, an output or a chain, got \(value.typeDescription)")
        }
        if let job, log.isEmpty { return job }
        throw ValidationError(log.issues)
    }

    /// One output object; its name is required.
    public func decodeOutput(_ value: JSONValue) throws(ValidationError) -> OutputSpec {
        let log = IssueCollector()
        let output = readOutput(value, at: .root, log: log, defaultName: nil)
        if let output, log.isEmpty { return output }
        throw ValidationError(log.issues)
    }

    public func decodeOutputs(_ value: JSONValue) throws(ValidationError) -> [OutputSpec] {
        let log = IssueCollector()
        let outputs = readOutputs(value, at: .root, log: log)
        if log.isEmpty { return outputs }
        throw ValidationError(log.issues)
    }

    /// Parses JSON text, turning a syntax error into a validation issue with line and column.
    public static func parse(_ text: String) throws(ValidationError) -> JSONValue {
        do {
            return try JSONParser().parse(text)
        } catch {
            throw ValidationError(location: "", reason: error.description)
        }
    }

    // MARK: - Job and outputs

    func readJob(_ value: JSONValue, log: IssueCollector, requireSource: Bool) -> JobSpec? {
        guard let fields = log.object(value, at: .root, allowed: Self.jobKeys) else { return nil }
        var version = JobSpec.currentVersion
        if let v = log.int(fields["version"], at: JSONPath.root.appending("version")) {
            if v > JobSpec.currentVersion {
                log.add(JSONPath.root.appending("version"), "version \(v) is newer than this Derive understands (\(JobSpec.currentVersion)); upgrade Derive")
            } else if v < 1 {
                log.add(JSONPath.root.appending("version"), "must be 1 or more, got \(v)")
            }
            version = v
        }
        if let schema = fields["$schema"] { _ = log.string(schema, at: JSONPath.root.appending("$schema")) }
        let sourcePath = JSONPath.root.appending("source")
        let source = log.string(fields["source"], at: sourcePath)
        if let source {
            log.add(sourcePath, StepRules.sourceIssues(source))
        } else if fields["source"] == nil && requireSource {
            log.add(sourcePath, "is required: the URL or path of the image to derive from")
        }
        let presetPath = JSONPath.root.appending("preset")
        let preset = log.string(fields["preset"], at: presetPath)
        if let preset { log.add(presetPath, StepRules.presetNameIssues(preset, field: "")) }
        var outputs: [OutputSpec] = []
        switch (fields["outputs"], fields["preset"]) {
        case (nil, nil):
            log.add(.root, "needs \"outputs\" (a non-empty list) or \"preset\" (a preset name)")
        case (_?, _?):
            log.add(presetPath, "cannot be combined with \"outputs\"; give one of them")
        case (let list?, nil):
            outputs = readOutputs(list, at: JSONPath.root.appending("outputs"), log: log)
        case (nil, _?):
            break
        }
        return JobSpec(version: version, source: source, outputs: outputs, preset: preset, asset: readAsset(fields, log: log))
    }

    /// `"tags": ["sale", ...]` and `"context": {"key": "value", ...}`, checked as a store keeps them.
    func readAsset(_ fields: [String: JSONValue], log: IssueCollector) -> AssetFacts {
        var tags: [String] = []
        if let value = fields["tags"] {
            let path = JSONPath.root.appending("tags")
            let list = log.array(value, at: path) ?? []
            // Counted as written, as the schema's maxItems counts them.
            if list.count > AssetFacts.maxTags { log.add(path, "has \(list.count) tags; the limit is \(AssetFacts.maxTags)") }
            for (i, element) in list.enumerated() {
                guard let tag = log.string(element, at: path.appending(i)) else { continue }
                if let issue = AssetFacts.tagIssue(tag) { log.add(path.appending(i), issue) } else { tags.append(tag) }
            }
        }
        var context: [String: String] = [:]
        if let value = fields["context"] {
            let path = JSONPath.root.appending("context")
            if case .object(let members) = value {
                if members.count > AssetFacts.maxContextEntries { log.add(path, "has \(members.count) entries; the limit is \(AssetFacts.maxContextEntries)") }
                for member in members {
                    let at = path.appending(member.key)
                    guard case .string(let text) = member.value else {
                        log.add(at, "expected a string, got \(member.value.typeDescription)")
                        continue
                    }
                    if let issue = AssetFacts.keyIssue(member.key) ?? AssetFacts.valueIssue(member.key, text) { log.add(at, issue) } else { context[member.key] = text }
                }
            } else {
                log.add(path, "expected an object of texts ({\"productType\": \"shoes\"}), got \(value.typeDescription)")
            }
        }
        return AssetFacts(tags: tags, context: context)
    }

    func readOutputs(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> [OutputSpec] {
        guard let list = log.array(value, at: path) else { return [] }
        if list.isEmpty {
            log.add(path, "must list at least one output")
            return []
        }
        if list.count > limits.maxOutputsPerJob {
            log.add(path, "has \(list.count) outputs; the limit is \(limits.maxOutputsPerJob)")
        }
        var outputs: [OutputSpec] = []
        var firstIndex: [String: Int] = [:]
        for (i, element) in list.enumerated() {
            guard let output = readOutput(element, at: path.appending(i), log: log, defaultName: nil) else { continue }
            if let earlier = firstIndex[output.name] {
                log.add(path.appending(i).appending("name"), "duplicate output name \(Quoted(output.name)) (also \(path.appending(earlier)))")
            } else {
                firstIndex[output.name] = i
            }
            outputs.append(output)
        }
        return outputs
    }

    func readOutput(_ value: JSONValue, at path: JSONPath, log: IssueCollector, defaultName: String?) -> OutputSpec? {
        guard let fields = log.object(value, at: path, allowed: Self.outputKeys) else { return nil }
        let namePath = path.appending("name")
        var name = defaultName
        if let given = log.string(fields["name"], at: namePath) {
            if StepRules.isSafeName(given) {
                name = given
            } else {
                log.add(namePath, "output names are 1–64 characters of A-Z a-z 0-9 . _ - (not starting with .), got \(Quoted(given))")
            }
        } else if fields["name"] == nil && defaultName == nil {
            log.add(namePath, "is required: it names the output in storage keys and results")
        }

        var settings = readSettings(fields, at: path, log: log)
        var chain: [Step] = []
        let chainPath = path.appending("chain")
        var chainIsString = false
        var notes: [String] = []
        switch fields["chain"] {
        case nil:
            log.add(chainPath, "is required: a list of steps or a transformation string (use [] to only re-encode)")
        case .string(let text)?:
            let parsed = CloudinaryParser(limits: limits).parse(text, location: chainPath.description)
            log.append(parsed.issues)
            chain = parsed.steps
            notes = parsed.notes
            chainIsString = true
            settings = merge(settings, parsed.settings, at: path, log: log)
        case let value?:
            chain = readChain(value, at: chainPath, log: log, depth: 0)
        }
        // A setting the output object does not have came from the chain string: it is reported
        // there, under the name it has in the string.
        for issue in StepRules.settingsIssues(settings, limits: limits) {
            let key = String(issue.field.prefix(while: { $0 != "." }))
            if chainIsString && fields[key] == nil {
                log.append([issue.inString(at: chainPath.description)])
            } else {
                log.add(path.appending(field: issue.field), issue.reason)
            }
        }
        return name.map { OutputSpec(name: $0, chain: chain, settings: settings, notes: notes) }
    }

    /// A quality: an integer, `auto[:level]` or an expression.
    func readQuality(_ q: JSONValue, at qPath: JSONPath, log: IssueCollector) -> Quality? {
        switch q {
        case .number:
            return log.int(q, at: qPath).map(Quality.value)
        case .string(let text) where QualityText.parse(text) != nil:
            return QualityText.parse(text)
        case .string(let text) where ExpressionParser.looksLikeExpression(text):
            switch ExpressionParser.parse(text) {
            case .success(let e): return .expression(e)
            case .failure(let problem): log.add(qPath, problem.message("expression \(Quoted(text))", param: "it", accepts: "an integer 1–100, auto"))
            }
        default:
            log.add(qPath, "expected an integer 1–100, \"auto\" or \"auto:best|good|eco|low\", got \(q.typeDescription)")
        }
        return nil
    }

    func readSettings(_ fields: [String: JSONValue], at path: JSONPath, log: IssueCollector) -> OutputSettings {
        var s = OutputSettings()
        s.format = log.keyword(fields["format"], at: path.appending("format"), what: "format",
                               spellings: OutputFormat.spellings, parse: OutputFormat.parse)
        if let q = fields["quality"] {
            s.quality = readQuality(q, at: path.appending("quality"), log: log)
        }
        s.strip = log.bool(fields["strip"], at: path.appending("strip"))
        s.progressive = log.bool(fields["progressive"], at: path.appending("progressive"))
        s.stripProfile = log.bool(fields["stripProfile"], at: path.appending("stripProfile"))
        s.density = log.int(fields["density"], at: path.appending("density"))
        s.pngType = log.keyword(fields["pngType"], at: path.appending("pngType"), what: "PNG type",
                                spellings: PNGType.allCases.map(\.rawValue)) { PNGType(rawValue: $0) }
        s.lossy = log.bool(fields["lossy"], at: path.appending("lossy"))
        s.loop = log.int(fields["loop"], at: path.appending("loop"))
        s.delay = log.int(fields["delay"], at: path.appending("delay"))
        s.tiffLZW = log.bool(fields["tiffLZW"], at: path.appending("tiffLZW"))
        s.ignoreMaskChannels = log.bool(fields["ignoreMaskChannels"], at: path.appending("ignoreMaskChannels"))
        if let value = fields["colorSpace"] {
            if case .string(let text) = value, let mode = CMYKOutput(rawValue: text) {
                s.cmyk = mode
            } else {
                log.add(path.appending("colorSpace"), "expected \"cmyk\" or \"keep_cmyk\", got \(value.typeDescription)")
            }
        }
        s.keepAttribution = log.bool(fields["keepAttribution"], at: path.appending("keepAttribution"))
        s.getInfo = log.bool(fields["getInfo"], at: path.appending("getInfo"))
        s.defaultImage = log.string(fields["defaultImage"], at: path.appending("defaultImage"))
        if let c = fields["clip"] { s.clip = readClip(c, at: path.appending("clip"), log: log) }
        if let p = fields["psd"] { s.psd = readPSD(p, at: path.appending("psd"), log: log) }
        s.lossless = log.bool(fields["lossless"], at: path.appending("lossless"))
        s.effort = log.int(fields["effort"], at: path.appending("effort"))
        s.chromaSubsampling = log.keyword(fields["chromaSubsampling"], at: path.appending("chromaSubsampling"),
                                          what: "chroma subsampling", spellings: ["auto", "4:4:4", "4:2:0"]) { text in
            ChromaSubsampling(rawValue: text) ?? (text == "444" ? .full : text == "420" ? .half : nil)
        }
        s.autoOrient = log.bool(fields["autoOrient"], at: path.appending("autoOrient"))
        s.frame = log.int(fields["frame"], at: path.appending("frame"))
        if let text = log.string(fields["pages"], at: path.appending("pages")) {
            s.pages = PageSet.parse(text)?.normalised
            if s.pages == nil {
                log.add(path.appending("pages"), "must be pages joined by ';', each a page, a range or an open range (\"2-4;7\", \"5-\"), got \(Quoted(text))")
            }
        }
        if let b = fields["breakpoints"] {
            s.breakpoints = readBreakpoints(b, at: path.appending("breakpoints"), log: log)
        }
        if let value = fields["densities"], let items = log.array(value, at: path.appending("densities")) {
            let densities = items.enumerated().compactMap { i, item in log.double(item, at: path.appending("densities").appending(i)) }
            if densities.count == items.count { s.densities = Array(Set(densities.map(Decimal6.quantize))).sorted() }
        }
        if let value = fields["formats"] {
            s.formats = readFormats(value, at: path.appending("formats"), log: log)
        }
        return s
    }

    /// A format set: concrete formats, each once.
    func readFormats(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> [OutputFormat]? {
        guard let items = log.array(value, at: path) else { return nil }
        var formats: [OutputFormat] = []
        for (i, item) in items.enumerated() {
            guard let format = log.keyword(item, at: path.appending(i), what: "format",
                                           spellings: OutputFormat.spellings, parse: OutputFormat.parse) else { continue }
            if !format.isConcrete {
                log.add(path.appending(i), "a format set lists concrete formats (jpeg, png, webp, avif, gif, jxl, tiff), got \(Quoted(format.rawValue))")
            } else if formats.contains(format) {
                log.add(path.appending(i), "\(format.rawValue) is listed twice")
            } else {
                formats.append(format)
            }
        }
        if items.isEmpty { log.add(path, "lists no formats; give at least one") }
        return formats.isEmpty ? nil : formats
    }

    func readBreakpoints(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Breakpoints? {
        guard let fields = log.object(value, at: path, allowed: Self.breakpointKeys) else { return nil }
        var b = Breakpoints()
        if let v = log.int(fields["minWidth"], at: path.appending("minWidth")) { b.minWidth = v }
        if let v = log.int(fields["maxWidth"], at: path.appending("maxWidth")) { b.maxWidth = v }
        if let v = log.int(fields["maxCount"], at: path.appending("maxCount")) { b.maxCount = v }
        let step = log.int(fields["step"], at: path.appending("step"))
        let bytes = log.int(fields["bytes"], at: path.appending("bytes"))
        if fields["step"] != nil && fields["bytes"] != nil {
            log.add(path.appending("step"), "cannot be combined with bytes; space breakpoints by width or by file size")
        }
        if let step { b.spacing = .step(step) } else if let bytes { b.spacing = .bytes(bytes) }
        return b
    }

    /// Settings may come from JSON fields and from the chain string (`f_webp,q_80`); a setting
    /// given both ways must agree.
    func merge(_ json: OutputSettings, _ string: OutputSettings, at path: JSONPath, log: IssueCollector) -> OutputSettings {
        let (merged, conflicts) = json.filling(from: string)
        for field in conflicts {
            log.add(path.appending(field), "contradicts the chain string, which sets \(CloudinaryNames.setting(field)) differently")
        }
        return merged
    }

    // MARK: - Chains and steps

    func readChain(_ value: JSONValue, at path: JSONPath, log: IssueCollector, depth: Int) -> [Step] {
        guard let list = log.array(value, at: path) else { return [] }
        if list.count > limits.maxChainLength {
            log.add(path, "has \(list.count) steps; the limit is \(limits.maxChainLength)")
            return []
        }
        var steps: [Step] = []
        for (i, element) in list.enumerated() {
            if let step = readStep(element, at: path.appending(i), log: log, depth: depth) {
                log.add(path.appending(i).appending(step.key), StepRules.issues(in: step, limits: limits))
                steps.append(step)
            }
        }
        if steps.length > limits.maxChainLength {
            log.add(path, "has \(steps.length) steps with those of its if branches; the limit is \(limits.maxChainLength)")
            return []
        }
        return steps
    }

    func readStep(_ value: JSONValue, at path: JSONPath, log: IssueCollector, depth: Int) -> Step? {
        guard case .object(let members) = value else {
            log.add(path, "expected a step object such as {\"resize\": {...}}, got \(value.typeDescription)")
            return nil
        }
        guard members.count == 1, let member = members.first else {
            let keys = members.map { Quoted($0.key).description }.joined(separator: ", ")
            log.add(path, "a step is an object with exactly one key naming it (resize, rotate, blur, ...), got \(members.isEmpty ? "none" : keys)")
            return nil
        }
        let key = member.key
        let body = member.value
        let bodyPath = path.appending(key)
        if let d = StepCatalogue.effect(named: key), d.form == .declared {
            return d.read(json: body, at: bodyPath, log: log).map { .effect(.declared(DeclaredEffect(name: key, values: $0))) }
        }
        if let kind = Effect.Kind(rawValue: key), kind != .declared {
            return readEffect(kind, body, at: bodyPath, log: log)
        }
        switch key {
        case "resize":
            return readResize(body, at: bodyPath, log: log).map(Step.resize)
        case "rotate":
            return readRotate(body, at: bodyPath, log: log).map(Step.rotate)
        case "round":
            return readRound(body, at: bodyPath, log: log).map(Step.round)
        case "trim":
            return readTrim(body, at: bodyPath, log: log).map(Step.trim)
        case "background":
            if case .string = body { return log.color(body, at: bodyPath).map(Step.background) }
            guard let fields = log.object(body, at: bodyPath, allowed: ["color"]) else { return nil }
            guard fields["color"] != nil else {
                log.add(bodyPath.appending("color"), "is required")
                return nil
            }
            return log.color(fields["color"], at: bodyPath.appending("color")).map(Step.background)
        case "border":
            guard let fields = log.object(body, at: bodyPath, allowed: ["width", "color"]) else { return nil }
            guard let width = log.wholeNumber(fields["width"], at: bodyPath.appending("width")) else {
                if fields["width"] == nil { log.add(bodyPath.appending("width"), "is required") }
                return nil
            }
            let color = fields["color"] == nil ? .black : log.color(fields["color"], at: bodyPath.appending("color"))
            return color.map { colour in
                switch width {
                case .value(let n): .border(Border(width: n, color: colour))
                case .expression(let e): .border(Border(width: 0, color: colour, widthExpression: e))
                }
            }
        case "opacity":
            switch body {
            case .number, .string: return log.wholeNumber(body, at: bodyPath.appending("percent")).map(Step.opacity)
            default: break
            }
            guard let fields = log.object(body, at: bodyPath, allowed: ["percent"]) else { return nil }
            guard fields["percent"] != nil else {
                log.add(bodyPath.appending("percent"), "is required")
                return nil
            }
            return log.wholeNumber(fields["percent"], at: bodyPath.appending("percent")).map(Step.opacity)
        case "overlay":
            return readOverlay(body, at: bodyPath, log: log, depth: depth).map(Step.overlay)
        case "validate":
            return readConstraints(body, at: bodyPath, log: log).map(Step.validate)
        case "preset":
            return log.string(body, at: bodyPath).map(Step.preset)
        case "lut":
            return log.string(body, at: bodyPath).map(Step.lut)
        case "variable":
            return readAssignment(body, at: bodyPath, log: log).map(Step.assign)
        case "if":
            return readConditional(body, at: bodyPath, log: log, depth: depth).map(Step.conditional)
        case "quality":
            return readQuality(body, at: bodyPath, log: log).map(Step.quality)
        case "template":
            guard let text = log.string(body, at: bodyPath) else { return nil }
            guard text.split(separator: ",").contains(where: { ParseRun.namesFromVariable(String($0)) }) && !text.contains("/")
                    || ParseRun.isLayerTemplate(text) else {
                log.add(bodyPath, "is one Cloudinary component whose names come from variables (\"e_$effect:100\"), or a text layer whose style does (\"l_text:$style:Hi/fl_layer_apply\"); without one, write the step itself")
                return nil
            }
            return .template(text)
        default:
            let expected = "; expected one of " + Self.stepKeys.joined(separator: ", ")
            log.add(bodyPath, "unknown step" + Suggest.hint(for: key, among: Self.stepKeys, else: expected))
            return nil
        }
    }

    func readResize(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Resize? {
        guard let fields = log.object(value, at: path, allowed: Self.resizeKeys) else { return nil }
        var r = Resize()
        if let mode = log.keyword(fields["mode"], at: path.appending("mode"), what: "resize mode",
                                  spellings: ResizeMode.allCases.map(\.rawValue), parse: { ResizeMode(rawValue: $0) }) {
            r.mode = mode
        } else if fields["mode"] != nil {
            return nil
        }
        r.width = log.dimension(fields["width"], at: path.appending("width"))
        r.height = log.dimension(fields["height"], at: path.appending("height"))
        if let e = log.decimalExpression(fields["aspectRatio"], at: path.appending("aspectRatio")) { r.aspectRatioExpression = e } else {
            r.aspectRatio = log.aspectRatio(fields["aspectRatio"], at: path.appending("aspectRatio"))
        }
        r.gravity = log.gravity(fields["gravity"], at: path.appending("gravity"))
        r.x = log.dimension(fields["x"], at: path.appending("x"))
        r.y = log.dimension(fields["y"], at: path.appending("y"))
        if let e = log.decimalExpression(fields["dpr"], at: path.appending("dpr")) { r.dprExpression = e } else {
            r.dpr = log.double(fields["dpr"], at: path.appending("dpr"))
        }
        r.background = log.color(fields["background"], at: path.appending("background"))
        if let fill = fields["padFill"] { r.padFill = readPadFill(fill, at: path.appending("padFill"), log: log) }
        if let turn = fields["autoTurn"] {
            if case .string(let text) = turn, let parsed = AutoTurn(rawValue: text) {
                r.autoTurn = parsed
            } else {
                log.add(path.appending("autoTurn"), "expected \"right\" or \"left\", got \(turn.typeDescription)")
            }
        }
        if let e = log.decimalExpression(fields["zoom"], at: path.appending("zoom")) { r.zoomExpression = e } else {
            r.zoom = log.double(fields["zoom"], at: path.appending("zoom"))
        }
        r.relative = fields["relative"].flatMap { log.bool($0, at: path.appending("relative")) } ?? false
        return r
    }

    func readRotate(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Rotate? {
        if case .number = value {
            return log.double(value, at: path.appending("angle")).map { Rotate(angle: $0) }
        }
        guard let fields = log.object(value, at: path, allowed: ["angle", "flip", "background"]) else { return nil }
        var r = Rotate()
        if let e = log.decimalExpression(fields["angle"], at: path.appending("angle")) { r.angleExpression = e } else if let angle = log.double(fields["angle"], at: path.appending("angle")) { r.angle = angle }
        if let flip = log.keyword(fields["flip"], at: path.appending("flip"), what: "flip",
                                  spellings: ["horizontal", "vertical", "both"], parse: { ["horizontal", "vertical", "both"].contains($0) ? $0 : nil }) {
            r.horizontalFlip = flip != "vertical"
            r.verticalFlip = flip != "horizontal"
        }
        if fields["angle"] == nil && fields["flip"] == nil {
            log.add(path, "needs an angle or a flip")
        }
        r.background = log.color(fields["background"], at: path.appending("background"))
        return r
    }

    func readRound(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> RoundCorners? {
        let radiusValue: JSONValue?
        var background: Color?
        switch value {
        case .number, .string, .array:
            radiusValue = value
        default:
            guard let fields = log.object(value, at: path, allowed: ["radius", "background"]) else { return nil }
            radiusValue = fields["radius"]
            background = log.color(fields["background"], at: path.appending("background"))
            if radiusValue == nil {
                log.add(path.appending("radius"), "is required: pixels, a list of 1–4 corner radii, or \"max\"")
                return nil
            }
        }
        let radiusPath = path.appending("radius")
        switch radiusValue {
        case .string("max")?:
            return RoundCorners(radius: .max, background: background)
        case .number?, .string?:
            return log.wholeNumber(radiusValue, at: radiusPath).map { RoundCorners(radius: .corners([$0]), background: background) }
        case .array(let list)?:
            let radii = list.enumerated().compactMap { i, v in log.wholeNumber(v, at: radiusPath.appending(i)) }
            guard radii.count == list.count else { return nil }
            return RoundCorners(radius: .corners(radii), background: background)
        default:
            log.add(radiusPath, "expected pixels, a list of 1–4 corner radii, or \"max\", got \(radiusValue?.typeDescription ?? "nothing")")
            return nil
        }
    }

    func readEffect(_ kind: Effect.Kind, _ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Step? {
        let amountField = EffectRules.amountField(of: kind)
        if kind == .replaceColor { return readReplaceColor(value, at: path, log: log) }
        if kind == .theme { return readTheme(value, at: path, log: log) }
        if kind == .recolor { return readRecolor(value, at: path, log: log) }
        if kind == .distort { return readDistort(value, at: path, log: log) }
        if kind == .tint, case .object(let members) = value, members.contains(where: { $0.key == "colors" || $0.key == "equalize" }) {
            return readTintGradient(value, at: path, log: log)
        }
        switch value {
        case .bool(true):
            return .effect(EffectRules.make(kind, amount: nil, color: nil))
        case .number where amountField != nil, .string where amountField != nil:
            return log.wholeNumber(value, at: path.appending(amountField!)).map { .effect(EffectRules.make(kind, amount: $0, color: nil)) }
        default:
            var allowed: [String] = []
            if let amountField { allowed.append(amountField) }
            if EffectRules.takesColor(kind) { allowed.append("color") }
            if EffectRules.takesRegion(kind) { allowed += ["x", "y", "width", "height"] }
            if kind == .cartoonify { allowed.append("reduction") }
            if kind == .vectorize { allowed += ["detail", "despeckle", "paths", "corners"] }
            if kind == .assistColorblind { allowed.append("xray") }
            if kind == .shadow || kind == .gradientFade { allowed += ["x", "y"] }
            if kind == .gradientFade { allowed += ["symmetric", "type"] }
            guard let fields = log.object(value, at: path, allowed: allowed) else { return nil }
            var amount: WholeNumber?
            if let amountField, let v = fields[amountField] {
                guard let n = log.wholeNumber(v, at: path.appending(amountField)) else { return nil }
                amount = n
            }
            var color: Color?
            if let c = fields["color"] {
                guard let parsed = log.color(c, at: path.appending("color")) else { return nil }
                color = parsed
            }
            var region: Region?
            if EffectRules.takesRegion(kind), ["x", "y", "width", "height"].contains(where: { fields[$0] != nil }) {
                guard let w = fields["width"], let h = fields["height"] else {
                    log.add(path, "a region needs width and height (x and y default to 0)")
                    return nil
                }
                guard let width = log.dimension(w, at: path.appending("width")), let height = log.dimension(h, at: path.appending("height")) else { return nil }
                let x = fields["x"].map { log.dimension($0, at: path.appending("x")) } ?? .pixels(0)
                let y = fields["y"].map { log.dimension($0, at: path.appending("y")) } ?? .pixels(0)
                guard let x, let y else { return nil }
                region = Region(x: x, y: y, width: width, height: height)
            }
            var effect = EffectRules.make(kind, amount: amount, color: color)
            if let x = fields["xray"] {
                guard let xray = log.bool(x, at: path.appending("xray")) else { return nil }
                effect = .assistColorblind(effect.amount ?? .value(10), xray: xray)
            }
            if let r = fields["reduction"] {
                var colors = CartoonColors.blackwhite
                if r != .string("bw") {
                    guard case .number = r, let n = log.int(r, at: path.appending("reduction")) else {
                        log.add(path.appending("reduction"), "expected a whole number (0 to 100) or \"bw\", got \(r.typeDescription)")
                        return nil
                    }
                    colors = .reduction(n)
                }
                effect = .cartoonify(effect.amount ?? .value(50), colors: colors)
            }
            if kind == .vectorize, ["detail", "despeckle", "paths", "corners"].contains(where: { fields[$0] != nil }) {
                var trace = VectorTrace()
                for key in ["detail", "despeckle"] {
                    guard let v = fields[key] else { continue }
                    guard let length = log.dimension(v, at: path.appending(key)) else { return nil }
                    if key == "detail" { trace.detail = length } else { trace.despeckle = length }
                }
                for key in ["paths", "corners"] {
                    guard let v = fields[key] else { continue }
                    guard let n = log.int(v, at: path.appending(key)) else { return nil }
                    if key == "paths" { trace.paths = n } else { trace.corners = n }
                }
                effect = .vectorize(effect.amount ?? .value(EffectRules.defaultAmount(of: .vectorize) ?? 10), trace: trace.normalized)
            }
            // The effect's `x` or `y` field: .some(nil) when absent, nil when present and invalid
            // (the log says why).
            func offset(_ name: String) -> Length?? {
                guard let value = fields[name] else { return .some(nil) }
                guard let length = log.dimension(value, at: path.appending(name)) else { return nil }
                return .some(length)
            }
            if case .gradientFade(let n, _, _, _) = effect {
                // "symmetric": true, or Cloudinary's type: "symmetric" or "symmetric_pad".
                var edges = fields["symmetric"].flatMap { log.bool($0, at: path.appending("symmetric")) } == true ? FadeEdges.symmetric : .one
                if let type = fields["type"] {
                    guard case .string(let text) = type, let parsed = FadeEdges(rawValue: text), parsed != .one else {
                        log.add(path.appending("type"), "expected \"symmetric\" or \"symmetric_pad\", got \(type.typeDescription)")
                        return nil
                    }
                    edges = parsed
                }
                guard let x = offset("x"), let y = offset("y") else { return nil }
                effect = .gradientFade(n, edges: edges, x: x, y: y)
            }
            if case .shadow(let n, let color, let x, let y) = effect {
                guard let newX = offset("x"), let newY = offset("y") else { return nil }
                effect = .shadow(n, color: color, x: newX ?? x, y: newY ?? y)
            }
            return .effect(EffectRules.with(effect, region: region))
        }
    }

    /// `"blurred"`, `{"blurred": {"intensity": 400, "brightness": 15}}`, `"auto"` or
    /// `{"auto": "predominant"}`.
    func readPadFill(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> PadFill? {
        if value == .string("blurred") { return .blurred(intensity: PadFill.blurredDefaults.intensity, brightness: PadFill.blurredDefaults.brightness) }
        if value == .string("auto") { return .auto(.border) }
        guard let fields = log.object(value, at: path, allowed: ["blurred", "auto", "gradient", "palette"]) else { return nil }
        if let gradient = fields["gradient"] { return readAutoGradient(gradient, at: path.appending("gradient"), log: log) }
        if let mode = fields["auto"] {
            var palette: [Color] = []
            if let p = fields["palette"] {
                guard let read = readPalette(p, at: path.appending("palette"), log: log) else { return nil }
                palette = read
            }
            if case .string(let text) = mode, var gradient = AutoGradient.parse(mode: text) {
                gradient.palette = palette
                return .gradient(gradient)
            }
            guard case .string(let text) = mode, let parsed = AutoPadColor(rawValue: text) else {
                log.add(path.appending("auto"), "expected one of " + AutoPadColor.allCases.map { Quoted($0.rawValue).description }.joined(separator: ", ") + " (or a gradient mode: \"border_gradient\"...; {\"gradient\": {...}} for its colours and direction), got \(mode.typeDescription)")
                return nil
            }
            return .auto(parsed, palette: palette)
        }
        guard let blurred = fields["blurred"], let inner = log.object(blurred, at: path.appending("blurred"), allowed: ["intensity", "brightness"]) else {
            log.add(path, "expected \"blurred\", \"auto\", {\"blurred\": {...}}, {\"auto\": <mode>} or {\"gradient\": {...}}")
            return nil
        }
        let intensity = inner["intensity"].map { log.int($0, at: path.appending("blurred").appending("intensity")) } ?? PadFill.blurredDefaults.intensity
        let brightness = inner["brightness"].map { log.int($0, at: path.appending("blurred").appending("brightness")) } ?? PadFill.blurredDefaults.brightness
        guard let intensity, let brightness else { return nil }
        return .blurred(intensity: intensity, brightness: brightness)
    }

    /// `{"tint": {"amount": 80, "colors": ["red", "blue", "yellow"], "positions": [0, 40, 100], "equalize": true}}`:
    /// a tint through several colours, or one on the equalised luminance (TintGradient).
    func readTintGradient(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Step? {
        guard let fields = log.object(value, at: path, allowed: ["amount", "colors", "positions", "equalize"]) else { return nil }
        var amount = EffectRules.defaultAmount(of: .tint).map(WholeNumber.value) ?? .value(60)
        if let v = fields["amount"] {
            guard let n = log.wholeNumber(v, at: path.appending("amount")) else { return nil }
            amount = n
        }
        let equalize = fields["equalize"].map { log.bool($0, at: path.appending("equalize")) } ?? false
        guard let equalize else { return nil }
        var colors: [Color] = [EffectRules.tintDefaultColor]
        if let list = fields["colors"] {
            guard let items = log.array(list, at: path.appending("colors")) else { return nil }
            guard (1...TintGradient.maxColors).contains(items.count) else {
                log.add(path.appending("colors"), "must hold 1 to \(TintGradient.maxColors) colours, got \(items.count)")
                return nil
            }
            let parsed = items.enumerated().map { log.color($1, at: path.appending("colors").appending($0)) }
            guard parsed.allSatisfy({ $0 != nil }) else { return nil }
            colors = parsed.compactMap { $0 }
        }
        var positions: [Int?]?
        if let list = fields["positions"] {
            guard let items = log.array(list, at: path.appending("positions")) else { return nil }
            guard items.count == colors.count else {
                log.add(path.appending("positions"), "must hold one position per colour (\(colors.count)), got \(items.count)")
                return nil
            }
            let parsed = items.enumerated().map { $1 == .null ? Optional<Int>.none : log.int($1, at: path.appending("positions").appending($0)) }
            guard zip(items, parsed).allSatisfy({ $0 == .null || $1 != nil }) else { return nil }
            positions = parsed
        }
        let gradient = TintGradient(colors: colors, positions: positions, equalize: equalize)
        if let problem = gradient.positionProblem {
            log.add(path.appending("positions"), problem.reason)
            return nil
        }
        // One colour, no position, no equalize is the plain tint, which is what its string
        // (e_tint:60:red) reads back as: one step, one identity, whichever form wrote it.
        if colors.count == 1, !equalize, gradient.positions.allSatisfy({ $0 == nil }) {
            return .effect(EffectRules.make(.tint, amount: amount, color: colors[0]))
        }
        return .effect(.tintGradient(amount: amount, gradient: gradient))
    }

    /// `{"recolor": [9 or 16 numbers]}` or `{"recolor": {"matrix": [...]}}`, row by row.
    func readRecolor(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Step? {
        var list = value
        var listPath = path
        if case .object = value {
            guard let fields = log.object(value, at: path, allowed: ["matrix"]) else { return nil }
            listPath = path.appending("matrix")
            guard let m = fields["matrix"] else {
                log.add(listPath, "is required: 9 numbers (3x3, RGB) or 16 (4x4, RGBA), row by row")
                return nil
            }
            list = m
        }
        guard case .array(let items) = list else {
            log.add(listPath, "expected a list of 9 or 16 numbers, got \(list.typeDescription)")
            return nil
        }
        let numbers = items.enumerated().compactMap { i, v in log.double(v, at: listPath.appending(i)) }
        guard numbers.count == items.count else { return nil }
        return .effect(.recolor(numbers))
    }

    /// `{"replace_color": "orange"}` or `{"replace_color": {"to": "orange", "tolerance": 60, "from": "green"}}`.
    func readReplaceColor(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Step? {
        let tolerance = WholeNumber.value(EffectRules.defaultAmount(of: .replaceColor) ?? 50)
        if case .string = value {
            return log.color(value, at: path.appending("to")).map { .effect(.replaceColor(tolerance, to: $0, from: nil)) }
        }
        guard let fields = log.object(value, at: path, allowed: ["to", "tolerance", "from"]) else { return nil }
        guard let toValue = fields["to"] else {
            log.add(path.appending("to"), "is required: the colour to replace with")
            return nil
        }
        guard let to = log.color(toValue, at: path.appending("to")) else { return nil }
        var effect = Effect.replaceColor(tolerance, to: to, from: nil)
        if let t = fields["tolerance"] {
            guard let n = log.wholeNumber(t, at: path.appending("tolerance")) else { return nil }
            effect = .replaceColor(n, to: to, from: nil)
        }
        if let f = fields["from"] {
            guard let from = log.color(f, at: path.appending("from")) else { return nil }
            effect = EffectRules.with(effect, from: from)
        }
        return .effect(effect)
    }

    /// `{"theme": "black"}` or `{"theme": {"color": "black", "photosensitivity": 50}}`.
    func readTheme(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Step? {
        let sensitivity = WholeNumber.value(EffectRules.defaultAmount(of: .theme) ?? 100)
        func opaque(_ v: JSONValue, at p: JSONPath) -> Color? {
            guard let c = log.color(v, at: p) else { return nil }
            guard c.isOpaque else {
                log.add(p, "is the new background, an opaque colour")
                return nil
            }
            return c
        }
        if case .string = value {
            return opaque(value, at: path.appending("color")).map { .effect(.theme(sensitivity, color: $0)) }
        }
        guard let fields = log.object(value, at: path, allowed: ["color", "photosensitivity"]) else { return nil }
        guard let colorValue = fields["color"] else {
            log.add(path.appending("color"), "is required: the new background colour")
            return nil
        }
        guard let color = opaque(colorValue, at: path.appending("color")) else { return nil }
        var effect = Effect.theme(sensitivity, color: color)
        if let p = fields["photosensitivity"] {
            guard let n = log.wholeNumber(p, at: path.appending("photosensitivity")) else { return nil }
            effect = .theme(n, color: color)
        }
        return .effect(effect)
    }

    /// `"clip": true` or `{"evenOdd": true, "path": 2 | "Path 1"}`.
    func readClip(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> ClipSetting? {
        if case .bool(true) = value { return ClipSetting() }
        guard let fields = log.object(value, at: path, allowed: ["evenOdd", "path"]) else { return nil }
        var clip = ClipSetting()
        clip.evenOdd = log.bool(fields["evenOdd"], at: path.appending("evenOdd")) ?? false
        switch fields["path"] {
        case nil: break
        case .string(let name)? where !name.isEmpty: clip.name = name
        case .string?:
            log.add(path.appending("path"), "names a path: a non-empty name, or a number from 1")
            return nil
        case let p?:
            guard let n = log.int(p, at: path.appending("path")) else { return nil }
            guard n >= 1 else {
                log.add(path.appending("path"), "numbers a path from 1, got \(n)")
                return nil
            }
            clip.number = n
        }
        return clip
    }

    /// `{"layers": ["A", "B"]}`, `{"embedded": 2}` or `{"embedded": ["A"]}` (`pg_name:`, `pg_embedded:`).
    func readPSD(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> PSDSelection? {
        guard let fields = log.object(value, at: path, allowed: ["layers", "embedded"]) else { return nil }
        func names(_ value: JSONValue, at path: JSONPath) -> [String]? {
            guard case .array(let items) = value, !items.isEmpty,
                  case let names = items.compactMap({ if case .string(let s) = $0, !s.isEmpty { s } else { nil } }),
                  names.count == items.count else {
                log.add(path, "expected a list of layer names (non-empty strings)")
                return nil
            }
            return names
        }
        switch (fields["layers"], fields["embedded"]) {
        case (let layers?, nil): return names(layers, at: path.appending("layers")).map(PSDSelection.layers)
        case (nil, let embedded?):
            if case .array = embedded { return names(embedded, at: path.appending("embedded")).map(PSDSelection.embeddedNamed) }
            guard let n = log.int(embedded, at: path.appending("embedded")) else { return nil }
            guard n >= 1 else {
                log.add(path.appending("embedded"), "numbers a smart object from 1, got \(n)")
                return nil
            }
            return .embedded(n)
        default:
            log.add(path, "expected one of \"layers\" (names) or \"embedded\" (a number from 1, or names)")
            return nil
        }
    }

    func readTrim(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Trim? {
        switch value {
        case .bool(true): return Trim()
        case .number: return log.int(value, at: path.appending("tolerance")).map { Trim(tolerance: $0) }
        default:
            guard let fields = log.object(value, at: path, allowed: ["tolerance", "color"]) else { return nil }
            var trim = Trim()
            if let v = fields["tolerance"] {
                guard let n = log.int(v, at: path.appending("tolerance")) else { return nil }
                trim.tolerance = n
            }
            if let c = fields["color"] {
                guard let color = log.color(c, at: path.appending("color")) else { return nil }
                trim.color = color
            }
            return trim
        }
    }

    func readOverlay(_ value: JSONValue, at path: JSONPath, log: IssueCollector, depth: Int) -> Overlay? {
        guard let fields = log.object(value, at: path, allowed: Self.overlayKeys) else { return nil }
        if depth + 1 > limits.maxOverlayDepth {
            log.add(path, "overlays are nested more than \(limits.maxOverlayDepth) deep")
            return nil
        }
        var source: Overlay.Source?
        switch (fields["image"], fields["text"]) {
        case (let image?, nil):
            source = log.string(image, at: path.appending("image")).map(Overlay.Source.image)
        case (nil, let text?):
            source = readText(text, at: path.appending("text"), log: log).map(Overlay.Source.text)
        case (_?, _?):
            log.add(path.appending("text"), "cannot be combined with image; an overlay is one or the other")
        case (nil, nil):
            log.add(path, "needs an image (a source) or a text")
        }
        let chain = fields["chain"].map { readChain($0, at: path.appending("chain"), log: log, depth: depth + 1) } ?? []
        let gravity = log.gravity(fields["gravity"], at: path.appending("gravity"))
        let x = log.dimension(fields["x"], at: path.appending("x"))
        let y = log.dimension(fields["y"], at: path.appending("y"))
        let regionRelative = fields["regionRelative"].flatMap { log.bool($0, at: path.appending("regionRelative")) } ?? false
        let underlay = fields["underlay"].flatMap { log.bool($0, at: path.appending("underlay")) } ?? false
        var blend: BlendMode?
        if let b = fields["blend"] {
            guard case .string(let name) = b, let mode = BlendMode(rawValue: name) else {
                log.add(path.appending("blend"), "expected one of \(BlendMode.allCases.map { Quoted($0.rawValue).description }.joined(separator: ", ")), got \(b.typeDescription)")
                return nil
            }
            if underlay {
                log.add(path.appending("blend"), "applies to overlays; an underlay is drawn beneath the image")
                return nil
            }
            blend = mode
        }
        var level: Int?
        if let l = fields["blendLevel"] {
            guard blend == .antiRemoval else {
                log.add(path.appending("blendLevel"), "is anti_removal's level; give it with \"blend\": \"anti_removal\"")
                return nil
            }
            guard let n = log.int(l, at: path.appending("blendLevel")) else { return nil }
            guard (1...100).contains(n) else {
                log.add(path.appending("blendLevel"), "must be between 1 and 100, got \(n)")
                return nil
            }
            level = n == BlendMode.defaultAntiRemovalLevel ? nil : n
        }
        let tiled = fields["tiled"].flatMap { log.bool($0, at: path.appending("tiled")) } ?? false
        return source.map {
            var overlay = Overlay(source: $0, chain: chain, gravity: gravity, x: x, y: y, regionRelative: regionRelative, underlay: underlay, blend: blend)
            overlay.blendLevel = level
            overlay.tiled = tiled
            return overlay
        }
    }

    func readText(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> TextLayer? {
        if case .string(let s) = value { return TextLayer(text: s) }
        guard let fields = log.object(value, at: path, allowed: Self.textKeys) else { return nil }
        guard let textValue = fields["text"], let parts = readTextParts(textValue, at: path.appending("text"), log: log) else {
            if fields["text"] == nil { log.add(path.appending("text"), "is required") }
            return nil
        }
        var layer = TextLayer(text: "")
        layer.parts = parts
        if let font = log.string(fields["font"], at: path.appending("font")) { layer.font = font }
        if let size = log.int(fields["size"], at: path.appending("size")) { layer.size = size }
        if let bold = log.bool(fields["bold"], at: path.appending("bold")) { layer.bold = bold }
        if let italic = log.bool(fields["italic"], at: path.appending("italic")) { layer.italic = italic }
        if let color = log.color(fields["color"], at: path.appending("color")) { layer.color = color }
        if let width = log.int(fields["width"], at: path.appending("width")) { layer.width = width }
        if let underline = log.bool(fields["underline"], at: path.appending("underline")) { layer.underline = underline }
        if let strike = log.bool(fields["strikethrough"], at: path.appending("strikethrough")) { layer.strikethrough = strike }
        layer.letterSpacing = log.int(fields["letterSpacing"], at: path.appending("letterSpacing"))
        layer.lineSpacing = log.int(fields["lineSpacing"], at: path.appending("lineSpacing"))
        if let a = fields["alignment"] {
            layer.alignment = log.keyword(a, at: path.appending("alignment"), what: "alignment",
                                          spellings: TextAlignment.allCases.map(\.rawValue), parse: TextAlignment.init(rawValue:))
        }
        if let s = fields["stroke"], let stroke = log.object(s, at: path.appending("stroke"), allowed: ["width", "color"]) {
            let width = log.int(stroke["width"], at: path.appending("stroke").appending("width"))
            let color = log.color(stroke["color"], at: path.appending("stroke").appending("color"))
            for key in ["width", "color"] where stroke[key] == nil { log.add(path.appending("stroke").appending(key), "is required") }
            if let width, let color { layer.stroke = TextStroke(width: width, color: color) }
        }
        if let antialias = log.bool(fields["antialias"], at: path.appending("antialias")) { layer.antialias = antialias }
        if let noTrim = log.bool(fields["noTrim"], at: path.appending("noTrim")) { layer.noTrim = noTrim }
        return layer
    }

    func readConstraints(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> ImageConstraints? {
        guard let fields = log.object(value, at: path, allowed: Self.constraintKeys) else { return nil }
        var c = ImageConstraints()
        c.minWidth = log.int(fields["minWidth"], at: path.appending("minWidth"))
        c.maxWidth = log.int(fields["maxWidth"], at: path.appending("maxWidth"))
        c.minHeight = log.int(fields["minHeight"], at: path.appending("minHeight"))
        c.maxHeight = log.int(fields["maxHeight"], at: path.appending("maxHeight"))
        c.maxPixels = log.int(fields["maxPixels"], at: path.appending("maxPixels"))
        if let list = log.array(fields["formats"], at: path.appending("formats")) {
            c.formats = list.enumerated().compactMap { i, v in
                log.keyword(v, at: path.appending("formats").appending(i), what: "image format",
                            spellings: ImageFormat.allCases.map(\.rawValue), parse: ImageFormat.parse)
            }
        }
        return c
    }
}

enum QualityText {
    /// `80`, `auto`, `auto:best|good|eco|low`.
    static func parse(_ text: String) -> Quality? {
        if text == "auto" { return .auto(.good) }
        if text.hasPrefix("auto:"), let level = AutoQuality(rawValue: String(text.dropFirst(5))) { return .auto(level) }
        if text.allSatisfy({ $0.isASCII && $0.isNumber }), text.count <= 3, let value = Int(text) { return .value(value) }
        return nil
    }
}
