import DeriveLanguage
import Foundation

/// What each live worker says it is doing, so `derive status` can show it.
public protocol WorkerRegistry: Sendable {
    /// Records (or refreshes) a worker's status.
    func report(_ status: WorkerStatus) throws(DeriveError)
    /// Workers heard from since `date`, and forgets those not heard from for an hour.
    func workers(seenSince date: Date) throws(DeriveError) -> [WorkerStatus]
    /// Removes a worker that is stopping.
    func forgetWorker(_ id: String) throws(DeriveError)
}

public struct WorkerStatus: Sendable, Equatable {
    /// The lease owner name its runs carry: `host:pid:random`.
    public var id: String
    public var host: String
    public var pid: Int
    public var queues: [String]
    public var slots: Int
    public var startedAt: Date
    public var seenAt: Date
    /// Its jobs in flight.
    public var running: [RunningJob]
    /// Jobs it has finished, by outcome (`completed`, `failed`, `retried`, `cancelled`).
    public var finished: [String: Int]
    public var stopping: Bool

    public init(id: String, host: String, pid: Int, queues: [String], slots: Int, startedAt: Date, seenAt: Date, running: [RunningJob],
                finished: [String: Int], stopping: Bool) {
        self.id = id
        self.host = host
        self.pid = pid
        self.queues = queues
        self.slots = slots
        self.startedAt = startedAt
        self.seenAt = seenAt
        self.running = running
        self.finished = finished
        self.stopping = stopping
    }

    public struct RunningJob: Sendable, Equatable {
        public var id: JobID
        public var stage: String
        public var since: Date

        public init(id: JobID, stage: String, since: Date) {
            self.id = id
            self.stage = stage
            self.since = since
        }
    }

    /// `running` and `finished` as one JSON document, as the registry stores them.
    public var activity: JSONValue {
        .object([
            "running": .array(running.map { job in
                .object(["id": .int(Int(job.id)), "stage": .string(job.stage), "since": .decimal(job.since.timeIntervalSince1970)])
            }),
            "finished": .object(finished.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .int($0.value)) }),
            "stopping": .bool(stopping),
        ])
    }

    /// Reads `activity` back.
    public mutating func setActivity(_ json: JSONValue) {
        if case .array(let jobs)? = json["running"] {
            running = jobs.compactMap { job in
                guard case .number(let id)? = job["id"], let value = id.intValue, case .string(let stage)? = job["stage"],
                      case .number(let since)? = job["since"] else { return nil }
                return RunningJob(id: JobID(value), stage: stage, since: Date(timeIntervalSince1970: since.doubleValue))
            }
        }
        if case .object(let members)? = json["finished"] {
            finished = Dictionary(members.compactMap { member in
                guard case .number(let count) = member.value, let value = count.intValue else { return nil }
                return (member.key, value)
            }, uniquingKeysWith: { $1 })
        }
        if case .bool(let flag)? = json["stopping"] { stopping = flag }
    }
}

/// What an operator may believe about a worker from its last report: a worker reports every
/// few seconds, so one unheard for a while is suspect, and one unheard for a lease is gone
/// (its jobs are about to be rescued, if they were not already). What `derive status` and the
/// dashboard show.
public struct WorkerLiveness: Sendable, Hashable {
    public enum State: String, Sendable {
        case live, stopping, suspect, gone
    }

    public var suspectAfter: Double
    public var goneAfter: Double

    /// Suspect after three missed reports (every 5 s), gone after the default lease.
    public init(suspectAfter: Double = 15, goneAfter: Double = 60) {
        self.suspectAfter = suspectAfter
        self.goneAfter = goneAfter
    }

    public func state(of worker: WorkerStatus, at now: Date) -> State {
        let silent = now.timeIntervalSince(worker.seenAt)
        if silent > goneAfter { return .gone }
        if silent > suspectAfter { return .suspect }
        return worker.stopping ? .stopping : .live
    }

    /// The worker as it can be believed: of the jobs it last said it was running, only those
    /// its run still holds (the job is running, leased to this worker, and the lease has not
    /// ended); none when it is gone. A killed worker's report keeps naming jobs that were
    /// rescued and finished elsewhere; the queue's own rows say which are still its own.
    public func believed(_ worker: WorkerStatus, running jobs: [JobID: JobSnapshot], at now: Date) -> WorkerStatus {
        var worker = worker
        guard state(of: worker, at: now) != .gone else {
            worker.running = []
            return worker
        }
        worker.running = worker.running.filter { reported in
            guard let job = jobs[reported.id] else { return false }
            return job.state == .running && job.leaseOwner == worker.id && (job.leaseExpiresAt.map { $0 > now } ?? false)
        }
        return worker
    }
}

extension WorkerLiveness {
    /// The workers heard from since `date`, each as it can be believed (`believed`): what
    /// `derive status` and the dashboard show. Reads the queue's running jobs once (at most
    /// the slots of every worker, far fewer than the limit).
    public func workers(heardSince date: Date, from database: some WorkerRegistry & QueueInspector,
                        at now: Date) throws(DeriveError) -> [WorkerStatus] {
        let running = Dictionary(try database.jobs(state: .running, queue: nil, limit: 10_000).map { ($0.id, $0) }) { first, _ in first }
        return try database.workers(seenSince: date).map { believed($0, running: running, at: now) }
    }
}

