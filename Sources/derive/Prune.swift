import ArgumentParser
import DeriveCore
import Foundation

struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete finished jobs older than a given age from the archive (assets and derivatives stay)."
    )

    @Option(name: .long, help: "Age, such as 30d, 12h, 90m or 3600s.")
    var olderThan: String

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption

    func run() throws {
        try reportingFailures("prune") {
            guard let seconds = parseDuration(olderThan) else { throw CLIError("--older-than must be a duration such as 30d, 12h, 90m or 3600s") }
            let database = try openDatabase(try databaseOption.configuration().database).database
            let deleted = try database.prune(finishedBefore: Date().addingTimeInterval(-seconds))
            print(output.json ? JSONWriter.compact(.object(["deleted": .int(deleted)])) : "deleted \(deleted) finished job\(deleted == 1 ? "" : "s")")
        }
    }
}
