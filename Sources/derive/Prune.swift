import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveTerminal
import Foundation

struct Prune: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete finished jobs older than a given age from the archive (assets and derivatives stay), and remove abandoned writes from the store.",
        discussion: """
        Every run also removes what writers killed mid-write left in the store and that is older \
        than --abandoned-after: a folder store's temporary files (.<name>.<UUID>.tmp), an S3 \
        store's unfinished multipart uploads under its prefix; and objects that runs wrote and \
        never recorded, which the write ledger names (a run that died between writing and \
        recording, when the source changed before the retry), once their job has finished and \
        no row or running job names the key. Workers do the same every \
        DERIVE_ABANDONED_SWEEP_INTERVAL seconds. On a terminal, a progress line per slice of ten \
        thousand jobs goes to standard error (--quiet: none).

          derive prune --older-than 30d
          derive prune    # only the store's abandoned and unrecorded writes
        """
    )

    @Option(name: .long, help: "Delete finished jobs older than this age, such as 30d, 12h, 90m or 3600s (none when not given).")
    var olderThan: String?

    @Option(name: .long, help: "Age after which an interrupted write's leftovers are removed. Env: DERIVE_ABANDONED_AFTER (default 1h).")
    var abandonedAfter: String?

    @OptionGroup var storeOption: StoreOption
    var store: String? { storeOption.store }

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption
    @OptionGroup var progressOption: ProgressOption

    func run() throws {
        try reportingFailures("prune") {
            let jobAge = try olderThan.map { text in
                guard let seconds = parseDuration(text) else { throw CLIError("--older-than must be a duration such as 30d, 12h, 90m or 3600s") }
                return seconds
            }
            let configuration = try databaseOption.configuration(store: store)
            var writeAge = configuration.store.abandonedAfter
            if let abandonedAfter {
                guard let seconds = parseDuration(abandonedAfter), seconds > 0 else {
                    throw CLIError("--abandoned-after must be a duration above 0 such as 1h, 90m or 3600s")
                }
                writeAge = seconds
            }
            // An embedded queue that does not exist has noted nothing: it is not created here.
            let database: (any DeriveDatabase)?
            if case .sqlite(let path) = configuration.database, !FileManager.default.fileExists(atPath: path) {
                database = nil
            } else {
                database = try openDatabase(configuration.database).database
            }
            // Per slice of ten thousand jobs, then each sweep of the store.
            let progress = progressOption.reporter(ProgressState(label: "deleting finished jobs", unit: "deleted"))
            defer { progress.clear() }
            var deleted: Int?
            if let jobAge, let database {
                deleted = try database.prune(finishedBefore: Date().addingTimeInterval(-jobAge)) { total in progress.update { $0.done = total } }
            } else if jobAge != nil {
                deleted = 0
            }
            progress.update { $0.label = "removing abandoned writes" }
            // Jobs already deleted are reported even when the store then fails.
            var sweep = AbandonedWriteSweep()
            var unrecorded = AbandonedWriteSweep()
            var storeError: (any Error)?
            do {
                let assets = try makeStore(configuration)
                let cutoff = Date().addingTimeInterval(-writeAge)
                sweep = try assets.removeAbandonedWrites(olderThan: cutoff)
                progress.update { $0.label = "removing unrecorded writes" }
                if let database { unrecorded = try database.sweepUnrecordedWrites(in: assets, olderThan: cutoff) }
            } catch {
                storeError = error
            }
            progress.finish { _, elapsed in "pruned in \(Units.seconds(elapsed))" }
            var members: [JSONMember] = []
            if let deleted { members.append(JSONMember(key: "deleted", value: .int(deleted))) }
            if storeError == nil {
                members.append(JSONMember(key: "abandonedWritesRemoved", value: .int(sweep.removed.count)))
                members.append(JSONMember(key: "unrecordedWritesRemoved", value: .int(unrecorded.removed.count)))
            }
            if output.json {
                print(JSONWriter.compact(.object(members)))
            } else {
                if let deleted { print("deleted \(deleted) finished job\(deleted == 1 ? "" : "s")") }
                if storeError == nil {
                    print("removed \(sweep.removed.count) abandoned write\(sweep.removed.count == 1 ? "" : "s") from the store")
                    print("removed \(unrecorded.removed.count) unrecorded write\(unrecorded.removed.count == 1 ? "" : "s") from the store")
                }
            }
            if let storeError { throw storeError }
            let failures = sweep.failures + unrecorded.failures
            guard failures.isEmpty else {
                throw CLIError("could not remove \(sweep.failures.count) abandoned and \(unrecorded.failures.count) unrecorded "
                               + "write\(failures.count == 1 ? "" : "s"): " + failures.prefix(5).joined(separator: "; "))
            }
        }
    }
}
