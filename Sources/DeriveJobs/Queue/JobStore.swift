import DeriveLanguage
import Foundation

public typealias JobID = Int64

/// A job to enqueue. The payload is the job document (validated by the worker, not here: a
/// malformed one fails permanently with the validation message in its errors).
public struct NewJob: Sendable, Equatable {
    public var payload: JSONValue
    public var queue: String
    /// Higher runs first.
    public var priority: Int
    /// When it may run; nil or past means now.
    public var runAt: Date?
    public var maxAttempts: Int
    /// While a live job has this key, another with the same key is not enqueued.
    public var dedupeKey: String?
    /// The name of the file an uploaded original was stored from (`IMG_0412.jpg`), recorded
    /// beside the job's source (`originals/<sha256>.jpg`) so the job can be found by it.
    public var originalName: String?

    public init(payload: JSONValue, queue: String = "default", priority: Int = 0, runAt: Date? = nil, maxAttempts: Int = 5,
                dedupeKey: String? = nil, originalName: String? = nil) {
        self.originalName = originalName.map(OriginalName.clean)
        self.payload = payload
        self.queue = queue
        self.priority = priority
        self.runAt = runAt
        self.maxAttempts = maxAttempts
        self.dedupeKey = dedupeKey
    }
}

public struct SubmitResult: Sendable, Hashable {
    public var id: JobID
    /// A live job with the same dedupe key already existed; `id` is that job's.
    public var deduplicated: Bool

    public init(id: JobID, deduplicated: Bool) {
        self.id = id
        self.deduplicated = deduplicated
    }
}

/// One run of a job: the job, its attempt, and who holds its lease. Completion, failure and
/// release are accepted only while all three still match, so a late or stale worker can never
/// overwrite a newer state.
public struct JobRun: Sendable, Hashable {
    public var id: JobID
    public var attempt: Int
    public var owner: String

    public init(id: JobID, attempt: Int, owner: String) {
        self.id = id
        self.attempt = attempt
        self.owner = owner
    }
}

public struct ClaimedJob: Sendable, Equatable {
    public var run: JobRun
    public var queue: String
    public var priority: Int
    public var maxAttempts: Int
    public var payload: JSONValue
    /// When it became due.
    public var runAt: Date
    public var leaseExpiresAt: Date
    public var createdAt: Date

    public init(run: JobRun, queue: String, priority: Int, maxAttempts: Int, payload: JSONValue, runAt: Date, leaseExpiresAt: Date,
                createdAt: Date) {
        self.run = run
        self.queue = queue
        self.priority = priority
        self.maxAttempts = maxAttempts
        self.payload = payload
        self.runAt = runAt
        self.leaseExpiresAt = leaseExpiresAt
        self.createdAt = createdAt
    }

    /// Claim order: higher priority first, then the longest due, then the oldest id.
    public static func claimOrder(_ a: ClaimedJob, _ b: ClaimedJob) -> Bool {
        if a.priority != b.priority { return a.priority > b.priority }
        if a.runAt != b.runAt { return a.runAt < b.runAt }
        return a.run.id < b.run.id
    }
}

public enum JobState: String, Sendable, Hashable, CaseIterable {
    case available, scheduled, running
    case completed, failed, cancelled

    public var isLive: Bool { self == .available || self == .scheduled || self == .running }
}

public struct Completion: Sendable, Equatable {
    public var run: JobRun
    /// What the job produced (the worker's report), kept with the archived job.
    public var result: JSONValue
    /// The asset and derivative rows, written in the transaction that archives the job, so
    /// metadata is never half-written and never written for a run that lost its job.
    public var record: DerivationRecord?

    public init(run: JobRun, result: JSONValue = .null, record: DerivationRecord? = nil) {
        self.run = run
        self.result = result
        self.record = record
    }
}

public struct Failure: Sendable, Hashable {
    public var run: JobRun
    public var error: DeriveError

    public init(run: JobRun, error: DeriveError) {
        self.run = run
        self.error = error
    }
}

/// What became of a failed run.
public enum FailureOutcome: Sendable, Hashable {
    /// Back in the queue, to run again after `delay` seconds.
    case retrying(delay: Double)
    /// Archived as failed: the error is permanent or the attempts are spent.
    case failed
    /// The job had been asked to cancel: archived as cancelled rather than retried.
    case cancelled
    /// The run no longer held its job (lease lost, cancelled, already finished): nothing changed.
    case stale
}

