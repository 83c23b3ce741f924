import ArgumentParser
import DeriveCore
import Foundation

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the queue: jobs by queue and state, the oldest waiting, throughput, and what each worker is doing."
    )

    @Option(name: .long, help: "Minutes of history for the throughput (default 5).")
    var minutes: Int = 5

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption

    func run() throws {
        try reportingFailures("status") {
            let database = try openDatabase(try databaseOption.configuration().database).database
            let now = Date()
            let counts = try database.counts()
            let window = Double(max(1, minutes)) * 60
            let finished = try database.finishedCounts(since: now.addingTimeInterval(-window))
            let workers = try database.workers(seenSince: now.addingTimeInterval(-30))
            let staleness = try database.staleness()
            let perMinute = Double(finished[.completed] ?? 0) / (window / 60)
            if output.json {
                let finishedMembers = [JSONMember(key: "minutes", value: .int(minutes))] + JobState.allCases.filter { !$0.isLive }.map {
                    JSONMember(key: $0.rawValue, value: .int(finished[$0] ?? 0))
                }
                let document: JSONValue = .object([
                    "queues": .array(counts.map { Self.json($0, now: now) }),
                    "finished": .object(finishedMembers),
                    "completedPerMinute": .decimal(perMinute),
                    "workers": .array(workers.map { Self.json($0, now: now) }),
                    "presets": .array(staleness.map { preset in
                        .object(["preset": .string(preset.preset), "version": .int(preset.currentVersion), "assets": .int(preset.assets),
                                 "stale": .int(preset.stale)])
                    }),
                ])
                print(JSONWriter.pretty(document))
                return
            }
            var table = [["queue", "available", "scheduled", "running", "oldest waiting"]]
            for queue in counts {
                table.append([queue.queue, "\(queue.states[.available] ?? 0)", "\(queue.states[.scheduled] ?? 0)",
                              "\(queue.states[.running] ?? 0)", queue.oldestAvailable.map { duration(now.timeIntervalSince($0)) } ?? "-"])
            }
            if counts.isEmpty { print("No jobs waiting or running.") } else { printTable(table) }
            let outcomes = JobState.allCases.filter { !$0.isLive }.map { "\(finished[$0] ?? 0) \($0.rawValue)" }
            print("\nLast \(minutes) min: \(outcomes.joined(separator: ", ")) (\(String(format: "%.1f", perMinute)) completed per minute)")
            if !staleness.isEmpty {
                print("\nPresets: " + staleness.map { "\($0.preset) v\($0.currentVersion): \($0.stale) of \($0.assets) assets stale" }
                    .joined(separator: "; "))
            }
            print("\nWorkers: \(workers.count)")
            for worker in workers {
                let busy = worker.running.count
                print("  \(worker.id)  queues \(worker.queues.joined(separator: ","))  \(busy)/\(worker.slots) slots busy  "
                      + "up \(duration(now.timeIntervalSince(worker.startedAt)))\(worker.stopping ? "  stopping" : "")")
                for job in worker.running {
                    print("    job \(job.id)  \(job.stage)  \(duration(now.timeIntervalSince(job.since)))")
                }
            }
        }
    }
}

extension Status {
    static func json(_ queue: QueueCounts, now: Date) -> JSONValue {
        .object([
            "queue": .string(queue.queue), "available": .int(queue.states[.available] ?? 0),
            "scheduled": .int(queue.states[.scheduled] ?? 0), "running": .int(queue.states[.running] ?? 0),
            "oldestAvailableSeconds": queue.oldestAvailable.map { .decimal(now.timeIntervalSince($0)) } ?? .null,
        ])
    }

    static func json(_ worker: WorkerStatus, now: Date) -> JSONValue {
        let running: [JSONValue] = worker.running.map { job in
            .object(["id": .int(Int(job.id)), "stage": .string(job.stage), "seconds": .decimal(now.timeIntervalSince(job.since))])
        }
        return .object([
            "id": .string(worker.id), "host": .string(worker.host), "pid": .int(worker.pid),
            "queues": .array(worker.queues.map(JSONValue.string)), "slots": .int(worker.slots),
            "startedAt": .string(isoTime(worker.startedAt)), "seenSecondsAgo": .decimal(now.timeIntervalSince(worker.seenAt)),
            "stopping": .bool(worker.stopping), "finished": worker.activity["finished"] ?? .object([]), "running": .array(running),
        ])
    }
}

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
                print("job \(job.id)  \(job.state.rawValue)  queue \(job.queue)  priority \(job.priority)  attempt \(job.attempt) of \(job.maxAttempts)")
                print("source    \(job.sourceDescription)")
                print("created   \(isoTime(job.createdAt))")
                if let runAt = job.runAt { print("runs at   \(isoTime(runAt))") }
                if let finished = job.finishedAt { print("finished  \(isoTime(finished))") }
                if let owner = job.leaseOwner { print("worker    \(owner)") }
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

struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Named, versioned sets of outputs that jobs refer to (--preset, {\"preset\": ...}, t_name).",
        subcommands: [Add.self, List.self, Show.self, Remove.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save outputs under a name: a new version if the name exists. Jobs use the newest version."
        )

        @Argument(help: "The preset's name (A-Z a-z 0-9 . _ -).")
        var name: String

        @Option(name: .long, help: "The outputs: a JSON file, inline JSON, or a Cloudinary transformation string.")
        var chain: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets add") {
                guard Schedule.isValidName(name) else {
                    throw CLIError("a preset name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .), got \(name)")
                }
                let database = try openDatabase(try databaseOption.configuration().database).database
                let spec = try TransformationInput.parse(try chainText(chain))
                guard spec.preset == nil, !spec.outputs.isEmpty else { throw CLIError("--chain must give outputs, not name a preset") }
                _ = try JobResolver(catalog: DatabasePresetCatalog(store: database, ttl: 0)).resolve(spec)
                let version = try database.savePreset(name: name, outputs: .array(spec.outputs.map(ChainEncoder.json)))
                if output.json {
                    print(JSONWriter.compact(.object(["name": .string(name), "version": .int(version)])))
                } else {
                    print("preset \(name) version \(version) saved (\(spec.outputs.count) output\(spec.outputs.count == 1 ? "" : "s"))")
                }
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List presets (their newest versions).")

        @Flag(name: .long, help: "Include removed presets.")
        var all = false

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets list") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let presets = try database.presets(includingRetired: all)
                if output.json {
                    print(JSONWriter.pretty(.array(presets.map(\.json))))
                    return
                }
                var table = [["name", "version", "outputs", "saved", ""]]
                for preset in presets {
                    table.append([preset.name, "\(preset.version)", preset.outputNames.joined(separator: ","), isoTime(preset.createdAt),
                                  preset.retiredAt == nil ? "" : "removed"])
                }
                if presets.isEmpty { print("No presets.") } else { printTable(table) }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a preset's outputs.")

        @Argument(help: "The preset's name.")
        var name: String

        @Option(name: .long, help: "A version (default: the newest).")
        var version: Int?

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets show") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let versions = try database.presetVersions(name)
                guard let preset = version.map({ wanted in versions.first { $0.version == wanted } }) ?? versions.first else {
                    throw CLIError(versions.isEmpty ? "there is no preset \(name)" : "preset \(name) has no version \(version!)")
                }
                if output.json {
                    print(JSONWriter.pretty(preset.json))
                } else {
                    print("preset \(preset.name) version \(preset.version) of \(versions.count), saved \(isoTime(preset.createdAt))"
                          + (preset.retiredAt == nil ? "" : ", removed"))
                    print(JSONWriter.pretty(preset.outputs))
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a preset: jobs naming it fail from now on; its versions stay on record."
        )

        @Argument(help: "The preset's name.")
        var name: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets remove") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                guard try database.retirePreset(name) else { throw CLIError("there is no preset \(name)") }
                print(output.json ? JSONWriter.compact(.object(["name": .string(name), "removed": .bool(true)])) : "preset \(name) removed")
            }
        }
    }
}

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

/// `30d`, `12h`, `90m`, `45s` or plain seconds.
func parseDuration(_ text: String) -> Double? {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
    guard let last = text.last else { return nil }
    if let unit = units[last], let value = Double(text.dropLast()), value >= 0 { return value * unit }
    if let value = Double(text), value >= 0 { return value }
    return nil
}

func isoTime(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.string(from: date)
}

/// `3s`, `4m`, `2h05m`, `3d`.
func duration(_ seconds: Double) -> String {
    let s = Int(max(0, seconds))
    if s < 60 { return "\(s)s" }
    if s < 3600 { return "\(s / 60)m" }
    if s < 86400 { return "\(s / 3600)h\(String(format: "%02d", s % 3600 / 60))m" }
    return "\(s / 86400)d"
}

/// Columns padded to their widest cell.
func printTable(_ rows: [[String]]) {
    let widths = rows.reduce(into: [Int]()) { widths, row in
        for (index, cell) in row.enumerated() {
            if index < widths.count { widths[index] = max(widths[index], cell.count) } else { widths.append(cell.count) }
        }
    }
    for row in rows {
        print(row.enumerated().map { index, cell in
            index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  "))
    }
}

extension JSONValue {
    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

extension JobSnapshot {
    var sourceDescription: String {
        payload["source"]?.stringValue.map(Redacted.url) ?? "-"
    }

    var json: JSONValue {
        .object([
            "id": .int(Int(id)), "queue": .string(queue), "state": .string(state.rawValue), "priority": .int(priority),
            "attempt": .int(attempt), "maxAttempts": .int(maxAttempts), "runAt": runAt.map { .string(isoTime($0)) } ?? .null,
            "leaseOwner": leaseOwner.map(JSONValue.string) ?? .null, "dedupeKey": dedupeKey.map(JSONValue.string) ?? .null,
            "cancelRequested": .bool(cancelRequested), "document": payload, "errors": .array(errors), "result": result ?? .null,
            "createdAt": .string(isoTime(createdAt)), "finishedAt": finishedAt.map { .string(isoTime($0)) } ?? .null,
        ])
    }
}

extension StoredPreset {
    var outputNames: [String] {
        guard case .array(let outputs) = outputs else { return [] }
        return outputs.compactMap { $0["name"]?.stringValue }
    }

    var json: JSONValue {
        .object([
            "name": .string(name), "version": .int(version), "outputs": outputs, "createdAt": .string(isoTime(createdAt)),
            "removedAt": retiredAt.map { .string(isoTime($0)) } ?? .null,
        ])
    }
}
