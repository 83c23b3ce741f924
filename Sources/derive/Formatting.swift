import DeriveLanguage
import DeriveJobs
import DeriveTerminal
import Foundation

/// `30d`, `12h`, `90m`, `45s` or plain seconds.
func parseDuration(_ text: String) -> Double? {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
    guard let last = text.last else { return nil }
    if let unit = units[last], let value = Double(text.dropLast()), value >= 0 { return value * unit }
    if let value = Double(text), value >= 0 { return value }
    return nil
}

func isoTime(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
}

/// `3s`, `4m`, `2h05m`, `3d` (DeriveJobs', shared with the dashboard).
func duration(_ seconds: Double) -> String { humanDuration(seconds) }

/// Columns padded to their widest cell; on a colour terminal, job states in their colours.
func printTable(_ rows: [[String]]) {
    let style = Style(Terminal.standardOutput)
    let widths = rows.reduce(into: [Int]()) { widths, row in
        for (index, cell) in row.enumerated() {
            if index < widths.count { widths[index] = max(widths[index], cell.count) } else { widths.append(cell.count) }
        }
    }
    for row in rows {
        print(row.enumerated().map { index, cell in
            let padding = index == row.count - 1 ? "" : String(repeating: " ", count: max(0, widths[index] - cell.count))
            return style.paint(cell, stateColour(cell)) + padding
        }.joined(separator: "  "))
    }
}

/// A job's state as a person reads it at a glance: failures red, completions green, running
/// cyan, waiting yellow.
func stateColour(_ text: String) -> Style.Colour? {
    switch JobState(rawValue: text) {
    case .failed?, .cancelled?: .red
    case .completed?: .green
    case .running?: .cyan
    case .available?, .scheduled?: .yellow
    case nil: nil
    }
}

extension JSONValue {
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