public struct HeartbeatResult: Sendable, Hashable {
    /// Runs whose leases were extended.
    public var extended: Set<JobID>
    /// Runs whose jobs have been asked to cancel: the worker should stop them.
    public var cancelRequested: Set<JobID>

    public init(extended: Set<JobID>, cancelRequested: Set<JobID>) {
        self.extended = extended
        self.cancelRequested = cancelRequested
    }
}

public struct RescueResult: Sendable, Hashable {
    /// Jobs whose leases had expired, back in the queue.
    public var requeued: [JobID]
    /// Jobs failed for losing their lease too often or running out of attempts.
    public var failed: [JobID]
    /// Each of them, with the error recorded in its history (the rescuer logs one line each).
    public var rescued: [RescuedRun]

    public init(requeued: [JobID], failed: [JobID], rescued: [RescuedRun] = []) {
        self.requeued = requeued
        self.failed = failed
        self.rescued = rescued
    }

    /// Records what a rescue decided for one expired run.
    public mutating func add(_ expired: ExpiredLease, _ disposition: Disposition) {
        let outcome: RescuedRun.Outcome, entry: JSONValue
        switch disposition {
        case .requeue(_, let recorded, _): (outcome, entry) = (.requeued, recorded)
        case .archive(.cancelled, let recorded): (outcome, entry) = (.cancelled, recorded)
        case .archive(_, let recorded): (outcome, entry) = (.failed, recorded)
        }
        if outcome == .requeued { requeued.append(expired.run.id) } else { failed.append(expired.run.id) }
        let detail: String
        if case .string(let text)? = entry["detail"] { detail = text } else { detail = "" }
        rescued.append(RescuedRun(id: expired.run.id, attempt: expired.run.attempt, owner: expired.owner, outcome: outcome, detail: detail))
    }
}

public enum CancelResult: String, Sendable, Hashable {
    /// It was waiting; it is archived as cancelled now.
    case cancelled
    /// It is running; the worker stops it at its next heartbeat.
    case requested
    /// It had already finished.
    case finished
    case notFound = "not_found"
}

/// A job as the database sees it, live or archived.
public struct JobSnapshot: Sendable, Equatable {
    public var id: JobID
    public var queue: String
    public var state: JobState
    public var priority: Int
    public var attempt: Int
    public var maxAttempts: Int
    public var runAt: Date?
    public var leaseOwner: String?
    /// When a running job's lease ends unless its worker extends it; nil when not running.
    public var leaseExpiresAt: Date?
    public var dedupeKey: String?
    public var cancelRequested: Bool
    public var payload: JSONValue
    /// Every failure so far: `{"attempt", "at", "code", "detail", "retryable"}`.
    public var errors: [JSONValue]
    public var result: JSONValue?
    public var createdAt: Date
    public var finishedAt: Date?
    /// When its last attempt was claimed (running, or finished after running); nil for a job
    /// that never ran, or was put back unrun.
    public var startedAt: Date?
    /// The worker that ran its last attempt: the lease's owner while it runs, kept in the
    /// archive once it finished (nil for a job cancelled before any worker held it).
    public var worker: String?

    public init(id: JobID, queue: String, state: JobState, priority: Int, attempt: Int, maxAttempts: Int, runAt: Date?,
                leaseOwner: String?, dedupeKey: String?, cancelRequested: Bool, payload: JSONValue, errors: [JSONValue],
                result: JSONValue?, createdAt: Date, finishedAt: Date?, leaseExpiresAt: Date? = nil, startedAt: Date? = nil,
                worker: String? = nil) {
        self.leaseExpiresAt = leaseExpiresAt
        self.startedAt = startedAt
        self.worker = worker
        self.id = id
        self.queue = queue
        self.state = state
        self.priority = priority
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.runAt = runAt
        self.leaseOwner = leaseOwner
        self.dedupeKey = dedupeKey
        self.cancelRequested = cancelRequested
        self.payload = payload
        self.errors = errors
        self.result = result
        self.createdAt = createdAt
        self.finishedAt = finishedAt
    }
}

/// Queue depth by queue and state, and the age of the oldest available job.
public struct QueueCounts: Sendable, Hashable {
    public var queue: String
    public var states: [JobState: Int]
    public var oldestAvailable: Date?
    /// Scheduled jobs that have run before and wait to run again (a retry's backoff, a
    /// rescued lease): work begun and not finished, unlike a job submitted to run later.
    public var retrying: Int

