import ArgumentParser
import DeriveLanguage
import DeriveJobs
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
            let paused = Dictionary(uniqueKeysWithValues: try database.pausedQueues().map { ($0.queue, $0) })
            let window = Double(max(1, minutes)) * 60
            let finished = try database.finishedCounts(since: now.addingTimeInterval(-window))
            // Workers heard within a lease, and of the jobs each says it runs only those its run
            // still holds (a killed worker's last report names jobs finished elsewhere since).
            let liveness = WorkerLiveness()
            let workers = try liveness.workers(heardSince: now.addingTimeInterval(-liveness.goneAfter), from: database, at: now)
            let staleness = try database.staleness()
            let perMinute = Double(finished[.completed] ?? 0) / (window / 60)
            if output.json {
                let finishedMembers = [JSONMember(key: "minutes", value: .int(minutes))] + JobState.allCases.filter { !$0.isLive }.map {
                    JSONMember(key: $0.rawValue, value: .int(finished[$0] ?? 0))
                }
                let document: JSONValue = .object([
                    "queues": .array(counts.map { Self.json($0, now: now, paused: paused[$0.queue]) }),
                    "paused": .array(paused.values.sorted { $0.queue < $1.queue }.map(Self.json)),
                    "finished": .object(finishedMembers),
                    "completedPerMinute": .decimal(perMinute),
                    "workers": .array(workers.map { Self.json($0, state: liveness.state(of: $0, at: now), now: now) }),
                    "presets": .array(staleness.map { preset in
                        .object(["preset": .string(preset.preset), "version": .int(preset.currentVersion), "assets": .int(preset.assets),
                                 "stale": .int(preset.stale)])
                    }),
                ])
                print(JSONWriter.pretty(document))
                return
            }
            var table = [["queue", "available", "scheduled (retries)", "running", "oldest waiting"]]
            for queue in counts {
                table.append([queue.queue + (paused[queue.queue] == nil ? "" : " (paused)"), "\(queue.states[.available] ?? 0)", "\(queue.states[.scheduled] ?? 0) (\(queue.retrying))",
                              "\(queue.states[.running] ?? 0)", queue.oldestAvailable.map { duration(now.timeIntervalSince($0)) } ?? "-"])
            }
            if counts.isEmpty { print("No jobs waiting or running.") } else { printTable(table) }
            if !paused.isEmpty {
                print("\nPaused (no worker claims from them): " + paused.values.sorted { $0.queue < $1.queue }
                    .map { "\($0.queue) since \(isoTime($0.pausedAt)) by \($0.pausedBy)" }.joined(separator: "; "))
            }
            let outcomes = JobState.allCases.filter { !$0.isLive }.map { "\(finished[$0] ?? 0) \($0.rawValue)" }
            print("\nLast \(minutes) min: \(outcomes.joined(separator: ", ")) (\(String(format: "%.1f", perMinute)) completed per minute)")
            if !staleness.isEmpty {
                print("\nPresets: " + staleness.map { "\($0.preset) v\($0.currentVersion): \($0.stale) of \($0.assets) assets stale" }
                    .joined(separator: "; "))
            }
            print("\nWorkers: \(workers.count)")
            for worker in workers {
                let busy = worker.running.count
                let state = liveness.state(of: worker, at: now)
                let heard = state == .suspect ? "  suspect: last heard \(duration(now.timeIntervalSince(worker.seenAt))) ago"
                    : state == .stopping ? "  stopping" : ""
                print("  \(worker.id)  queues \(worker.queues.joined(separator: ","))  \(busy)/\(worker.slots) slots busy  "
                      + "up \(duration(now.timeIntervalSince(worker.startedAt)))\(heard)")
                for job in worker.running {
                    print("    job \(job.id)  \(job.stage)  \(duration(now.timeIntervalSince(job.since)))")
                }
            }
        }
    }
}

extension Status {
    static func json(_ queue: QueueCounts, now: Date, paused: PausedQueue? = nil) -> JSONValue {
        .object([
            "queue": .string(queue.queue), "paused": .bool(paused != nil),
            "pausedAt": paused.map { .string(isoTime($0.pausedAt)) } ?? .null, "pausedBy": paused.map { .string($0.pausedBy) } ?? .null,
            "available": .int(queue.states[.available] ?? 0),
            "scheduled": .int(queue.states[.scheduled] ?? 0), "retrying": .int(queue.retrying),
            "running": .int(queue.states[.running] ?? 0),
            "oldestAvailableSeconds": queue.oldestAvailable.map { .decimal(now.timeIntervalSince($0)) } ?? .null,
        ])
    }

    static func json(_ paused: PausedQueue) -> JSONValue {
        .object(["queue": .string(paused.queue), "pausedAt": .string(isoTime(paused.pausedAt)), "pausedBy": .string(paused.pausedBy)])
    }

    static func json(_ worker: WorkerStatus, state: WorkerLiveness.State, now: Date) -> JSONValue {
        let running: [JSONValue] = worker.running.map { job in
            .object(["id": .int(Int(job.id)), "stage": .string(job.stage), "seconds": .decimal(now.timeIntervalSince(job.since))])
        }
        return .object([
            "id": .string(worker.id), "host": .string(worker.host), "pid": .int(worker.pid),
            "queues": .array(worker.queues.map(JSONValue.string)), "slots": .int(worker.slots),
            "startedAt": .string(isoTime(worker.startedAt)), "seenSecondsAgo": .decimal(now.timeIntervalSince(worker.seenAt)),
            "stopping": .bool(worker.stopping), "state": .string(state.rawValue), "finished": worker.activity["finished"] ?? .object([]), "running": .array(running),
        ])
    }
}
