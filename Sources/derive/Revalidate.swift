import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveWorker
import Foundation

struct Revalidate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask the origins of recorded sources whether they changed; re-derive those that did.",
        discussion: """
        Queues one check per source. A check sends If-None-Match / If-Modified-Since: a 304, or \
        content with the same hash, costs that request and nothing else; changed content is \
        derived again with the outputs the old content had, and recorded as the source's new \
        version. On a terminal, a progress line per batch goes to standard error (--quiet: none).

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
    @OptionGroup var progressOption: ProgressOption

    func run() throws {
        try reportingFailures("revalidate") {
            let database = try openDatabase(try databaseOption.configuration().database).database
            let plan = try options.plan(preset: nil) { filter in
                filter.checkedBefore = try checkedBefore.map { try pointInTime($0, flag: "--checked-before") }
            }
            try runPlan(plan, database: database, dryRun: dryRun, json: output.json, quiet: progressOption.quiet, noun: "sources")
        }
    }
}
