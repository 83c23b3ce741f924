import Foundation

/// Numbers as a person reads them at a glance.
public enum Units {
    /// `812 B`, `48.3 kB`, `1.2 MB`, `3.40 GB` (decimal units, as file managers show them).
    public static func bytes(_ count: Int) -> String {
        let value = Double(count)
        switch abs(value) {
        case ..<1000: return "\(count) B"
        case ..<1e6: return decimal(value / 1e3) + " kB"
        case ..<1e9: return decimal(value / 1e6) + " MB"
        default: return decimal(value / 1e9) + " GB"
        }
    }

    /// Three significant figures at most: `4.27`, `48.3`, `812`.
    static func decimal(_ value: Double) -> String {
        switch abs(value) {
        case ..<10: String(format: "%.2f", value)
        case ..<100: String(format: "%.1f", value)
        default: String(format: "%.0f", value)
        }
    }

    /// A time taken or left: `0.42 s`, `8.1 s`, `1m05s`, `2h04m`.
    public static func seconds(_ seconds: Double) -> String {
        let value = max(0, seconds)
        if value < 10 { return String(format: "%.2f s", value) }
        if value < 60 { return String(format: "%.1f s", value) }
        let whole = Int(value.rounded())
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, whole % 3600 / 60)
    }

    /// A rate per second: `0.31/s`, `4.2/s`, `37/s`, `1200/s`.
    public static func rate(_ perSecond: Double) -> String {
        guard perSecond.isFinite, perSecond > 0 else { return "0/s" }
        switch perSecond {
        case ..<1: return String(format: "%.2f/s", perSecond)
        case ..<10: return String(format: "%.1f/s", perSecond)
        default: return String(format: "%.0f/s", perSecond)
        }
    }

    /// `1 source`, `2 sources`.
    public static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }
}
