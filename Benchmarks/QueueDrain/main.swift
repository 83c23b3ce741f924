// queue-drain: submits and drains no-op jobs through a JobStore, for the queue benchmark and
// the multi-process conformance test. Each claimer thread claims a batch, "runs" it (does
// nothing) and hands its completions to a CompletionBatcher, as a worker's slots do, until no
// live job is left in the queue.
//
//   queue-drain submit --database URL --jobs N [--queue Q] [--batch 1000]
//   queue-drain drain  --database URL [--claimers 5] [--batch 10] [--queue Q] [--lease 60] [--record FILE]
//                      [--start-at UNIX_SECONDS]
//
// Prints one JSON line. --record writes every claimed job as "id attempt" lines, so a test can
// check that no job was claimed twice and none was lost. --start-at holds the claimers until
// then, so processes launched one after another (slowly, on a loaded machine) drain together.

import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveSQLite
import Foundation
import Synchronization

struct Options {
    var command = ""
    var database = ""
    var jobs = 0
    var claimers = 5
    var batch = 10
    var queue = "default"
    var lease = 60.0
    var record: String?
    var startAt: Int?

    init(_ arguments: [String]) throws {
        var rest = arguments.makeIterator()
        command = rest.next() ?? ""
        while let flag = rest.next() {
            guard let value = rest.next() else { throw Usage("\(flag) needs a value") }
            switch flag {
            case "--database": database = value
            case "--jobs": jobs = try Self.number(flag, value)
            case "--claimers": claimers = try Self.number(flag, value)
            case "--batch": batch = try Self.number(flag, value)
            case "--queue": queue = value
            case "--lease": lease = Double(try Self.number(flag, value))
            case "--record": record = value
            case "--start-at": startAt = try Self.number(flag, value)
            default: throw Usage("unknown option \(flag)")
            }
        }
        guard ["submit", "drain"].contains(command), !database.isEmpty else {
            throw Usage("usage: queue-drain submit|drain --database URL [options]")
        }
    }

    static func number(_ flag: String, _ value: String) throws -> Int {
        guard let number = Int(value), number > 0 else { throw Usage("\(flag) needs a positive number, got \(value)") }
        return number
    }
}

struct Usage: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Opens the queue, creating its tables first if they are missing.
func openStore(_ text: String, connections: Int) throws -> any JobStore {
    switch try QueueLocation.parse(text) {
    case .postgres(let url):
        _ = try Migrator().migrate(url: url)
        return PostgresJobStore(url: url, poolCapacity: connections)
    case .sqlite(let path): return try SQLiteJobStore(path: path, poolCapacity: connections)
    }
}

func submit(_ options: Options, into store: any JobStore) throws -> JSONValue {
    let start = Date()
    var submitted = 0
    while submitted < options.jobs {
        let count = min(options.batch, options.jobs - submitted)
        let jobs = (0..<count).map { index in
            NewJob(payload: .object(["version": .int(1), "source": .string("noop:\(submitted + index)"), "preset": .string("noop")]),
                   queue: options.queue)
        }
        submitted += try store.submit(jobs).count
    }
    let seconds = Date().timeIntervalSince(start)
    return .object(["submitted": .int(submitted), "seconds": .decimal(seconds), "jobs_per_second": .decimal(Double(submitted) / seconds)])
}

/// What every claimer thread found, merged at the end.
struct Tally {
    var claimed: [(JobID, Int)] = []
    var completed = 0
    /// Claim-to-complete, in milliseconds: from the claim returning to the completion's commit.
    var latencies: [Double] = []
    var errors: [String] = []
}

func drain(_ options: Options, from store: any JobStore) throws -> JSONValue {
    let tally = Mutex(Tally())
    /// When each job was claimed, until its completion is recorded.
    let claimedAt = Mutex<[JobID: UInt64]>([:])
    // As a worker does: runs finished by every claimer go to one batcher, which archives them
    // a few milliseconds' worth at a time.
    let completions = CompletionBatcher(store: store) { batch, result in
        let now = DispatchTime.now().uptimeNanoseconds
        let starts = claimedAt.withLock { starts in batch.map { starts.removeValue(forKey: $0.run.id) ?? now } }
        tally.withLock { total in
            switch result {
            case .success(let done):
                total.completed += done.count
                total.latencies += starts.map { Double(now - $0) / 1e6 }
            case .failure(let error):
                total.errors.append("\(error)")
            }
        }
    }
    let owner = "queue-drain-\(ProcessInfo.processInfo.processIdentifier)"
    if let startAt = options.startAt {
        let wait = Double(startAt) - Date().timeIntervalSince1970
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
    }
    let start = Date()
    let threads = (0..<options.claimers).map { index in
        Thread {
            var claimed: [(JobID, Int)] = []
            var errors: [String] = []
            var idle = 0
            while true {
                do {
                    let jobs = try store.claim(queues: [options.queue], limit: options.batch, owner: "\(owner)-\(index)", lease: options.lease)
                    if jobs.isEmpty {
                        // Done when nothing is live in the queue; until then others may yet
                        // release or fail jobs back into it.
                        let live = try store.counts().first { $0.queue == options.queue }?.states.values.reduce(0, +) ?? 0
                        if live == 0 { break }
                        idle += 1
                        Thread.sleep(forTimeInterval: min(0.05, 0.001 * Double(idle)))
                        continue
                    }
                    idle = 0
                    let now = DispatchTime.now().uptimeNanoseconds
                    claimedAt.withLock { starts in for job in jobs { starts[job.run.id] = now } }
                    claimed.append(contentsOf: jobs.map { ($0.run.id, $0.run.attempt) })
                    for job in jobs { completions.add(Completion(run: job.run)) }
                } catch {
                    errors.append("\(error)")
                    if errors.count > 100 { break }
                    Thread.sleep(forTimeInterval: 0.05)
                }
            }
            let (mine, failures) = (claimed, errors)
            tally.withLock { total in
                total.claimed += mine
                total.errors += failures
            }
        }
    }
    threads.forEach { $0.start() }
    while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.002) }
    completions.close()
    let seconds = Date().timeIntervalSince(start)
    let result = tally.withLock { $0 }
    if let path = options.record {
        let lines = result.claimed.map { "\($0.0) \($0.1)\n" }.joined()
        try lines.write(toFile: path, atomically: true, encoding: .utf8)
    }
    let sorted = result.latencies.sorted()
    func percentile(_ p: Double) -> JSONValue {
        sorted.isEmpty ? .null : .decimal(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
    }
    return .object([
        "claimed": .int(result.claimed.count), "completed": .int(result.completed), "seconds": .decimal(seconds),
        "jobs_per_second": .decimal(Double(result.completed) / max(seconds, 1e-9)),
        "claim_to_complete_ms": .object(["p50": percentile(0.5), "p90": percentile(0.9), "p99": percentile(0.99), "max": percentile(1)]),
        "errors": .array(Array(result.errors.prefix(5)).map(JSONValue.string)),
    ])
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    let store = try openStore(options.database, connections: options.claimers + 1)
    let report = options.command == "submit" ? try submit(options, into: store) : try drain(options, from: store)
    print(JSONWriter.compact(report))
} catch {
    FileHandle.standardError.write(Data("queue-drain: \(error)\n".utf8))
    exit(1)
}
