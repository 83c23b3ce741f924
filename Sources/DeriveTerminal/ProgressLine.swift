import Foundation

/// Where a long command is, as one line: what it counts, how many are done of how many, the
/// rate, the time left, and counts of its own (failed, queued, waiting).
public struct ProgressState: Sendable, Equatable {
    /// A count beside the main one, coloured by what it means.
    public struct Count: Sendable, Equatable {
        public var label: String
        public var value: Int
        public var colour: Style.Colour?
        /// Shown only once it is above zero (failures).
        public var hiddenAtZero: Bool

        public init(_ label: String, _ value: Int = 0, colour: Style.Colour? = nil, hiddenAtZero: Bool = false) {
            self.label = label
            self.value = value
            self.colour = colour
            self.hiddenAtZero = hiddenAtZero
        }
    }

    /// What the command is doing, first on the line: `deriving`, `submitting`, `pruning`.
    public var label: String
    /// What it counts, plural: `sources`, `jobs`, `assets`.
    public var unit: String
    public var done: Int
    /// Nil when the end is not known (a worker draining a queue).
    public var total: Int?
    public var counts: [Count]
    /// What is being worked on now (a file name), last on the line.
    public var current: String?

    public init(label: String, unit: String, done: Int = 0, total: Int? = nil, counts: [Count] = [], current: String? = nil) {
        self.label = label
        self.unit = unit
        self.done = done
        self.total = total
        self.counts = counts
        self.current = current
    }

    public subscript(count label: String) -> Int {
        get { counts.first { $0.label == label }?.value ?? 0 }
        set {
            if let index = counts.firstIndex(where: { $0.label == label }) { counts[index].value = newValue } else { counts.append(Count(label, newValue)) }
        }
    }
}

/// Draws a `ProgressState` as the line a person watches, and as the line left when it ends.
public enum ProgressLine {
    /// The line while the work runs, no wider than `width - 1` columns (a line as wide as the
    /// terminal would wrap, and the next redraw would then leave it behind):
    /// `deriving [=========>          ]  87/200 sources  4.1/s  0:21 left  2 failed  IMG_0087.jpg`.
    public static func running(_ state: ProgressState, elapsed: Double, width: Int, style: Style = .plain) -> String {
        var parts: [String] = []
        let rate = elapsed > 0 ? Double(state.done) / elapsed : 0
        if let total = state.total {
            let barWidth = max(10, min(30, width / 5))
            parts.append(state.label + " " + bar(done: state.done, total: total, width: barWidth))
            parts.append("\(state.done)/\(total) \(state.unit)")
            parts.append(Units.rate(rate))
            if state.done > 0, state.done < total, rate > 0 {
                parts.append(clock(Double(total - state.done) / rate) + " left")
            } else {
                parts.append(clock(elapsed))
            }
        } else {
            parts.append(state.label)
            parts.append("\(state.done) \(state.unit)")
            parts.append(Units.rate(rate))
            parts.append(clock(elapsed))
        }
        parts += counts(state, style: style)
        var line = parts.joined(separator: "  ")
        if let current = state.current, !current.isEmpty {
            let room = width - 1 - line.visibleWidth - 2
            if room >= 8 { line += "  " + style.quiet(current.truncatedInMiddle(to: room)) }
        }
        return fitted(line, to: width - 1)
    }

    /// The line left once the work ended: what was done, in how long, at what rate, and the
    /// other counts: `derived 200/200 sources in 48.2 s (4.1/s), 2 failed`.
    public static func finished(_ state: ProgressState, verb: String, elapsed: Double, style: Style = .plain) -> String {
        let rate = elapsed > 0 ? Double(state.done) / elapsed : 0
        let amount = state.total.map { $0 == state.done ? "\(state.done) \(state.unit)" : "\(state.done)/\($0) \(state.unit)" }
            ?? "\(state.done) \(state.unit)"
        let others = counts(state, style: style)
        return "\(verb) \(amount) in \(Units.seconds(elapsed)) (\(Units.rate(rate)))" + (others.isEmpty ? "" : ", " + others.joined(separator: ", "))
    }

    /// `[=========>          ]`, `width` columns in all.
    static func bar(done: Int, total: Int, width: Int) -> String {
        let inner = max(1, width - 2)
        let filled = total <= 0 ? inner : min(inner, inner * max(0, done) / total)
        let head = filled < inner && filled > 0 ? ">" : ""
        let body = String(repeating: "=", count: filled - head.count)
        return "[" + body + head + String(repeating: " ", count: inner - filled) + "]"
    }

    /// `0:07`, `4:05`, `1:02:03`: a time that changes every second, at a fixed width.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(max(0, seconds).rounded())
        if whole >= 3600 { return String(format: "%d:%02d:%02d", whole / 3600, whole % 3600 / 60, whole % 60) }
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }

    static func counts(_ state: ProgressState, style: Style) -> [String] {
        state.counts.filter { !$0.hiddenAtZero || $0.value > 0 }.map { style.paint("\($0.value) \($0.label)", $0.value > 0 ? $0.colour : nil) }
    }

    /// Cut to `width` visible columns, keeping colour codes whole and closing an open colour.
    static func fitted(_ line: String, to width: Int) -> String {
        guard line.visibleWidth > width else { return line }
        var result = "", visible = 0, inEscape = false, coloured = false
        for character in line {
            if inEscape {
                result.append(character)
                if let ascii = character.asciiValue, (0x40...0x7E).contains(ascii), character != "[" { inEscape = false }
                continue
            }
            if character == "\u{1B}" {
                inEscape = true
                coloured = true
                result.append(character)
                continue
            }
            guard visible < width else { break }
            result.append(character)
            visible += 1
        }
        return coloured ? result + "\u{1B}[0m" : result
    }
}
