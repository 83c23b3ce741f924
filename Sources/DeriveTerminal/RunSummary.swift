import Foundation

/// What `derive run` tells a person at a terminal when it is done: each output's name, size in
/// pixels, format and quality (with `q_auto`'s choice), bytes and where it was written; then
/// the totals and the time; then each failure on a line of its own with its classified error.
/// A run too long for one screen is told per output name instead (how many files, their sizes
/// and qualities, the bytes, the folder pattern they went to); `--json` has every detail.
public struct RunSummary: Sendable {
    public struct Output: Sendable, Equatable {
        public var name: String
        public var width: Int
        public var height: Int
        public var format: String
        /// `80`, `auto:good → 72`, `lossless`.
        public var quality: String
        public var bytes: Int
        public var location: String
        /// Found from an earlier run rather than derived again.
        public var reused: Bool

        public init(name: String, width: Int, height: Int, format: String, quality: String, bytes: Int, location: String, reused: Bool = false) {
            self.name = name
            self.width = width
            self.height = height
            self.format = format
            self.quality = quality
            self.bytes = bytes
            self.location = location
            self.reused = reused
        }
    }

    public struct Source: Sendable, Equatable {
        public var name: String
        public var outputs: [Output]

        public init(name: String, outputs: [Output]) {
            self.name = name
            self.outputs = outputs
        }
    }

    public struct Failure: Sendable, Equatable {
        public var source: String
        /// The classified error: `unsupported_format`, `fetch_failed`...
        public var code: String
        public var detail: String

        public init(source: String, code: String, detail: String) {
            self.source = source
            self.code = code
            self.detail = detail
        }
    }

    public var sources: [Source]
    public var failures: [Failure]
    public var seconds: Double

    public init(sources: [Source], failures: [Failure], seconds: Double) {
        self.sources = sources
        self.failures = failures
        self.seconds = seconds
    }

    /// Failures listed one per line before the rest are counted.
    static let failuresShown = 8

    /// The summary's lines for a terminal `width` columns wide and `height` lines high (nil: as
    /// long as it takes): the table of every output when it fits, else one row per output name.
    public func lines(width: Int, height: Int?, style: Style = .plain) -> [String] {
        var tail: [String] = []
        let outputs = sources.flatMap(\.outputs)
        let bytes = outputs.reduce(0) { $0 + $1.bytes }
        let reused = outputs.count { $0.reused }
        let rate = seconds > 0 ? Double(sources.count + failures.count) / seconds : 0
        var totals = "\(Units.count(sources.count, "source")), \(Units.count(outputs.count, "output")) (\(Units.bytes(bytes)))"
        if reused > 0 { totals += ", \(reused) reused" }
        totals += " in \(Units.seconds(seconds))"
        if sources.count + failures.count > 1 { totals += " (\(Units.rate(rate)))" }
        if !failures.isEmpty { totals += ", " + style.failure("\(failures.count) failed") }
        tail.append(totals)
        for failure in failures.prefix(Self.failuresShown) {
            let line = "failed  \(failure.source)  \(failure.code): \(failure.detail)"
            tail.append(style.failure(line.truncated(to: max(20, width - 1))))
        }
        if failures.count > Self.failuresShown {
            tail.append(style.failure("… and \(failures.count - Self.failuresShown) more failures (every one is in --json's report)"))
        }
        if outputs.isEmpty { return tail }
        let full = table(width: width, style: style)
        // The table, a blank line, the totals, and the shell's prompt after them.
        if let height, full.count + 1 + tail.count + 1 > height {
            return byOutputName(width: width, style: style) + [""] + tail
        }
        return full + [""] + tail
    }

    /// Every output, its source named on its first row.
    func table(width: Int, style: Style) -> [String] {
        var table = TextTable([TextTable.Column("source", shrinks: false), TextTable.Column("output"), TextTable.Column("size", .right),
                               TextTable.Column("format"), TextTable.Column("quality"), TextTable.Column("bytes", .right),
                               TextTable.Column("written to", shrinks: true)])
        let nameWidth = max(12, min(32, width / 5))
        for source in sources {
            for (index, output) in source.outputs.enumerated() {
                table.add([TextTable.Cell(index == 0 ? Self.shortName(source.name, to: nameWidth) : ""), TextTable.Cell(output.name),
                           TextTable.Cell("\(output.width)x\(output.height)"), TextTable.Cell(output.format), TextTable.Cell(output.quality),
                           TextTable.Cell(Units.bytes(output.bytes)),
                           TextTable.Cell(output.location + (output.reused ? " (reused)" : ""), output.reused ? .dim : nil)])
            }
        }
        return table.lines(width: width - 1, style: style)
    }

