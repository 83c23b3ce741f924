import Foundation
import Synchronization

/// Named, versioned presets kept in the queue's database (`derive.presets`): saving a name
/// again makes a new version; jobs resolve the newest version that is not retired.
public protocol PresetStore: Sendable {
    /// Saves `outputs` (the job JSON's `outputs` array, already validated) as the next version
    /// of `name`; returns that version.
    func savePreset(name: String, outputs: JSONValue) throws(DeriveError) -> Int
    /// The newest version of each preset, retired ones too when asked.
    func presets(includingRetired: Bool) throws(DeriveError) -> [StoredPreset]
    /// Every version of one preset, newest first.
    func presetVersions(_ name: String) throws(DeriveError) -> [StoredPreset]
    /// Retires every version of `name`: jobs naming it fail; the rows stay for the record.
    /// Returns whether there was such a preset.
    func retirePreset(_ name: String) throws(DeriveError) -> Bool
}

public struct StoredPreset: Sendable, Equatable {
    public var name: String
    public var version: Int
    public var outputs: JSONValue
    public var createdAt: Date
    public var retiredAt: Date?

    public init(name: String, version: Int, outputs: JSONValue, createdAt: Date, retiredAt: Date?) {
        self.name = name
        self.version = version
        self.outputs = outputs
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

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

/// Reading the queue for people: lists of jobs and recent throughput.
public protocol QueueInspector: Sendable {
    /// Jobs in `state` (any live state when nil), in `queue` (any when nil): live ones oldest
    /// first, finished ones most recent first.
    func jobs(state: JobState?, queue: String?, limit: Int) throws(DeriveError) -> [JobSnapshot]
    /// Jobs finished since `date`, by outcome.
    func finishedCounts(since date: Date) throws(DeriveError) -> [JobState: Int]
}

/// Everything Derive keeps in its database, PostgreSQL or SQLite.
public typealias DeriveDatabase = JobStore & PresetStore & WorkerRegistry & QueueInspector & ScheduleStore & ReprocessStore

/// Presets for job resolution, read from the database and kept for a few seconds, so a busy
/// worker does not ask for the same preset for every job, and a new version is picked up soon.
public final class DatabasePresetCatalog: PresetCatalog {
    private let store: any PresetStore
    private let ttl: Double
    private let cached = Mutex<(at: Date, presets: [String: StoredPreset])?>(nil)

    public init(store: any PresetStore, ttl: Double = 5) {
        self.store = store
        self.ttl = ttl
    }

    public func preset(named name: String) throws -> Preset? {
        let presets = try current()
        guard let stored = presets[name], stored.retiredAt == nil else { return nil }
        let outputs = try JSONChainDecoder().decodeOutputs(stored.outputs)
        return Preset(name: stored.name, version: stored.version, outputs: outputs)
    }

    private func current() throws(DeriveError) -> [String: StoredPreset] {
        if let known = cached.withLock({ $0 }), Date().timeIntervalSince(known.at) < ttl { return known.presets }
        let fresh = Dictionary(try store.presets(includingRetired: false).map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        cached.withLock { $0 = (Date(), fresh) }
        return fresh
    }
}
