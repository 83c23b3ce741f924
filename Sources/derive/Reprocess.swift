import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveTerminal
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

/// Enqueues a plan with a progress line per batch on a terminal (the matching assets counted
/// first, for the bar and the time left), or counts it (`--dry-run`).
func runPlan(_ plan: ReprocessPlan, database: any DeriveDatabase, dryRun: Bool, json: Bool, quiet: Bool, noun: String) throws {
    let reprocessor = Reprocessor(database: database)
    if dryRun {
        let count = try reprocessor.count(plan)
        print(json ? JSONWriter.compact(.object(["matched": .int(count), "dryRun": .bool(true)])) : "\(count) \(noun) match; nothing was queued (--dry-run)")
        return
    }
    let progress = ProgressReporter(ProgressState(label: "queueing", unit: noun, counts: [.init("queued", colour: .green), .init("already waiting", colour: .yellow)]),
                                    quiet: quiet)
    defer { progress.clear() }
    if progress.shows {
        let total = try reprocessor.count(plan)
        progress.update { $0.total = total }
    }
    let summary = try reprocessor.enqueue(plan) { batch in
        progress.update { state in
            state.done = batch.matched
            state.total = state.total.map { max($0, batch.matched) }
            state[count: "queued"] = batch.enqueued
            state[count: "already waiting"] = batch.deduplicated
        }
    }
    progress.finish(verb: "matched")
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
        Queues one job per asset (its source, the preset), in batches, below new submissions' \
        priority and, with --spread or --rate, spread in time. A job already waiting for an \
        asset is not queued twice, so running the same reprocess again enqueues nothing new. On \
        a terminal, a progress line per batch goes to standard error (--quiet: none).

          derive reprocess --preset web --stale                # older web outputs
          derive reprocess --preset web --missing --spread 6h  # missing web outputs
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
    @OptionGroup var progressOption: ProgressOption

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
            try runPlan(plan, database: database, dryRun: dryRun, json: output.json, quiet: progressOption.quiet, noun: "assets")
        }
    }
}
