import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveWorker
import Foundation

struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Reprocess or revalidate on a timetable (cron), run by every worker's scheduler, each fire exactly once.",
        subcommands: [Add.self, List.self, Remove.self, RunNow.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a schedule, or replace the one with that name.",
            discussion: """
            The cron expression has five fields (minute hour day month weekday), or six with \
            seconds first, or is a macro (@hourly, @daily, @weekly, @monthly, @yearly), in \
            --timezone. A fire missed while no worker ran is caught up once, not once per \
            missed time.

              derive schedule add nightly-web --cron '0 3 * * *' --timezone Europe/Paris \\
                  --reprocess web --stale --spread 2h
              derive schedule add weekly --cron @weekly --revalidate --checked-before 7d
            """
        )

        @Argument(help: "The schedule's name (A-Z a-z 0-9 . _ -).")
        var name: String

        @Option(name: .long, help: "When it fires: a cron expression.")
        var cron: String

        @Option(name: .long, help: "The time zone the cron expression is read in (default UTC).")
        var timezone: String = "UTC"

        @Option(name: .long, help: "Reprocess this preset when it fires.")
        var reprocess: String?

        @Flag(name: .long, help: "Revalidate sources when it fires.")
        var revalidate = false

        @Flag(name: .long, help: "With --reprocess: only stale outputs.")
        var stale = false

        @Flag(name: .long, help: "With --reprocess: only missing outputs.")
        var missing = false

        @Option(name: .long, help: "With --revalidate: only sources not checked for this long (such as 7d).")
        var checkedBefore: String?

        @Flag(name: .long, help: "Add it switched off.")
        var disabled = false

        @OptionGroup var options: PlanOptions
        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("schedule add") {
                guard Schedule.isValidName(name) else {
                    throw CLIError("a schedule name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .), got \(name)")
                }
                guard (reprocess == nil) == revalidate else { throw CLIError("give --reprocess PRESET or --revalidate (one of them)") }
                guard options.createdBefore == nil, options.createdAfter == nil else {
                    throw CLIError("--created-before and --created-after are fixed times; a schedule fires again and again, so they are not taken here")
                }
                let expression = try CronExpression(cron, timeZone: timezone)
                let database = try openDatabase(try databaseOption.configuration().database).database
                if let preset = reprocess, !(try database.presets(includingRetired: false).contains { $0.name == preset }) {
                    throw CLIError("there is no preset \(preset) (see derive presets list)")
                }
                if checkedBefore != nil, parseDuration(checkedBefore!) == nil {
                    throw CLIError("--checked-before must be an age such as 7d for a schedule")
                }
                let plan = try options.plan(preset: reprocess) { filter in
                    filter.stale = stale
                    filter.missing = missing
                }
                var action = plan.taskDocument
                // An age, not a time: each fire looks back from its own moment.
                if let age = checkedBefore.flatMap(parseDuration), case .object(var members) = action {
                    members.append(JSONMember(key: "checkedAge", value: .decimal(age)))
                    action = .object(members)
                }
                try database.saveSchedule(Schedule(name: name, cron: cron, timeZone: timezone, action: action, enabled: !disabled))
                let next = expression.nextFire(after: Date())
                if output.json {
                    print(JSONWriter.compact(.object(["name": .string(name), "nextFire": next.map { .string(isoTime($0)) } ?? .null])))
                } else {
                    print("schedule \(name) saved; next fire \(next.map(isoTime) ?? "never")")
                }
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List schedules with their next and last fires.")

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("schedule list") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let now = Date()
                let rows: [(Schedule, Date?, ScheduleFire?)] = try database.schedules().map { schedule in
                    let next = (try? CronExpression(schedule.cron, timeZone: schedule.timeZone))?.nextFire(after: now)
                    return (schedule, next, try database.fires(schedule.name, limit: 1).first)
                }
                if output.json {
                    print(JSONWriter.pretty(.array(rows.map { schedule, next, last in
                        .object([
                            "name": .string(schedule.name), "cron": .string(schedule.cron), "timezone": .string(schedule.timeZone),
                            "enabled": .bool(schedule.enabled), "action": schedule.action, "nextFire": next.map { .string(isoTime($0)) } ?? .null,
                            "lastFire": last.map { .string(isoTime($0.fireTime)) } ?? .null, "lastJob": last?.jobID.map { .int(Int($0)) } ?? .null,
                        ])
                    })))
                    return
                }
                var table = [["name", "cron", "zone", "does", "next fire", "last fire"]]
                for (schedule, next, last) in rows {
                    let does = schedule.action["preset"].flatMap { if case .string(let p) = $0 { "reprocess \(p)" } else { nil } } ?? "revalidate"
                    table.append([schedule.name + (schedule.enabled ? "" : " (off)"), schedule.cron, schedule.timeZone, does,
                                  next.map(isoTime) ?? "-", last.map { isoTime($0.fireTime) } ?? "-"])
                }
                if rows.isEmpty { print("No schedules.") } else { printTable(table) }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a schedule and its record of fires.")

        @Argument(help: "The schedule's name.")
        var name: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("schedule remove") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                guard try database.removeSchedule(name) else { throw CLIError("there is no schedule \(name)") }
                print(output.json ? JSONWriter.compact(.object(["name": .string(name), "removed": .bool(true)])) : "schedule \(name) removed")
            }
        }
    }

    struct RunNow: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "run-now", abstract: "Fire a schedule now, as if its time had come.")

        @Argument(help: "The schedule's name.")
        var name: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("schedule run-now") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                guard let schedule = try database.schedules().first(where: { $0.name == name }) else { throw CLIError("there is no schedule \(name)") }
                let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
                let job = try schedule.job(firedAt: now)
                guard let id = try database.fire(name, at: now, job: job) else { throw CLIError("schedule \(name) already fired this second") }
                print(output.json ? JSONWriter.compact(.object(["name": .string(name), "job": .int(Int(id))])) : "schedule \(name) fired: job \(id)")
            }
        }
    }
}
