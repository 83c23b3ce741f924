import DeriveLanguage
import DeriveJobs
import Foundation
import Testing

@Suite struct CronTests {
    /// `2026-03-29T01:30:00Z` from its parts.
    func utc(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: text)!
    }

    func iso(_ date: Date?) -> String? {
        date.map { ISO8601DateFormatter().string(from: $0) }
    }

    @Test func fieldsListsRangesStepsAndNames() throws {
        let cron = try CronExpression("*/15 9-17 * jan-mar mon-fri")
        #expect(iso(cron.nextFire(after: utc("2026-01-02T17:50:00Z"))) == "2026-01-05T09:00:00Z")   // Friday evening → Monday
        #expect(iso(cron.previousFire(atOrBefore: utc("2026-01-05T09:14:59Z"))) == "2026-01-05T09:00:00Z")
        #expect(iso(cron.previousFire(atOrBefore: utc("2026-01-05T09:15:00Z"))) == "2026-01-05T09:15:00Z")
        #expect(iso(cron.nextFire(after: utc("2026-03-31T17:45:00Z"))) == "2027-01-01T09:00:00Z")
        #expect(iso(try CronExpression("0 0 1,15 * *").nextFire(after: utc("2026-02-01T00:00:00Z"))) == "2026-02-15T00:00:00Z")
        #expect(iso(try CronExpression("@hourly").previousFire(atOrBefore: utc("2026-05-05T10:59:59Z"))) == "2026-05-05T10:00:00Z")
        #expect(iso(try CronExpression("@yearly").nextFire(after: utc("2026-05-05T10:59:59Z"))) == "2027-01-01T00:00:00Z")
        // Sunday is 0 or 7.
        #expect(try CronExpression("0 12 * * 7").nextFire(after: utc("2026-11-21T00:00:00Z")) == CronExpression("0 12 * * sun").nextFire(after: utc("2026-11-21T00:00:00Z")))
    }

    @Test func eitherDayFieldMatchesWhenBothAreRestricted() throws {
        // The 13th, or any Friday (Vixie cron).
        let cron = try CronExpression("0 0 13 * 5")
        #expect(iso(cron.nextFire(after: utc("2026-11-01T00:00:00Z"))) == "2026-11-06T00:00:00Z")
        #expect(iso(cron.nextFire(after: utc("2026-11-06T00:00:00Z"))) == "2026-11-13T00:00:00Z")
    }

    @Test func sixFieldsHaveSecondsFirst() throws {
        let cron = try CronExpression("*/2 * * * * *")
        #expect(iso(cron.previousFire(atOrBefore: utc("2026-11-21T10:00:05Z"))) == "2026-11-21T10:00:04Z")
        #expect(iso(cron.nextFire(after: utc("2026-11-21T10:00:05Z"))) == "2026-11-21T10:00:06Z")
    }

    @Test func timesAreLocalToTheTimeZoneAcrossDaylightSaving() throws {
        let cron = try CronExpression("30 2 * * *", timeZone: "Europe/Paris")
        // 02:30 CET is 01:30 UTC in winter and 00:30 UTC in summer.
        #expect(iso(cron.nextFire(after: utc("2026-03-27T12:00:00Z"))) == "2026-03-28T01:30:00Z")
        // On 29 March 2026 Paris skips from 02:00 to 03:00: 02:30 does not exist and fires at
        // the same offset after the jump, 03:30 CEST.
        #expect(iso(cron.nextFire(after: utc("2026-03-28T12:00:00Z"))) == "2026-03-29T01:30:00Z")
        #expect(iso(cron.nextFire(after: utc("2026-03-29T12:00:00Z"))) == "2026-03-30T00:30:00Z")
        // On 25 October 2026 02:30 happens twice; it fires once, at the first.
        let autumn = try CronExpression("30 2 * * *", timeZone: "Europe/Paris")
        #expect(iso(autumn.nextFire(after: utc("2026-10-24T12:00:00Z"))) == "2026-10-25T00:30:00Z")
        #expect(iso(autumn.nextFire(after: utc("2026-10-25T00:30:00Z"))) == "2026-10-26T01:30:00Z")
    }

    @Test func badExpressionsSayWhy() {
        let cases: [(String, String, String)] = [
            ("* * * *", "UTC", "has 4 fields"),
            ("61 * * * *", "UTC", "minute \"61\" is not in 0-59"),
            ("* * * foo *", "UTC", "month \"foo\""),
            ("*/0 * * * *", "UTC", "step \"0\" must be a number above 0"),
            ("5-1 * * * *", "UTC", "runs backwards"),
            ("* * * * *", "Mars/Olympus", "not a time zone"),
        ]
        for (text, zone, message) in cases {
            do {
                _ = try CronExpression(text, timeZone: zone)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error.description.contains(message), "\(text): \(error)")
            }
        }
    }

    @Test func aScheduleIsDueAtItsLatestFireOnceItExists() throws {
        let created = utc("2026-11-21T10:30:00Z")
        let schedule = Schedule(name: "hourly", cron: "0 * * * *", timeZone: "UTC", action: .object([]), createdAt: created)
        // The 10:00 fire was before the schedule existed.
        #expect(try schedule.dueFire(at: utc("2026-11-21T10:59:00Z")) == nil)
        // Down from 11:30 to 14:20: only the latest missed fire, 14:00, is due.
        #expect(iso(try schedule.dueFire(at: utc("2026-11-21T14:20:00Z"))) == "2026-11-21T14:00:00Z")
    }

    @Test func plansSpreadTheirJobsAndSurviveTheTaskDocument() throws {
        var random = SystemRandomNumberGenerator()
        let start = utc("2026-11-21T10:00:00Z")
        let rated = ReprocessPlan(preset: "web", rate: 50)
        #expect(rated.runAt(100, start: start, using: &random) == start.addingTimeInterval(2))
        let spread = ReprocessPlan(preset: "web", spread: 3600)
        for index in 0..<50 {
            let at = try #require(spread.runAt(index, start: start, using: &random))
            #expect(at >= start && at < start.addingTimeInterval(3600))
        }
        #expect(ReprocessPlan(preset: "web").runAt(5, start: start, using: &random) == nil)
        let plan = ReprocessPlan(preset: "web", filter: AssetFilter(createdBefore: start, sourceHost: "example.com", stale: true), queue: "bulk",
                                 priority: -5, spread: 60)
        var back = try ReprocessPlan(task: plan.taskDocument)
        back.batchSize = plan.batchSize
        #expect(back == plan)
        #expect(AssetFilter(sourceHost: "example.com").hostMatches("https://img.example.com/a.jpg"))
        #expect(!AssetFilter(sourceHost: "example.com").hostMatches("https://notexample.com/a.jpg"))
    }
}
