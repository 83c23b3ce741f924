import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveTerminal
import Foundation

struct Jobs: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, show, retry and cancel jobs.",
        subcommands: [List.self, Show.self, Retry.self, Cancel.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List jobs: waiting and running ones oldest first, finished ones newest first.")

        @Option(name: .long, help: "available, scheduled, running, completed, failed or cancelled (default: every waiting or running job).")
        var state: String?

        @Option(name: .long, help: "Only this queue.")
        var queue: String?

        @Option(name: .long, help: "At most this many (default 50).")
        var limit: Int = 50

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("jobs list") {
                let wanted = try state.map { name in
                    guard let state = JobState(rawValue: name) else {
                        throw CLIError("--state must be one of \(JobState.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    return state
                }
                let database = try openDatabase(try databaseOption.configuration().database).database
                let jobs = try database.jobs(state: wanted, queue: queue, limit: max(1, limit))
                if output.json {
                    print(JSONWriter.pretty(.array(jobs.map(\.json))))
                    return
                }
                var table = [["id", "queue", "state", "attempt", "priority", "when", "source"]]
                for job in jobs {
                    let when = job.finishedAt ?? job.runAt ?? job.createdAt
                    table.append(["\(job.id)", job.queue, job.state.rawValue, "\(job.attempt)/\(job.maxAttempts)", "\(job.priority)",
                                  isoTime(when), job.sourceDescription])
                }
                if jobs.isEmpty { print("No such jobs.") } else { printTable(table) }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one job: its document, errors and result.")

        @Argument(help: "The job's id.")
        var id: Int64

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("jobs show") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                guard let job = try database.job(id) else { throw CLIError("there is no job \(id)") }
                if output.json {
                    print(JSONWriter.pretty(job.json))
                    return
                }
                print("job \(job.id)  \(Style(Terminal.standardOutput).paint(job.state.rawValue, stateColour(job.state.rawValue)))  queue \(job.queue)  priority \(job.priority)  attempt \(job.attempt) of \(job.maxAttempts)")
                print("source    \(job.sourceDescription)")
                print("created   \(isoTime(job.createdAt))")
                if let runAt = job.runAt { print("runs at   \(isoTime(runAt))") }
                if let started = job.startedAt, job.state == .running || !job.state.isLive { print("started   \(isoTime(started))") }
                if let finished = job.finishedAt { print("finished  \(isoTime(finished))") }
                // The worker holding it, or the one that ran its last attempt once it ended.
                if let worker = job.worker ?? job.leaseOwner { print("worker    \(worker)") }
                if job.cancelRequested { print("cancel requested") }
                for error in job.errors {
                    print("error     attempt \(error["attempt"].map(JSONWriter.compact) ?? "?"): \(error["code"].flatMap(\.stringValue) ?? "")"
                          + " \(error["detail"].flatMap(\.stringValue) ?? "")")
                }
                if case .array(let outputs)? = job.result?["outputs"] {
                    for output in outputs {
                        print("output    \(output["name"].flatMap(\.stringValue) ?? "")  \(output["width"].map(JSONWriter.compact) ?? "")x"
                              + "\(output["height"].map(JSONWriter.compact) ?? "")  \(output["location"].flatMap(\.stringValue) ?? "")")
                    }
                }
                print("document  \(JSONWriter.compact(job.payload))")
            }
        }
    }

    struct Retry: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run a failed or cancelled job again (as a new job), or a job waiting to retry now.")

        @Argument(help: "The job's id.")
        var id: Int64

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("jobs retry") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let retried = try database.retry(id)
                if output.json {
                    print(JSONWriter.compact(.object(["id": .int(Int(id)), "retry": retried.map { .int(Int($0)) } ?? .null])))
                } else if let retried {
                    print(retried == id ? "job \(id) will run now" : "job \(id) will run again as job \(retried)")
                } else {
                    throw CLIError("job \(id) is not failed, cancelled or waiting to retry")
                }
            }
        }
    }

    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel a job: a waiting one at once, a running one at its next heartbeat.")

        @Argument(help: "The job's id.")
        var id: Int64

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("jobs cancel") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let result = try database.cancel(id)
                if output.json {
                    print(JSONWriter.compact(.object(["id": .int(Int(id)), "result": .string(result.rawValue)])))
                    return
                }
                switch result {
                case .cancelled: print("job \(id) cancelled")
                case .requested: print("job \(id) is running: its worker stops it at its next heartbeat")
                case .finished: throw CLIError("job \(id) has already finished")
                case .notFound: throw CLIError("there is no job \(id)")
                }
            }
        }
    }
}

extension JobSnapshot {
    var sourceDescription: String {
        payload["source"]?.stringValue.map(Redacted.url) ?? "-"
    }

    var json: JSONValue {
        func time(_ date: Date?) -> JSONValue { date.map { .string(isoTime($0)) } ?? .null }
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        // Members in this order (a list of pairs: one literal of them all is more than the type
        // checker will take in reasonable time).
        let members: [(String, JSONValue)] = [
            ("id", .int(Int(id))), ("queue", .string(queue)), ("state", .string(state.rawValue)), ("priority", .int(priority)),
            ("attempt", .int(attempt)), ("maxAttempts", .int(maxAttempts)), ("runAt", time(runAt)), ("leaseOwner", text(leaseOwner)),
            ("dedupeKey", text(dedupeKey)), ("cancelRequested", .bool(cancelRequested)), ("document", payload), ("errors", .array(errors)),
            ("result", result ?? .null), ("createdAt", time(createdAt)), ("finishedAt", time(finishedAt)), ("startedAt", time(startedAt)),
            ("worker", text(worker)),
        ]
        return .object(members.map { JSONMember(key: $0.0, value: $0.1) })
    }
}