    /// A source as typed, or when that is too long its file name (what tells sources apart):
    /// `…/IMG_0412.jpg`.
    public static func shortName(_ name: String, to width: Int) -> String {
        guard name.count > width else { return name }
        if let slash = name.lastIndex(of: "/"), name.index(after: slash) < name.endIndex {
            let file = String(name[name.index(after: slash)...])
            return file.count + 2 <= width ? "…/" + file : file.truncatedInMiddle(to: width)
        }
        return name.truncatedInMiddle(to: width)
    }

    /// One row per output name across every source: what a long run made, on one screen.
    func byOutputName(width: Int, style: Style) -> [String] {
        var order: [String] = []
        var groups: [String: [Output]] = [:]
        for output in sources.flatMap(\.outputs) {
            if groups[output.name] == nil { order.append(output.name) }
            groups[output.name, default: []].append(output)
        }
        var table = TextTable([TextTable.Column("output"), TextTable.Column("files", .right), TextTable.Column("size", .right),
                               TextTable.Column("format"), TextTable.Column("quality"), TextTable.Column("bytes", .right),
                               TextTable.Column("written to", shrinks: true)])
        for name in order {
            let outputs = groups[name]!
            let total = outputs.reduce(0) { $0 + $1.bytes }
            table.add([TextTable.Cell(name), TextTable.Cell("\(outputs.count)"), TextTable.Cell(Self.sizes(outputs)),
                       TextTable.Cell(Self.distinct(outputs.map(\.format))), TextTable.Cell(Self.qualities(outputs.map(\.quality))),
                       TextTable.Cell(Units.bytes(total)), TextTable.Cell(Self.pattern(outputs.map(\.location)))])
        }
        return table.lines(width: width - 1, style: style)
    }

    /// `400x400`, or the smallest and the largest: `400x225…400x600`.
    static func sizes(_ outputs: [Output]) -> String {
        let sizes = outputs.map { ($0.width, $0.height) }
        guard let smallest = sizes.min(by: { $0.0 * $0.1 < $1.0 * $1.1 }), let largest = sizes.max(by: { $0.0 * $0.1 < $1.0 * $1.1 }) else { return "" }
        if smallest == largest, sizes.allSatisfy({ $0 == smallest }) { return "\(smallest.0)x\(smallest.1)" }
        return "\(smallest.0)x\(smallest.1)…\(largest.0)x\(largest.1)"
    }

    /// The values once each, in their first order: `webp`, `webp, avif`.
    static func distinct(_ values: [String]) -> String {
        var seen: [String] = []
        for value in values where !seen.contains(value) { seen.append(value) }
        return seen.count <= 3 ? seen.joined(separator: ", ") : seen.prefix(2).joined(separator: ", ") + ", …"
    }

    /// `80`; `auto:good → 64…78` for a `q_auto` output whose choices differ.
    static func qualities(_ values: [String]) -> String {
        let prefixes = values.map { $0.components(separatedBy: " → ") }
        if prefixes.allSatisfy({ $0.count == 2 }), Set(prefixes.map { $0[0] }).count == 1 {
            let chosen = prefixes.compactMap { Int($0[1]) }
            if chosen.count == values.count, let low = chosen.min(), let high = chosen.max() {
                return prefixes[0][0] + " → " + (low == high ? "\(low)" : "\(low)…\(high)")
            }
        }
        return distinct(values)
    }

    /// Where a group of outputs went, as one pattern: `derived/*/thumb.webp`, the parts that
    /// differ as `*`; paths of different depths keep their common folder: `derived/…`.
    static func pattern(_ locations: [String]) -> String {
        guard let first = locations.first else { return "" }
        let split = locations.map { $0.split(separator: "/", omittingEmptySubsequences: false) }
        let parts = split[0].count
        if split.allSatisfy({ $0.count == parts }) {
            return (0..<parts).map { index in
                split.allSatisfy { $0[index] == split[0][index] } ? String(split[0][index]) : "*"
            }.joined(separator: "/")
        }
        var common = split[0]
        for path in split.dropFirst() {
            common = Array(zip(common, path).prefix { $0 == $1 }.map(\.0))
        }
        return common.isEmpty ? first + " …" : common.joined(separator: "/") + "/…"
    }

    /// `path` relative to `folder` when it lies inside it (what a person typed), else as it is.
    public static func relative(_ path: String, to folder: String) -> String {
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
    }
}
