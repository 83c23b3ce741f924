extension JSONChainDecoder {
    /// `{"distort": {"corners": [x1, y1, x2, y2, x3, y3, x4, y4]}}` (pixels, fractions or
    /// percentage strings) or `{"distort": {"arc": <degrees>}}`.
    func readDistort(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> Step? {
        guard let fields = log.object(value, at: path, allowed: ["corners", "arc"]) else { return nil }
        switch (fields["corners"], fields["arc"]) {
        case (nil, let arc?):
            return log.int(arc, at: path.appending("arc")).map { .effect(.distort(.arc($0))) }
        case (let corners?, nil):
            guard case .array(let list) = corners else {
                log.add(path.appending("corners"), "expected eight numbers (x1, y1, ..., x4, y4: the top-left, top-right, bottom-right and bottom-left corners), got \(corners.typeDescription)")
                return nil
            }
            let lengths = list.enumerated().compactMap { i, v in log.dimension(v, at: path.appending("corners").appending(i)) }
            guard lengths.count == list.count else { return nil }
            return .effect(.distort(.corners(lengths)))
        default:
            log.add(path, "expected \"corners\" (eight numbers) or \"arc\" (degrees), one of them")
            return nil
        }
    }

    /// `{"gradient": {"from": "border", "contrast": true, "colors": 4, "direction": "vertical"}}`,
    /// every field optional (border, false, 2, horizontal).
    func readAutoGradient(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> PadFill? {
        guard let fields = log.object(value, at: path, allowed: ["from", "contrast", "colors", "direction", "palette"]) else { return nil }
        var gradient = AutoGradient(source: .border)
        if let from = fields["from"] {
            guard case .string(let text) = from, let source = AutoGradient.Source(rawValue: text) else {
                log.add(path.appending("from"), "expected \"border\" or \"predominant\", got \(from.typeDescription)")
                return nil
            }
            gradient.source = source
        }
        if let contrast = fields["contrast"] {
            guard let flag = log.bool(contrast, at: path.appending("contrast")) else { return nil }
            gradient.contrast = flag
        }
        if let colors = fields["colors"] {
            guard let n = log.int(colors, at: path.appending("colors")) else { return nil }
            guard AutoGradient.colorCounts.contains(n) else {
                log.add(path.appending("colors"), "must be 2 or 4, got \(n)")
                return nil
            }
            gradient.colors = n
        }
        if let direction = fields["direction"] {
            guard case .string(let text) = direction, let parsed = GradientDirection(rawValue: text) else {
                log.add(path.appending("direction"), "expected one of " + GradientDirection.allCases.map { Quoted($0.rawValue).description }.joined(separator: ", ") + ", got \(direction.typeDescription)")
                return nil
            }
            gradient.direction = parsed
        }
        if let p = fields["palette"] {
            guard let palette = readPalette(p, at: path.appending("palette"), log: log) else { return nil }
            gradient.palette = palette
        }
        return .gradient(gradient)
    }

    /// `["#ff0000", "green"]`: b_auto's palette, 1 to 16 colours.
    func readPalette(_ value: JSONValue, at path: JSONPath, log: IssueCollector) -> [Color]? {
        guard case .array(let items) = value, (1...16).contains(items.count) else {
            log.add(path, "expected an array of 1 to 16 colours, got \(value.typeDescription)")
            return nil
        }
        var colors: [Color] = []
        for (i, item) in items.enumerated() {
            guard case .string(let text) = item, let color = Color.parse(text) else {
                log.add(path.appending(i), "expected a colour (a CSS name or #rrggbb), got \(item.typeDescription)")
                return nil
            }
            colors.append(color)
        }
        return colors
    }
}
