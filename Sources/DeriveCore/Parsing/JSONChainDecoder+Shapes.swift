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
}
