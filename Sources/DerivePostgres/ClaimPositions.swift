/// Where this process last claimed in each queue and priority, so the next claim starts there.
///
/// Why: a claimed or finished job leaves a dead entry in the claim index until VACUUM removes
/// it, and VACUUM cannot while any transaction anywhere is older than the entry. A claim that
/// scanned from the start of the queue would step over every job claimed since the oldest open
/// transaction began: one long report query or idle-in-transaction session, and claims slow
/// down in proportion to the jobs run since. Starting each priority's scan after the last job
/// claimed there keeps a claim's cost independent of that history.
///
/// A job can become available behind a position (released, promoted with an older run-at, or
/// left by a claim that rolled back). So a position is a hint: it is dropped whenever this
/// process puts jobs back, and a full scan from the start runs at least every
/// `rescanInterval` seconds (longer when full scans are slow, so they stay a small fraction
/// of the time), which bounds how long such a job can wait behind newer ones.
struct ClaimPositions: Sendable {
    /// The last claimed job in one queue and priority, in claim order.
    struct Position: Sendable, Hashable, Comparable {
        var runAtMicros: Int64
        var id: Int64

        static func < (a: Position, b: Position) -> Bool {
            (a.runAtMicros, a.id) < (b.runAtMicros, b.id)
        }
    }

    /// One range of the claim index to scan, in claim order: a whole span of priorities, or
    /// one priority after a position.
    struct Segment: Sendable, Hashable {
        var queue: String
        var lowestPriority: Int
        var highestPriority: Int
        var after: Position?
    }

    /// PostgreSQL's integer range, which priorities live in.
    static let priorities = Int(Int32.min)...Int(Int32.max)
    /// A queue with jobs at more priorities than this keeps positions for the most recent ones.
    static let maxPositionsPerQueue = 16

    var positions: [String: [Int: Position]] = [:]
    var rescanInterval: Double
    private var lastFullScan: UInt64 = 0
    private var fullScanSeconds: Double = 0

    init(rescanInterval: Double = 1) {
        self.rescanInterval = rescanInterval
    }

    /// Seconds between full scans: the configured interval, or 20 times the last full scan's
    /// time when that was slow.
    var currentInterval: Double { max(rescanInterval, 20 * fullScanSeconds) }

    /// Whether the next claim should scan from the start.
    func fullScanDue(now: UInt64) -> Bool {
        Double(now &- lastFullScan) / 1e9 >= currentInterval
    }

    /// The ranges to scan for `queues`, from the positions, or from the start when `full`.
    func segments(for queues: [String], full: Bool) -> [Segment] {
        queues.flatMap { queue -> [Segment] in
            let known = full ? [] : (positions[queue] ?? [:]).sorted { $0.key > $1.key }
            var segments: [Segment] = []
            var upper = Self.priorities.upperBound
            for (priority, position) in known {
                if priority < upper {
                    segments.append(Segment(queue: queue, lowestPriority: priority + 1, highestPriority: upper, after: nil))
                }
                segments.append(Segment(queue: queue, lowestPriority: priority, highestPriority: priority, after: position))
                upper = priority - 1
            }
            if upper >= Self.priorities.lowerBound {
                segments.append(Segment(queue: queue, lowestPriority: Self.priorities.lowerBound, highestPriority: upper, after: nil))
            }
            return segments
        }
    }

    /// Records a claim's jobs. After a full scan the positions are replaced by what it found,
    /// so jobs it found behind old positions are followed by the ones after them.
    mutating func record(_ claimed: [(queue: String, priority: Int, position: Position)], queues: [String], full: Bool,
                         started: UInt64, now: UInt64) {
        if full {
            for queue in queues { positions[queue] = nil }
            lastFullScan = now
            fullScanSeconds = Double(now &- started) / 1e9
        }
        for job in claimed {
            var queue = positions[job.queue] ?? [:]
            if let known = queue[job.priority], known >= job.position { continue }
            if queue[job.priority] == nil, queue.count >= Self.maxPositionsPerQueue { queue = [:] }
            queue[job.priority] = job.position
            positions[job.queue] = queue
        }
    }

    /// Drops every position: the next claim scans from the start.
    mutating func forget() {
        positions = [:]
        lastFullScan = 0
    }
}