    public init(queue: String, states: [JobState: Int], oldestAvailable: Date?, retrying: Int = 0) {
        self.queue = queue
        self.states = states
        self.oldestAvailable = oldestAvailable
        self.retrying = retrying
    }
}

/// The queue: PostgreSQL in production, SQLite embedded; one set of semantics, checked by one
/// conformance suite. Every method is one short transaction, safe to call from many workers
/// in many processes at once.
public protocol JobStore: Sendable {
    func submit(_ jobs: [NewJob]) throws(DeriveError) -> [SubmitResult]

    /// Claims up to `limit` available jobs (by priority, then run-at, then id), leasing them to
    /// `owner` for `lease` seconds. Jobs others hold are skipped, never waited for.
    func claim(queues: [String], limit: Int, owner: String, lease: Double) throws(DeriveError) -> [ClaimedJob]

    /// Extends the leases of long runs; reports runs whose jobs were asked to cancel.
    func heartbeat(_ runs: [JobRun], lease: Double) throws(DeriveError) -> HeartbeatResult

    /// Archives finished runs as completed, with their asset and derivative rows, in one
    /// transaction. Returns the ids completed; the others no longer held their jobs (and wrote
    /// nothing).
    func complete(_ completions: [Completion]) throws(DeriveError) -> Set<JobID>

    /// Records failures: retryable ones go back with backoff until their attempts are spent,
    /// permanent ones are archived as failed at once.
    func fail(_ failures: [Failure], policy: RetryPolicy) throws(DeriveError) -> [JobID: FailureOutcome]

    /// Archives runs the worker stopped because their jobs were cancelled.
    func acknowledgeCancel(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID>

    /// Puts runs back without spending an attempt (a worker shutting down).
    func release(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID>

    /// Requeues jobs whose leases expired (their worker died); fails those that lost their
    /// lease `policy.maxLeaseLosses` times or have no attempts left. Each one's error names its
    /// worker and, from the worker's status reports where the store keeps them, whether it died
    /// or is alive and only stopped extending the lease. Any worker may call it.
    func rescueExpired(limit: Int, policy: RetryPolicy) throws(DeriveError) -> RescueResult

    /// Makes scheduled jobs whose time has come available.
    func promoteScheduled(limit: Int) throws(DeriveError) -> Int

    func cancel(_ id: JobID) throws(DeriveError) -> CancelResult

    /// Runs a failed or cancelled job again (as a new live job with fresh attempts), or a
    /// waiting retry now. Returns the live job's id, or nil if there is nothing to retry.
    ///
    /// Deduplicated while live, as `submit` is: the new job carries the archived job's dedupe
    /// key, or `retry:<id>` when it had none, and a retry that fails passes its key on, so every
    /// generation of one piece of work shares one key. While a live job holds that key, its id
    /// is returned and nothing is enqueued: retrying one job twice, or a failed job and the
    /// failed retry of it, yields one live job.
    func retry(_ id: JobID) throws(DeriveError) -> JobID?

    func job(_ id: JobID) throws(DeriveError) -> JobSnapshot?

    func counts() throws(DeriveError) -> [QueueCounts]

    /// One round trip to the database: for health checks.
    func ping() throws(DeriveError)

    /// Deletes archived jobs finished before `date`; returns how many.
    func prune(finishedBefore date: Date) throws(DeriveError) -> Int

    /// `prune(finishedBefore:)`, telling `progress` how many are deleted so far after each
    /// slice (the SQL stores delete ten thousand at a time): `derive prune`'s progress line.
    func prune(finishedBefore date: Date, progress: (Int) -> Void) throws(DeriveError) -> Int

    /// Stops every worker claiming from `queue` until it is resumed: the queue keeps accepting
    /// jobs, and runs already claimed finish. Held in the database, so it holds for workers on
    /// every machine (the claim itself skips paused queues). Idempotent: pausing a paused queue
    /// keeps its first pause and returns false. A name that is not a queue name is `invalidJob`.
    func pause(queue: String, by who: String) throws(DeriveError) -> Bool

    /// Lets workers claim from `queue` again. Returns whether it was paused.
    func resume(queue: String) throws(DeriveError) -> Bool

    /// The paused queues, by name.
    func pausedQueues() throws(DeriveError) -> [PausedQueue]

    /// Deletes the finished (archived) jobs among `ids`, never a waiting or running one.
    /// Returns the ids deleted; the others were live or did not exist.
    func deleteFinished(_ ids: [JobID]) throws(DeriveError) -> Set<JobID>
}

/// The file names uploaded originals were stored from, by the source a job names them by.
public enum OriginalName {
    /// The longest name kept (longer is cut).
    public static let length = 255

    /// The last path component, without control characters, at most `length` code points (as
    /// the databases count a text's length: a character may be several).
    public static func clean(_ name: String) -> String {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? name
        return codePoints(String(last.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }), length)
    }

    /// At most `count` code points of `text`.
    public static func codePoints(_ text: String, _ count: Int) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.prefix(count))
        return String(scalars)
    }

    /// The names to record for `jobs`: (source, name) for each job with both, once each.
    public static func pairs(_ jobs: [NewJob]) -> [(source: String, name: String)] {
        var seen = Set<[String]>()
        return jobs.compactMap { job in
            guard let name = job.originalName, !name.isEmpty, case .string(let source)? = job.payload["source"],
                  seen.insert([source, name]).inserted else { return nil }
            return (source, name)
        }
    }
}

