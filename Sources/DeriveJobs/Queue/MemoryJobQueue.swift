import DeriveLanguage
import Foundation
import Synchronization

/// The queue in memory: the same `JobStore` semantics as PostgreSQL and SQLite, checked by the
/// same conformance suite, for one process. It is what the worker's behaviour is tested
/// against in process (shutdown, leases, retries, cancellation, outages), on a clock the test
/// moves, and a reference for what the two SQL stores must do: each method is one critical
/// section, as each of theirs is one transaction.
public final class MemoryJobQueue: JobStore, QueueInspector, WorkerRegistry {
    /// A live job: waiting (`available`, `scheduled`) or `running` under a lease.
    struct LiveJob {
        var id: JobID
        var queue: String
        var state: JobState
        var priority: Int
        var runAt: Double
        var attempt = 0
        var maxAttempts: Int
        var leaseOwner: String?
        var leaseExpiresAt: Double?
        var leaseLosses = 0
        var cancelRequested = false
        var dedupeKey: String?
        var payload: JSONValue
        var errors: [JSONValue] = []
        var createdAt: Double
        /// When the last attempt was claimed (kept while it waits out a backoff, as the SQL
        /// stores keep `started_at`; cleared when a run is put back unrun).
        var startedAt: Double?

        func holds(_ run: JobRun) -> Bool {
            state == .running && attempt == run.attempt && leaseOwner == run.owner
        }

        var ended: EndedRun {
            EndedRun(id: id, attempt: attempt, maxAttempts: maxAttempts, leaseLosses: leaseLosses, cancelRequested: cancelRequested)
        }
    }

    /// A finished job, as the archive keeps it.
    struct ArchivedJob {
        var job: LiveJob
        var outcome: JobState
        var result: JSONValue?
        var finishedAt: Double
    }

    struct State {
        var nextID: JobID = 1
        var live: [JobID: LiveJob] = [:]
        var archive: [JobID: ArchivedJob] = [:]
        /// What completions recorded, in order: the asset and derivative rows a SQL store writes.
        var records: [(job: JobID, record: DerivationRecord)] = []
        var workers: [String: WorkerStatus] = [:]
        /// Queues no claim takes from, by name (the SQL stores' `paused_queues`).
        var paused: [String: PausedQueue] = [:]
        /// The file names uploads were stored from, by source (the SQL stores' `original_names`).
        var originalNames: [String: Set<String>] = [:]

        /// Whether a job's source, or a name recorded for it, contains `text`.
        func matches(_ payload: JSONValue, _ text: String) -> Bool {
            guard case .string(let source)? = payload["source"] else { return false }
            return source.contains(text) || (originalNames[source] ?? []).contains { $0.contains(text) }
        }
        /// Set by `failCalls(with:)`: every call throws it, as a store whose database is down.
        var outage: DeriveError?
        /// `derive serve`'s records (`ServedAssets`), by cloud and public id.
        /// Every change moves `servedGeneration` on (the stores' triggers count only changes
        /// and deletions; a count of every write drops a cache more often, never less).
        var served: [ServedKey: ServedAsset] = [:] { didSet { servedGeneration += 1 } }
        var servedGeneration: Int64 = 0
        var notifications: [NotificationRecord] = []
        /// `derive serve`'s pending notifications, by id.
        var outbox: [Int64: OutboxNotification] = [:]
        /// Outbox rows written with an upload and neither released nor claimed yet.
        var heldOutbox: Set<Int64> = []
        var lastOutboxID: Int64 = 0
        /// `derive serve`'s upload mappings: templates by cloud and folder.
        var uploadMappings: [String: [String: String]] = [:]

        /// Enqueues a job as `submit` does.
        mutating func enqueue(_ job: NewJob, at now: Double) -> SubmitResult {
            let runAt = job.runAt?.timeIntervalSince1970 ?? now
            return enqueue(dedupeKey: job.dedupeKey) { id in
                LiveJob(id: id, queue: job.queue, state: runAt > now ? .scheduled : .available, priority: job.priority, runAt: runAt,
                        maxAttempts: job.maxAttempts, dedupeKey: job.dedupeKey, payload: job.payload, createdAt: now)
            }
        }

