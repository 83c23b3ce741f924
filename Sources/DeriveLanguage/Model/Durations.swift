import Foundation

/// Ages and durations for people, as `derive status` and the dashboard show them: `3s`,
/// `4m`, `2h05m`, `3d`.
public func humanDuration(_ seconds: Double) -> String {
    let s = Int(max(0, seconds))
    if s < 60 { return "\(s)s" }
    if s < 3600 { return "\(s / 60)m" }
    if s < 86400 { return "\(s / 3600)h\(String(format: "%02d", s % 3600 / 60))m" }
    return "\(s / 86400)d"
}