/// A queue no worker claims from until it is resumed.
public struct PausedQueue: Sendable, Hashable {
    public var queue: String
    public var pausedAt: Date
    /// Who paused it, as they said (`dashboard`, `cli:alice@ops-1`).
    public var pausedBy: String

    public init(queue: String, pausedAt: Date, pausedBy: String) {
        self.queue = queue
        self.pausedAt = pausedAt
        self.pausedBy = pausedBy
    }

    /// The longest `pausedBy` kept (longer is cut).
    public static let byLength = 200

    /// `who` as it is kept: without control characters (a NUL cannot be stored), at most `byLength` code points.
    public static func by(_ who: String) -> String {
        OriginalName.codePoints(String(who.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }), byLength)
    }

    /// Refuses what is not a queue name (the rule jobs' queues follow), before any store sees it.
    public static func validate(_ queue: String) throws(DeriveError) {
        guard QueueName.isValid(queue) else {
            throw DeriveError(.invalidJob, "\(Quoted(queue)) is not a queue name: 1 to 64 of A-Z a-z 0-9 _ . -")
        }
    }
}

/// When failed runs are retried. Pure, so both stores decide alike and it can be tested.
public struct RetryPolicy: Sendable, Hashable {
    public var backoff: Backoff
    /// A job whose lease expires this many times (its worker keeps dying on it) is failed.
    public var maxLeaseLosses: Int

    public init(backoff: Backoff = Backoff(base: 5, factor: 2, maximum: 3600), maxLeaseLosses: Int = 3) {
        self.backoff = backoff
        self.maxLeaseLosses = maxLeaseLosses
    }

    /// Retry after a jittered backoff (at least what the origin asked for), or fail when the
    /// error is permanent or the attempts are spent.
    public func outcome<R: RandomNumberGenerator>(for error: DeriveError, attempt: Int, maxAttempts: Int,
                                                  using random: inout R) -> FailureOutcome {
        guard error.isRetryable, attempt < maxAttempts else { return .failed }
        let delay = max(backoff.delay(attempt: attempt, using: &random), error.retryAfter ?? 0)
        return .retrying(delay: delay)
    }

    public func outcome(for error: DeriveError, attempt: Int, maxAttempts: Int) -> FailureOutcome {
        var random = SystemRandomNumberGenerator()
        return outcome(for: error, attempt: attempt, maxAttempts: maxAttempts, using: &random)
    }
}

extension DeriveError {
    /// The entry appended to a job's error history.
    public func historyEntry(attempt: Int, at date: Date = Date()) -> JSONValue {
        .object([
            "attempt": .int(attempt), "at": .string(ISO8601DateFormatter().string(from: date)),
            "code": .string(code.rawValue), "detail": .string(detail), "retryable": .bool(isRetryable),
        ])
    }
}

extension JobStore {
    /// One slice: the whole archive at once.
    public func prune(finishedBefore date: Date, progress: (Int) -> Void) throws(DeriveError) -> Int {
        let deleted = try prune(finishedBefore: date)
        progress(deleted)
        return deleted
    }
}