        /// Enqueues the job `make` builds under the next id, unless a live job holds
        /// `dedupeKey` (the SQL stores' `jobs_dedupe` index): then that job is the answer.
        mutating func enqueue(dedupeKey: String?, _ make: (JobID) -> LiveJob) -> SubmitResult {
            if let key = dedupeKey, let existing = live.values.first(where: { $0.dedupeKey == key }) {
                return SubmitResult(id: existing.id, deduplicated: true)
            }
            let id = nextID
            nextID += 1
            live[id] = make(id)
            return SubmitResult(id: id, deduplicated: false)
        }
    }

    private let state = Mutex(State())
    /// The queue's clock: `Date()` in production use, a test's own clock in behaviour tests.
    private let now: @Sendable () -> Date

    public init(clock now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// Makes every call fail with `error` (nil: answer again), as a database outage would.
    public func failCalls(with error: DeriveError?) {
        state.withLock { $0.outage = error }
    }

    /// The derivation records completions wrote, for checks.
    public var records: [(job: JobID, record: DerivationRecord)] {
        state.withLock { $0.records }
    }

    /// One critical section at the queue's current time; throws the outage if there is one.
    func withState<T>(_ body: (inout State, Double) throws(DeriveError) -> T) throws(DeriveError) -> T {
        let time = now().timeIntervalSince1970
        return try state.withLock { state throws(DeriveError) in
            if let outage = state.outage { throw outage }
            return try body(&state, time)
        }
    }

    // MARK: Submitting

    /// Refuses what the SQL schema's checks refuse, before anything is enqueued.
    static func validate(_ job: NewJob) throws(DeriveError) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
        guard (1...64).contains(job.queue.count), job.queue.allSatisfy(allowed.contains) else {
            throw DeriveError(.invalidJob, "the queue refused the job: queue \(Quoted(job.queue)) must be 1 to 64 of A-Z a-z 0-9 _ . -")
        }
        guard (1...100).contains(job.maxAttempts) else {
            throw DeriveError(.invalidJob, "the queue refused the job: max_attempts \(job.maxAttempts) must be 1 to 100")
        }
    }

    public func submit(_ jobs: [NewJob]) throws(DeriveError) -> [SubmitResult] {
        for job in jobs { try Self.validate(job) }
        return try withState { state, now throws(DeriveError) in
            for (source, name) in OriginalName.pairs(jobs) { state.originalNames[source, default: []].insert(name) }
            return jobs.map { job in state.enqueue(job, at: now) }
        }
    }

    // MARK: Running

    public func claim(queues: [String], limit: Int, owner: String, lease: Double) throws(DeriveError) -> [ClaimedJob] {
        guard limit > 0, !queues.isEmpty else { return [] }
        return try withState { state, now throws(DeriveError) in
            let wanted = Set(queues).subtracting(state.paused.keys)
            let chosen = state.live.values.filter { $0.state == .available && wanted.contains($0.queue) }
                .sorted { a, b in
                    if a.priority != b.priority { return a.priority > b.priority }
                    if a.runAt != b.runAt { return a.runAt < b.runAt }
                    return a.id < b.id
                }
                .prefix(limit)
            return chosen.map { waiting in
                var job = waiting
                job.state = .running
                job.attempt += 1
                job.leaseOwner = owner
                job.startedAt = now
                job.leaseExpiresAt = now + lease
                state.live[job.id] = job
                return ClaimedJob(run: JobRun(id: job.id, attempt: job.attempt, owner: owner), queue: job.queue, priority: job.priority,
                                  maxAttempts: job.maxAttempts, payload: job.payload, runAt: Date(timeIntervalSince1970: job.runAt),
                                  leaseExpiresAt: Date(timeIntervalSince1970: now + lease),
                                  createdAt: Date(timeIntervalSince1970: job.createdAt))
            }
        }
    }

    public func heartbeat(_ runs: [JobRun], lease: Double) throws(DeriveError) -> HeartbeatResult {
        try withState { state, now throws(DeriveError) in
            var result = HeartbeatResult(extended: [], cancelRequested: [])
            for run in runs where state.live[run.id]?.holds(run) == true {
                state.live[run.id]?.leaseExpiresAt = now + lease
                result.extended.insert(run.id)
                if state.live[run.id]?.cancelRequested == true { result.cancelRequested.insert(run.id) }
            }
            return result
        }
    }

