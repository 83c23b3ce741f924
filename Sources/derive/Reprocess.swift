import ArgumentParser
import DeriveCore
import DeriveWorker
import Foundation

/// Which assets, and how their jobs are queued: shared by `reprocess`, `revalidate` and
/// `schedule add`.
struct PlanOptions: ParsableArguments {
    @Option(name: .long, help: "Only assets first recorded before this: an ISO 8601 time or an age such as 30d.")
    var createdBefore: String?

    @Option(name: .long, help: "Only assets first recorded after this: an ISO 8601 time or an age such as 7d.")
    var createdAfter: String?

    @Option(name: .long, help: "Only sources on this host (or below it).")
    var sourceHost: String?

    @Option(name: .long, help: "Spread the jobs at random over this long (such as 2h), so live uploads are not starved.")
    var spread: String?

    @Option(name: .long, help: "Or queue them at this many jobs per second.")
    var rate: Double?

    @Option(name: .long, help: "Priority (default -10: after new submissions).")
    var priority: Int = ReprocessPlan.defaultPriority

    @Option(name: .long, help: "The queue (default: default).")
    var queue: String = "default"

    @Option(name: .long, help: "Assets per batch (default 1000).")
    var batch: Int = 1000

    func plan(preset: String?, filter extra: (inout AssetFilter) throws -> Void = { _ in }) throws -> ReprocessPlan {
        guard QueueName.isValid(queue) else { throw CLIError("--queue \(queue) is not a queue name (1 to 64 of A-Z a-z 0-9 _ . -)") }
        guard spread == nil || rate == nil else { throw CLIError("give --spread or --rate, not both") }
        guard (1...10000).contains(batch) else { throw CLIError("--batch must be 1 to 10000") }
        var filter = AssetFilter(createdBefore: try createdBefore.map { try pointInTime($0, flag: "--created-before") },
                                 createdAfter: try createdAfter.map { try pointInTime($0, flag: "--created-after") }, sourceHost: sourceHost)
        try extra(&filter)
        let seconds = try spread.map { text in
            guard let value = parseDuration(text), value > 0 else { throw CLIError("--spread must be a duration such as 30m or 2h") }
            return value
        }
        if let rate, rate <= 0 { throw CLIError("--rate must be above 0") }
        return ReprocessPlan(preset: preset, filter: filter, queue: queue, priority: priority, spread: seconds, rate: rate, batchSize: batch)
    }
}

/// An ISO 8601 time, or an age (`30d` ago).
func pointInTime(_ text: String, flag: String) throws -> Date {
    if let age = parseDuration(text) { return Date().addingTimeInterval(-age) }
    let formatter = ISO8601DateFormatter()
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withFullDate]
    if let date = formatter.date(from: text) { return date }
    throw CLIError("\(flag) must be an ISO 8601 time (2026-01-31 or 2026-01-31T12:00:00Z) or an age such as 30d, got \(text)")
}

/// Enqueues a plan with a progress line on a terminal, or counts it (`--dry-run`).
func runPlan(_ plan: ReprocessPlan, database: any DeriveDatabase, dryRun: Bool, json: Bool, noun: String) throws {
    let reprocessor = Reprocessor(database: database)
    if dryRun {
        let count = try reprocessor.count(plan)
        print(json ? JSONWriter.compact(.object(["matched": .int(count), "dryRun": .bool(true)])) : "\(count) \(noun) match; nothing was queued (--dry-run)")
        return
    }
    let started = Date()
    let terminal = isatty(2) == 1
    let summary = try reprocessor.enqueue(plan) { progress in
        guard terminal else { return }
        let seconds = max(0.001, Date().timeIntervalSince(started))
        FileHandle.standardError.write(Data("\r\(progress.matched) \(noun), \(progress.enqueued) queued, \(progress.deduplicated) already waiting, \(Int(Double(progress.matched) / seconds))/s".utf8))
    }
    if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    if json {
        print(JSONWriter.compact(summary.json))
    } else {
        let when = plan.rate.map { " at \($0) per second" } ?? plan.spread.map { " spread over \(duration($0))" } ?? ""
        print("\(summary.matched) \(noun) matched: queued \(summary.enqueued) job\(summary.enqueued == 1 ? "" : "s")\(when) at priority \(plan.priority), "
              + "\(summary.deduplicated) already waiting, in \(summary.batches) batch\(summary.batches == 1 ? "" : "es")")
    }
}

struct Reprocess: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Derive a preset again for the assets that match: all of them, or only stale or missing outputs.",
        discussion: """
        Queues one job per asset (its source, the preset), in batches, below new submissions'
        priority and, with --spread or --rate, spread in time. A job already waiting for an
        asset is not queued twice, so running the same reprocess again enqueues nothing new.

          derive reprocess --preset web --stale                  # outputs from older versions of web
          derive reprocess --preset web --missing --spread 6h    # assets lacking some output of web
          derive reprocess --preset web --source-host cdn.example.com --dry-run
        """
    )

    @Option(name: .long, help: "The preset to derive again.")
    var preset: String

    @Flag(name: .long, help: "Only assets whose newest outputs of the preset come from an older version of it.")
    var stale = false

    @Flag(name: .long, help: "Only assets lacking some output of the preset's current version.")
    var missing = false

    @Flag(name: .long, help: "Count the matching assets; queue nothing.")
    var dryRun = false

    @OptionGroup var options: PlanOptions
    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption

    func run() throws {
        try reportingFailures("reprocess") {
            let database = try openDatabase(try databaseOption.configuration().database).database
            guard try database.presets(includingRetired: false).contains(where: { $0.name == preset }) else {
                throw CLIError("there is no preset \(preset) (see derive presets list)")
            }
            let plan = try options.plan(preset: preset) { filter in
                filter.stale = stale
                filter.missing = missing
            }
            try runPlan(plan, database: database, dryRun: dryRun, json: output.json, noun: "assets")
        }
    }
}

struct Revalidate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask the origins of recorded sources whether they changed; re-derive those that did.",
        discussion: """
        Queues one check per source. A check sends If-None-Match / If-Modified-Since: a 304, or
        content with the same hash, costs that request and nothing else; changed content is
        derived again with the outputs the old content had, and recorded as the source's new
        version.

          derive revalidate --checked-before 7d --spread 1h
        """
    )

    @Option(name: .long, help: "Only sources not checked since: an ISO 8601 time or an age such as 7d.")
    var checkedBefore: String?

    @Flag(name: .long, help: "Count the matching sources; queue nothing.")
    var dryRun = false

    @OptionGroup var options: PlanOptions
    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption

    func run() throws {
        try reportingFailures("revalidate") {
            let database = try openDatabase(try databaseOption.configuration().database).database
            let plan = try options.plan(preset: nil) { filter in
                filter.checkedBefore = try checkedBefore.map { try pointInTime($0, flag: "--checked-before") }
            }
            try runPlan(plan, database: database, dryRun: dryRun, json: output.json, noun: "sources")
        }
    }
}

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
            The cron expression has five fields (minute hour day month weekday), or six with
            seconds first, or is a macro (@hourly, @daily, @weekly, @monthly, @yearly), in
            --timezone. A fire missed while no worker ran is caught up once, not once per
            missed time.

              derive schedule add nightly-web --cron '0 3 * * *' --timezone Europe/Paris --reprocess web --stale --spread 2h
              derive schedule add weekly-check --cron '@weekly' --revalidate --checked-before 7d
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
