import DeriveLanguage
import Foundation

/// Reading the queue for people (`derive jobs`, `derive status`, the dashboard): lists of jobs,
/// failures by cause and recent throughput.
public protocol QueueInspector: Sendable {
    /// Jobs in `state` (any live state when nil), in `queue` (any when nil): live ones oldest
    /// first, finished ones most recent first.
    func jobs(state: JobState?, queue: String?, limit: Int) throws(DeriveError) -> [JobSnapshot]
    /// Jobs finished since `date`, by outcome.
    func finishedCounts(since date: Date) throws(DeriveError) -> [JobState: Int]
    /// A page of finished jobs, newest first, after `cursor` (the previous page's `next`).
    /// Keyset paging: a page costs the same on the thousandth page as on the first.
    func finishedJobs(_ filter: JobFilter, after cursor: JobCursor?, limit: Int) throws(DeriveError) -> JobPage
    /// Failed jobs since `date` grouped by their last error's code, most frequent first.
    func failureGroups(since date: Date) throws(DeriveError) -> [FailureGroup]
    /// Jobs finished since `date`, by outcome, in buckets of `seconds` (a chart's bars).
    func throughput(since date: Date, bucket seconds: Int) throws(DeriveError) -> [ThroughputBucket]
    /// Jobs finished since `date` in buckets of `seconds`, by queue, by the worker that ran
    /// them and by outcome (a chart per queue and per worker): at most `limit` groups, the
    /// newest buckets first when there are more.
    func finishedTotals(since date: Date, bucket seconds: Int, limit: Int) throws(DeriveError) -> [FinishedTotal]
    /// Jobs, live and finished, whose dedupe key is `key`, oldest first (at most `limit`): the
    /// generations of one piece of work. A retry of a job with no key carries `retry:<id>`, so
    /// `jobs(dedupeKey: "retry:7", ...)` lists the retries of job 7.
    func jobs(dedupeKey key: String, limit: Int) throws(DeriveError) -> [JobSnapshot]
    /// The file names recorded for each of `sources` at upload (`NewJob.originalName`), sorted;
    /// sources with none are left out.
    func originalNames(of sources: [String]) throws(DeriveError) -> [String: [String]]
}

/// Jobs that finished in one interval in one queue, run by one worker, with one outcome.
public struct FinishedTotal: Sendable, Hashable {
    public var start: Date
    public var queue: String
    /// nil: no worker held it (cancelled while waiting).
    public var worker: String?
    public var outcome: JobState
    public var jobs: Int

    public init(start: Date, queue: String, worker: String?, outcome: JobState, jobs: Int) {
        self.start = start
        self.queue = queue
        self.worker = worker
        self.outcome = outcome
        self.jobs = jobs
    }

    /// Columns: bucket (Unix seconds), queue, worker, outcome, jobs.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(start: Date(timeIntervalSince1970: try row.double("bucket")), queue: try row.string("queue"),
                  worker: try row.optionalString("worker"), outcome: try row.value("outcome", as: JobState.self), jobs: try row.int("jobs"))
    }
}

/// Which finished jobs a listing shows; each field set narrows it.
public struct JobFilter: Sendable, Hashable {
    /// `completed`, `failed` or `cancelled`; nil: any.
    public var outcome: JobState?
    public var queue: String?
    /// The code of the job's last error (`source_unavailable`...).
    public var errorCode: String?
    /// The source's host, as `SourceAddress.host(of:)` gives it (an S3 source's bucket).
    public var sourceHost: String?
    public var finishedSince: Date?
    /// Text the job's source contains, as written (case and all): a path, a file name, a key;
    /// or that a file name recorded for its source at upload contains (`NewJob.originalName`).
    /// No index serves it: the archive is scanned newest first until a page is full.
    public var sourceContains: String?

    public init(outcome: JobState? = nil, queue: String? = nil, errorCode: String? = nil, sourceHost: String? = nil,
                finishedSince: Date? = nil, sourceContains: String? = nil) {
        self.sourceContains = sourceContains
        self.outcome = outcome
        self.queue = queue
        self.errorCode = errorCode
        self.sourceHost = sourceHost?.lowercased()
        self.finishedSince = finishedSince
    }
}

/// Where a page of finished jobs ended: the next page starts with the jobs finished before
/// it (and, at the same instant, with a smaller id).
public struct JobCursor: Sendable, Hashable {
    public var finishedAt: Date
    public var id: JobID

    public init(finishedAt: Date, id: JobID) {
        self.finishedAt = finishedAt
        self.id = id
    }

    /// Microseconds since 1970: PostgreSQL keeps times to the microsecond, and the cursor
    /// must compare equal to the time it came from.
    public var finishedAtMicroseconds: Int64 { Int64((finishedAt.timeIntervalSince1970 * 1_000_000).rounded()) }
}

public struct JobPage: Sendable, Equatable {
    public var jobs: [JobSnapshot]
    /// Where the next page starts; nil when this one is the last.
    public var next: JobCursor?

    public init(jobs: [JobSnapshot], limit: Int) {
        self.jobs = jobs
        next = jobs.count == limit ? jobs.last.flatMap { job in job.finishedAt.map { JobCursor(finishedAt: $0, id: job.id) } } : nil
    }
}

/// Failed jobs that share the code of their last error.
public struct FailureGroup: Sendable, Equatable {
    public var code: String
    public var count: Int
    public var lastFailedAt: Date

    public init(code: String, count: Int, lastFailedAt: Date) {
        self.code = code
        self.count = count
        self.lastFailedAt = lastFailedAt
    }
}

/// Jobs finished in one interval, by outcome.
public struct ThroughputBucket: Sendable, Equatable {
    public var start: Date
    public var counts: [JobState: Int]

    public init(start: Date, counts: [JobState: Int]) {
        self.start = start
        self.counts = counts
    }
}

extension FailureGroup {
    /// Columns: code, jobs, last_failed_at.
    public init(row: DatabaseRow) throws(DeriveError) {
        self.init(code: try row.string("code"), count: try row.int("jobs"), lastFailedAt: try row.date("last_failed_at"))
    }
}

extension ThroughputBucket {
    /// Rows of: bucket (Unix seconds), outcome, jobs; one bucket per distinct start, oldest first.
    public static func from(rows: [DatabaseRow]) throws(DeriveError) -> [ThroughputBucket] {
        var buckets: [Double: [JobState: Int]] = [:]
        for row in rows {
            buckets[try row.double("bucket"), default: [:]][try row.value("outcome", as: JobState.self)] = try row.int("jobs")
        }
        return buckets.keys.sorted().map { ThroughputBucket(start: Date(timeIntervalSince1970: $0), counts: buckets[$0] ?? [:]) }
    }
}
