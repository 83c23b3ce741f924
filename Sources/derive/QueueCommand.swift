import ArgumentParser
import DeriveLanguage
import DeriveJobs
import Foundation

struct QueueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "List queues with their jobs and whether they are paused; pause and resume a queue.",
        discussion: """
        A paused queue keeps accepting jobs, but no worker (on any machine) claims from it until \
        it is resumed; jobs already running finish. Workers go on with their other queues.

          derive queue
          derive queue pause bulk
          derive queue resume bulk
        """,
        subcommands: [List.self, Pause.self, Resume.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each queue's waiting and running jobs, and the paused queues with who paused them and when.")

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("queue") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let now = Date()
                let counts = try database.counts()
                let paused = Dictionary(uniqueKeysWithValues: try database.pausedQueues().map { ($0.queue, $0) })
                // Every queue with jobs, and every paused one (a paused queue may have none yet).
                let names = Set(counts.map(\.queue)).union(paused.keys).sorted()
                let byName = Dictionary(uniqueKeysWithValues: counts.map { ($0.queue, $0) })
                if output.json {
                    print(JSONWriter.pretty(.array(names.map { name in
                        Status.json(byName[name] ?? QueueCounts(queue: name, states: [:], oldestAvailable: nil), now: now, paused: paused[name])
                    })))
                    return
                }
                guard !names.isEmpty else { return print("No jobs waiting or running, and no queue paused.") }
                var table = [["queue", "state", "available", "scheduled", "running", "oldest waiting"]]
                for name in names {
                    let queue = byName[name]
                    table.append([name, paused[name].map { "paused \(isoTime($0.pausedAt)) by \($0.pausedBy)" } ?? "running",
                                  "\(queue?.states[.available] ?? 0)", "\(queue?.states[.scheduled] ?? 0)", "\(queue?.states[.running] ?? 0)",
                                  queue?.oldestAvailable.map { duration(now.timeIntervalSince($0)) } ?? "-"])
                }
                printTable(table)
            }
        }
    }

    struct Pause: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop workers claiming from a queue; it keeps accepting jobs and running jobs finish.")

        @Argument(help: "The queue's name.")
        var name: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("queue pause") {
                guard QueueName.isValid(name) else { throw CLIError("\(name) is not a queue name (1 to 64 of A-Z a-z 0-9 _ . -)") }
                let database = try openDatabase(try databaseOption.configuration().database).database
                let paused = try database.pause(queue: name, by: QueueCommand.operator)
                if output.json {
                    print(JSONWriter.compact(.object(["queue": .string(name), "paused": .bool(true), "alreadyPaused": .bool(!paused)])))
                } else if paused {
                    print("queue \(name) paused: no worker claims from it until `derive queue resume \(name)`; running jobs finish")
                } else {
                    let since = try database.pausedQueues().first { $0.queue == name }
                    print("queue \(name) was already paused" + (since.map { " (since \(isoTime($0.pausedAt)), by \($0.pausedBy))" } ?? ""))
                }
            }
        }
    }

    struct Resume: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let workers claim from a paused queue again.")

        @Argument(help: "The queue's name.")
        var name: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("queue resume") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let resumed = try database.resume(queue: name)
                if output.json {
                    print(JSONWriter.compact(.object(["queue": .string(name), "paused": .bool(false), "wasPaused": .bool(resumed)])))
                } else {
                    print(resumed ? "queue \(name) resumed: workers claim from it again" : "queue \(name) was not paused")
                }
            }
        }
    }

    /// Who paused, as the queue records it: this command, the login and the host.
    static var `operator`: String {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["USER"] ?? environment["LOGNAME"] ?? getpwuid(getuid()).flatMap { String(validatingCString: $0.pointee.pw_name) } ?? "unknown"
        return "cli:\(user)@\(ProcessInfo.processInfo.hostName)"
    }
}
