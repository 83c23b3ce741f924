import DeriveLanguage
import Foundation

/// A cron expression in a time zone: five fields (minute, hour, day of month, month, day of
/// week), or six with a leading seconds field, or a macro (`@hourly`, `@daily`...).
///
/// Each field is `*`, a value, a range `a-b`, a step `*/n` or `a-b/n`, or a comma list of
/// these; months and weekdays may be named (`jan`, `mon`); Sunday is 0 or 7. As in Vixie cron,
/// when both day fields are restricted a day matches either. Times are local to the time zone:
/// a local time skipped by a daylight-saving jump fires at the same offset after it, and one
/// repeated fires once, at its first occurrence.
public struct CronExpression: Sendable, Hashable, CustomStringConvertible {
    public let text: String
    public let timeZone: TimeZone
    let seconds: [Int]
    let minutes: [Int]
    let hours: [Int]
    let daysOfMonth: Set<Int>
    let months: Set<Int>
    let daysOfWeek: Set<Int>
    let dayOfMonthRestricted: Bool
    let dayOfWeekRestricted: Bool

    public var description: String { "\(text) (\(timeZone.identifier))" }

    static let macros = [
        "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
        "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
    ]
    static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    public init(_ text: String, timeZone: String = "UTC") throws(ValidationError) {
        guard let zone = TimeZone(identifier: timeZone) else {
            throw ValidationError(location: "timezone", reason: "\(Quoted(timeZone)) is not a time zone (use a name such as Europe/Paris or UTC)")
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let expanded = Self.macros[trimmed.lowercased()] ?? trimmed
        var fields = expanded.split(whereSeparator: \.isWhitespace).map { String($0).lowercased() }
        guard fields.count == 5 || fields.count == 6 else {
            throw ValidationError(location: "cron", reason: "has \(fields.count) fields; a cron expression has five (minute hour day month weekday), "
                                      + "six with seconds first, or is a macro such as @daily")
        }
        if fields.count == 5 { fields.insert("0", at: 0) }
        self.text = trimmed
        self.timeZone = zone
        seconds = try Self.field(fields[0], "seconds", 0...59).sorted()
        minutes = try Self.field(fields[1], "minute", 0...59).sorted()
        hours = try Self.field(fields[2], "hour", 0...23).sorted()
        daysOfMonth = try Self.field(fields[3], "day of month", 1...31)
        months = try Self.field(fields[4], "month", 1...12, names: Self.monthNames, firstName: 1)
        let weekdays = try Self.field(fields[5], "day of week", 0...7, names: Self.dayNames, firstName: 0)
        daysOfWeek = Set(weekdays.map { $0 % 7 })
        dayOfMonthRestricted = !fields[3].hasPrefix("*")
        dayOfWeekRestricted = !fields[5].hasPrefix("*")
    }

    /// One field's values.
    static func field(_ text: String, _ name: String, _ range: ClosedRange<Int>, names: [String] = [], firstName: Int = 0) throws(ValidationError) -> Set<Int> {
        func value(_ token: Substring) throws(ValidationError) -> Int {
            if let index = names.firstIndex(of: String(token)) { return index + firstName }
            guard let number = Int(token), range.contains(number) else {
                throw ValidationError(location: "cron", reason: "\(name) \(Quoted(String(token))) is not in \(range.lowerBound)-\(range.upperBound)"
                                          + (names.isEmpty ? "" : " or a name (\(names.prefix(3).joined(separator: ", "))...)"))
            }
            return number
        }
        var values: Set<Int> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "/", omittingEmptySubsequences: false)
            guard pieces.count <= 2, !pieces[0].isEmpty else { throw ValidationError(location: "cron", reason: "\(name) \(Quoted(String(part))) is malformed") }
            var step = 1
            if pieces.count == 2 {
                guard let parsed = Int(pieces[1]), parsed > 0 else {
                    throw ValidationError(location: "cron", reason: "\(name) step \(Quoted(String(pieces[1]))) must be a number above 0")
                }
                step = parsed
            }
            let span: ClosedRange<Int>
            if pieces[0] == "*" {
                span = range
            } else if let dash = pieces[0].firstIndex(of: "-") {
                let low = try value(pieces[0][..<dash]), high = try value(pieces[0][pieces[0].index(after: dash)...])
                guard low <= high else { throw ValidationError(location: "cron", reason: "\(name) range \(Quoted(String(pieces[0]))) runs backwards") }
                span = low...high
            } else {
                let start = try value(pieces[0])
                span = start...(pieces.count == 2 ? range.upperBound : start)
            }
            values.formUnion(stride(from: span.lowerBound, through: span.upperBound, by: step))
        }
        return values
    }

    private var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    private func dayMatches(_ day: DateComponents) -> Bool {
        guard let month = day.month, months.contains(month), let dom = day.day, let weekday = day.weekday else { return false }
        let domOK = daysOfMonth.contains(dom), dowOK = daysOfWeek.contains(weekday - 1)
        switch (dayOfMonthRestricted, dayOfWeekRestricted) {
        case (true, true): return domOK || dowOK
        case (true, false): return domOK
        case (false, true): return dowOK
        case (false, false): return true
        }
    }

    /// The latest fire time at or before `date` (within five years), or nil.
    public func previousFire(atOrBefore date: Date) -> Date? {
        search(from: date, forward: false)
    }

    /// The first fire time after `date` (within five years), or nil.
    public func nextFire(after date: Date) -> Date? {
        search(from: date.addingTimeInterval(1), forward: true)
    }

    private func search(from date: Date, forward: Bool) -> Date? {
        let calendar = self.calendar
        let limit = date.timeIntervalSince1970.rounded(.down)
        let boundary = Date(timeIntervalSince1970: limit)
        guard var day = calendar.date(from: calendar.dateComponents([.year, .month, .day], from: boundary)) else { return nil }
        for _ in 0..<(366 * 5 + 2) {
            let components = calendar.dateComponents([.year, .month, .day, .weekday], from: day)
            if dayMatches(components) {
                let times = hours.flatMap { hour in minutes.flatMap { minute in seconds.map { (hour, minute, $0) } } }
                for (hour, minute, second) in forward ? times : times.reversed() {
                    var moment = components
                    moment.hour = hour
                    moment.minute = minute
                    moment.second = second
                    moment.weekday = nil
                    guard let candidate = calendar.date(from: moment) else { continue }
                    if forward ? candidate.timeIntervalSince1970 >= limit : candidate.timeIntervalSince1970 <= limit { return candidate }
                }
            }
            guard let next = calendar.date(byAdding: .day, value: forward ? 1 : -1, to: day) else { return nil }
            day = next
        }
        return nil
    }
}
