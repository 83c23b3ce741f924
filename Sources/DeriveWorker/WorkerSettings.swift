import DeriveLanguage
import DeriveJobs
import Foundation

/// How a worker runs: which queues, how many jobs at once, how long its leases last.
public struct WorkerSettings: Sendable {
    /// The name its runs carry as their lease owner: `host:pid:random`.
    public var id: String
    public var queues: [String]
    /// Jobs run at once (default: one per core).
    public var slots: Int
    /// Seconds a claimed job is leased for; a job running longer than a third of it gets
    /// heartbeats, and one whose worker stops heartbeating is rescued after it.
    public var lease: Double
    /// Seconds between claims when idle and no notification arrives.
    public var pollInterval: Double
    /// Seconds in-flight jobs get to finish after SIGTERM or SIGINT before they are released.
    public var grace: Double
    /// Exit once no job is available or running in the queues.
    public var untilIdle: Bool
    public var retryPolicy: RetryPolicy
    /// Seconds between looking for expired leases, and between status reports.
    public var rescueInterval: Double
    public var statusInterval: Double
    /// Seconds between reads of the queue depth for the metrics; nil when no metrics are
    /// served, since counting the jobs table costs a scan of it.
    public var queueDepthInterval: Double?
    /// Seconds between looks at the schedules; nil runs no scheduler in this worker.
    public var schedulerInterval: Double?
    /// Delete the objects and rows of outputs a newer preset version replaced (else keep them,
    /// marked superseded).
    public var deleteSuperseded: Bool
    /// Seconds between removals of abandoned writes from the store (temporary files and
    /// multipart uploads that killed writers left) and of unrecorded ones (what the write
    /// ledger names); nil: none in this worker.
    public var abandonedSweepInterval: Double?
    /// Seconds after which such a write counts as abandoned.
    public var abandonedAfter: Double
    /// Seconds between housekeeping ticks (heartbeats, promotion, and whichever rescue,
    /// status or queue-depth reading is due). A second in production; tests shorten it to
    /// see leases and cancellations work in milliseconds.
    public var tickInterval: Double = 1

    public init(id: String = WorkerSettings.defaultID(), queues: [String] = ["default"],
                slots: Int = ProcessInfo.processInfo.activeProcessorCount, lease: Double = 60, pollInterval: Double = 1,
                grace: Double = 30, untilIdle: Bool = false, retryPolicy: RetryPolicy = RetryPolicy(), rescueInterval: Double = 5,
                statusInterval: Double = 5, queueDepthInterval: Double? = nil, schedulerInterval: Double? = 15,
                deleteSuperseded: Bool = false, abandonedSweepInterval: Double? = nil,
                abandonedAfter: Double = AbandonedWrites.defaultAge) {
        self.id = id
        self.queues = queues
        self.slots = max(1, slots)
        self.lease = lease
        self.pollInterval = pollInterval
        self.grace = grace
        self.untilIdle = untilIdle
        self.retryPolicy = retryPolicy
        self.rescueInterval = rescueInterval
        self.statusInterval = statusInterval
        self.queueDepthInterval = queueDepthInterval
        self.schedulerInterval = schedulerInterval
        self.deleteSuperseded = deleteSuperseded
        self.abandonedSweepInterval = abandonedSweepInterval
        self.abandonedAfter = abandonedAfter
    }

    public static func defaultID() -> String {
        "\(hostName()):\(ProcessInfo.processInfo.processIdentifier):\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
    }

    public static func hostName() -> String {
        ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "localhost"
    }
}