    public func complete(_ completions: [Completion]) throws(DeriveError) -> Set<JobID> {
        try withState { state, now throws(DeriveError) in
            var done: Set<JobID> = []
            for completion in completions where Self.archive(completion.run, as: .completed, result: completion.result, at: now, in: &state) {
                done.insert(completion.run.id)
                if let record = completion.record { state.records.append((completion.run.id, record)) }
            }
            return done
        }
    }

    public func fail(_ failures: [Failure], policy: RetryPolicy) throws(DeriveError) -> [JobID: FailureOutcome] {
        try withState { state, now throws(DeriveError) in
            var outcomes: [JobID: FailureOutcome] = [:]
            for failure in failures {
                guard let job = state.live[failure.run.id], job.holds(failure.run) else {
                    outcomes[failure.run.id] = .stale
                    continue
                }
                let disposition = policy.disposition(of: job.ended, error: failure.error, lostLease: false,
                                                     at: Date(timeIntervalSince1970: now))
                Self.apply(disposition, to: job.id, at: now, in: &state)
                outcomes[failure.run.id] = disposition.failureOutcome
            }
            return outcomes
        }
    }

    public func acknowledgeCancel(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> {
        try withState { state, now throws(DeriveError) in
            Set(runs.filter { run in
                state.live[run.id]?.cancelRequested == true && Self.archive(run, as: .cancelled, result: nil, at: now, in: &state)
            }.map(\.id))
        }
    }

    public func release(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> {
        try withState { state, now throws(DeriveError) in
            var released: Set<JobID> = []
            for run in runs {
                guard var job = state.live[run.id], job.holds(run) else { continue }
                released.insert(run.id)
                // A job asked to cancel is not put back: it is cancelled.
                if job.cancelRequested {
                    _ = Self.archive(run, as: .cancelled, result: nil, at: now, in: &state)
                    continue
                }
                job.state = .available
                job.attempt -= 1
                job.leaseOwner = nil
                job.startedAt = nil
                job.leaseExpiresAt = nil
                state.live[run.id] = job
            }
            return released
        }
    }

    public func rescueExpired(limit: Int, policy: RetryPolicy) throws(DeriveError) -> RescueResult {
        try withState { state, now throws(DeriveError) in
            var result = RescueResult(requeued: [], failed: [])
            let expired = state.live.values.filter { $0.state == .running && ($0.leaseExpiresAt ?? .infinity) < now }
                .sorted { ($0.leaseExpiresAt ?? 0, $0.id) < ($1.leaseExpiresAt ?? 0, $1.id) }
                .prefix(max(limit, 0))
            for job in expired {
                let seenAt = job.leaseOwner.flatMap { state.workers[$0] }?.seenAt.timeIntervalSince1970
                let lease = ExpiredLease(run: job.ended, owner: job.leaseOwner,
                                         worker: WorkerSighting(seenAt: seenAt, leaseExpiresAt: job.leaseExpiresAt))
                var random = SystemRandomNumberGenerator()
                let disposition = policy.disposition(of: lease, at: Date(timeIntervalSince1970: now), using: &random)
                Self.apply(disposition, to: job.id, at: now, in: &state)
                result.add(lease, disposition)
            }
            return result
        }
    }

    public func promoteScheduled(limit: Int) throws(DeriveError) -> Int {
        try withState { state, now throws(DeriveError) in
            let due = state.live.values.filter { $0.state == .scheduled && $0.runAt <= now }
                .sorted { ($0.runAt, $0.id) < ($1.runAt, $1.id) }.prefix(max(limit, 0))
            for job in due { state.live[job.id]?.state = .available }
            return due.count
        }
    }

    // MARK: Managing

    public func cancel(_ id: JobID) throws(DeriveError) -> CancelResult {
        try withState { state, now throws(DeriveError) in
            if let job = state.live[id] {
                if job.state == .running {
                    state.live[id]?.cancelRequested = true
                    return .requested
                }
                state.live[id] = nil
                state.archive[id] = ArchivedJob(job: job, outcome: .cancelled, result: nil, finishedAt: now)
                return .cancelled
            }
            return state.archive[id] == nil ? .notFound : .finished
        }
    }

    public func retry(_ id: JobID) throws(DeriveError) -> JobID? {
        try withState { state, now throws(DeriveError) in
            if state.live[id]?.state == .scheduled {
                state.live[id]?.state = .available
                state.live[id]?.runAt = now
                return id
            }
            guard let archived = state.archive[id], archived.outcome == .failed || archived.outcome == .cancelled else { return nil }
            let old = archived.job
            // Its own dedupe key (a retry's is the one it was given), else the first job's id.
            let key = old.dedupeKey ?? "retry:\(old.id)"
            return state.enqueue(dedupeKey: key) { newID in
                LiveJob(id: newID, queue: old.queue, state: .available, priority: old.priority, runAt: now, maxAttempts: old.maxAttempts,
                        dedupeKey: key, payload: old.payload, createdAt: now)
            }.id
        }
    }

    public func job(_ id: JobID) throws(DeriveError) -> JobSnapshot? {
        try withState { state, _ throws(DeriveError) in
            state.live[id].map(Self.snapshot) ?? state.archive[id].map(Self.snapshot)
        }
    }

    public func counts() throws(DeriveError) -> [QueueCounts] {
        try withState { state, _ throws(DeriveError) in
            var byQueue: [String: QueueCounts] = [:]
            for job in state.live.values {
                byQueue[job.queue, default: QueueCounts(queue: job.queue, states: [:], oldestAvailable: nil)].states[job.state, default: 0] += 1
                if job.state == .available {
                    let runAt = Date(timeIntervalSince1970: job.runAt)
                    let oldest = byQueue[job.queue]?.oldestAvailable ?? runAt
                    byQueue[job.queue]?.oldestAvailable = min(oldest, runAt)
                }
                if job.state == .scheduled && job.attempt > 0 { byQueue[job.queue]?.retrying += 1 }
            }
            return byQueue.values.sorted { $0.queue < $1.queue }
        }
    }

    public func ping() throws(DeriveError) {
        try withState { _, _ throws(DeriveError) in }
    }

    public func prune(finishedBefore date: Date) throws(DeriveError) -> Int {
        try withState { state, _ throws(DeriveError) in
            let old = state.archive.values.filter { $0.finishedAt < date.timeIntervalSince1970 }.map(\.job.id)
            for id in old { state.archive[id] = nil }
            return old.count
        }
    }

    // MARK: Pausing and deleting

    public func pause(queue: String, by who: String) throws(DeriveError) -> Bool {
        try PausedQueue.validate(queue)
        return try withState { state, now throws(DeriveError) in
            guard state.paused[queue] == nil else { return false }
            state.paused[queue] = PausedQueue(queue: queue, pausedAt: Date(timeIntervalSince1970: now), pausedBy: PausedQueue.by(who))
            return true
        }
    }

    public func resume(queue: String) throws(DeriveError) -> Bool {
        try withState { state, _ throws(DeriveError) in state.paused.removeValue(forKey: queue) != nil }
    }

    public func pausedQueues() throws(DeriveError) -> [PausedQueue] {
        try withState { state, _ throws(DeriveError) in state.paused.values.sorted { $0.queue < $1.queue } }
    }

    public func deleteFinished(_ ids: [JobID]) throws(DeriveError) -> Set<JobID> {
        try withState { state, _ throws(DeriveError) in
            Set(ids.filter { state.archive.removeValue(forKey: $0) != nil })
        }
    }

    // MARK: Reading for people

    public func jobs(state wanted: JobState?, queue: String?, limit: Int) throws(DeriveError) -> [JobSnapshot] {
        try withState { state, _ throws(DeriveError) in
            if let wanted, !wanted.isLive {
                return state.archive.values.filter { $0.outcome == wanted && (queue == nil || $0.job.queue == queue) }
                    .sorted { ($0.finishedAt, $0.job.id) > ($1.finishedAt, $1.job.id) }.prefix(max(limit, 0)).map(Self.snapshot)
            }
            return state.live.values.filter { (wanted == nil || $0.state == wanted) && (queue == nil || $0.queue == queue) }
                .sorted { $0.id < $1.id }.prefix(max(limit, 0)).map(Self.snapshot)
        }
    }

    public func finishedCounts(since date: Date) throws(DeriveError) -> [JobState: Int] {
        try withState { state, _ throws(DeriveError) in
            state.archive.values.filter { $0.finishedAt >= date.timeIntervalSince1970 }
                .reduce(into: [:]) { counts, archived in counts[archived.outcome, default: 0] += 1 }
        }
    }

    public func finishedJobs(_ filter: JobFilter, after cursor: JobCursor?, limit: Int) throws(DeriveError) -> JobPage {
        try withState { state, _ throws(DeriveError) in
            let matching = state.archive.values.filter { archived in
                let job = archived.job
                if let outcome = filter.outcome, archived.outcome != outcome { return false }
                if let queue = filter.queue, job.queue != queue { return false }
                if let code = filter.errorCode, job.errors.last?["code"] != .string(code) { return false }
                if let host = filter.sourceHost, Self.sourceHost(job.payload) != host { return false }
                if let since = filter.finishedSince, archived.finishedAt < since.timeIntervalSince1970 { return false }
                if let text = filter.sourceContains, !state.matches(job.payload, text) { return false }
                if let cursor { return (archived.finishedAt, job.id) < (cursor.finishedAt.timeIntervalSince1970, cursor.id) }
                return true
            }
            let page = matching.sorted { ($0.finishedAt, $0.job.id) > ($1.finishedAt, $1.job.id) }.prefix(max(limit, 0)).map(Self.snapshot)
            return JobPage(jobs: Array(page), limit: limit)
        }
    }

    public func failureGroups(since date: Date) throws(DeriveError) -> [FailureGroup] {
        try withState { state, _ throws(DeriveError) in
            var groups: [String: FailureGroup] = [:]
            for archived in state.archive.values where archived.outcome == .failed && archived.finishedAt >= date.timeIntervalSince1970 {
                guard case .string(let code)? = archived.job.errors.last?["code"] else { continue }
                let at = Date(timeIntervalSince1970: archived.finishedAt)
                var group = groups[code] ?? FailureGroup(code: code, count: 0, lastFailedAt: at)
                group.count += 1
                group.lastFailedAt = max(group.lastFailedAt, at)
                groups[code] = group
            }
            return groups.values.sorted { ($0.count, $1.code) > ($1.count, $0.code) }
        }
    }

    public func throughput(since date: Date, bucket seconds: Int) throws(DeriveError) -> [ThroughputBucket] {
        try withState { state, _ throws(DeriveError) in
            let width = Double(max(1, seconds))
            var buckets: [Double: [JobState: Int]] = [:]
            for archived in state.archive.values where archived.finishedAt >= date.timeIntervalSince1970 {
                buckets[(archived.finishedAt / width).rounded(.down) * width, default: [:]][archived.outcome, default: 0] += 1
            }
            return buckets.keys.sorted().map { ThroughputBucket(start: Date(timeIntervalSince1970: $0), counts: buckets[$0] ?? [:]) }
        }
    }

    public func finishedTotals(since date: Date, bucket seconds: Int, limit: Int) throws(DeriveError) -> [FinishedTotal] {
        try withState { state, _ throws(DeriveError) in
            let width = Double(max(1, seconds))
            struct Group: Hashable { var start: Double, queue: String, worker: String?, outcome: JobState }
            var groups: [Group: Int] = [:]
            for archived in state.archive.values where archived.finishedAt >= date.timeIntervalSince1970 {
                groups[Group(start: (archived.finishedAt / width).rounded(.down) * width, queue: archived.job.queue,
                             worker: archived.job.leaseOwner, outcome: archived.outcome), default: 0] += 1
            }
            return groups.sorted { ($1.key.start, $0.key.queue, $0.key.worker ?? "", $0.key.outcome.rawValue)
                                   < ($0.key.start, $1.key.queue, $1.key.worker ?? "", $1.key.outcome.rawValue) }
                .prefix(max(0, limit))
                .map { FinishedTotal(start: Date(timeIntervalSince1970: $0.key.start), queue: $0.key.queue, worker: $0.key.worker,
                                     outcome: $0.key.outcome, jobs: $0.value) }
        }
    }

    public func jobs(dedupeKey key: String, limit: Int) throws(DeriveError) -> [JobSnapshot] {
        try withState { state, _ throws(DeriveError) in
            let live = state.live.values.filter { $0.dedupeKey == key }.map(Self.snapshot)
            let archived = state.archive.values.filter { $0.job.dedupeKey == key }.map(Self.snapshot)
            return Array((live + archived).sorted { $0.id < $1.id }.prefix(max(0, limit)))
        }
    }

    public func originalNames(of sources: [String]) throws(DeriveError) -> [String: [String]] {
        try withState { state, _ throws(DeriveError) in
            var names: [String: [String]] = [:]
            for source in sources { if let known = state.originalNames[source], !known.isEmpty { names[source] = known.sorted() } }
            return names
        }
    }

    static func sourceHost(_ payload: JSONValue) -> String? {
        guard case .string(let source)? = payload["source"] else { return nil }
        return SourceAddress.host(of: source)
    }

    // MARK: Workers

    public func report(_ status: WorkerStatus) throws(DeriveError) {
        try withState { state, _ throws(DeriveError) in state.workers[status.id] = status }
    }

    public func workers(seenSince date: Date) throws(DeriveError) -> [WorkerStatus] {
        try withState { state, now throws(DeriveError) in
            state.workers = state.workers.filter { $0.value.seenAt.timeIntervalSince1970 >= now - 3600 }
            return state.workers.values.filter { $0.seenAt >= date }.sorted { ($0.host, $0.pid, $0.id) < ($1.host, $1.pid, $1.id) }
        }
    }

    public func forgetWorker(_ id: String) throws(DeriveError) {
        try withState { state, _ throws(DeriveError) in state.workers[id] = nil }
    }

    // MARK: Helpers

    /// Moves a run to the archive if it still holds its job (and, to be cancelled, was asked to
    /// cancel). Returns whether it did.
    private static func archive(_ run: JobRun, as outcome: JobState, result: JSONValue?, at now: Double, in state: inout State) -> Bool {
        guard let job = state.live[run.id], job.holds(run), outcome != .cancelled || job.cancelRequested else { return false }
        state.live[run.id] = nil
        state.archive[run.id] = ArchivedJob(job: job, outcome: outcome, result: result, finishedAt: now)
        return true
    }

    /// Applies a decided disposition to a live job.
    private static func apply(_ disposition: Disposition, to id: JobID, at now: Double, in state: inout State) {
        guard var job = state.live[id] else { return }
        switch disposition {
        case .requeue(let delay, let entry, let lostLease):
            job.state = delay > 0 ? .scheduled : .available
            job.runAt = now + delay
            job.leaseOwner = nil
            job.leaseExpiresAt = nil
            if lostLease { job.leaseLosses += 1 }
            job.errors.append(entry)
            state.live[id] = job
        case .archive(let outcome, let entry):
            job.errors.append(entry)
            state.live[id] = nil
            state.archive[id] = ArchivedJob(job: job, outcome: outcome, result: nil, finishedAt: now)
        }
    }

    private static func snapshot(_ job: LiveJob) -> JobSnapshot {
        JobSnapshot(id: job.id, queue: job.queue, state: job.state, priority: job.priority, attempt: job.attempt,
                    maxAttempts: job.maxAttempts, runAt: Date(timeIntervalSince1970: job.runAt), leaseOwner: job.leaseOwner,
                    dedupeKey: job.dedupeKey, cancelRequested: job.cancelRequested, payload: job.payload, errors: job.errors,
                    result: nil, createdAt: Date(timeIntervalSince1970: job.createdAt), finishedAt: nil,
                    leaseExpiresAt: job.leaseExpiresAt.map { Date(timeIntervalSince1970: $0) },
                    startedAt: job.startedAt.map { Date(timeIntervalSince1970: $0) }, worker: job.leaseOwner)
    }

    private static func snapshot(_ archived: ArchivedJob) -> JobSnapshot {
        let job = archived.job
        return JobSnapshot(id: job.id, queue: job.queue, state: archived.outcome, priority: job.priority, attempt: job.attempt,
                           maxAttempts: job.maxAttempts, runAt: nil, leaseOwner: nil, dedupeKey: job.dedupeKey, cancelRequested: false,
                           payload: job.payload, errors: job.errors, result: archived.result,
                           createdAt: Date(timeIntervalSince1970: job.createdAt), finishedAt: Date(timeIntervalSince1970: archived.finishedAt),
                           startedAt: job.startedAt.map { Date(timeIntervalSince1970: $0) }, worker: job.leaseOwner)
    }
}
