import DeriveLanguage
import Foundation

/// A run that ended without completing, as its store read it under lock.
public struct EndedRun: Sendable, Hashable {
    public var id: JobID
    public var attempt: Int
    public var maxAttempts: Int
    /// Lease losses before this one.
    public var leaseLosses: Int
    public var cancelRequested: Bool

    public init(id: JobID, attempt: Int, maxAttempts: Int, leaseLosses: Int, cancelRequested: Bool) {
        self.id = id
        self.attempt = attempt
        self.maxAttempts = maxAttempts
        self.leaseLosses = leaseLosses
        self.cancelRequested = cancelRequested
    }
}

/// What a store does with a run that failed or lost its lease. Decided here, in pure Swift, so
/// PostgreSQL and SQLite decide alike.
public enum Disposition: Sendable, Equatable {
    /// Back in the queue after `delay` seconds, with `entry` appended to its errors.
    case requeue(delay: Double, entry: JSONValue, lostLease: Bool)
    /// To the archive as failed or cancelled, with `entry` appended to its errors.
    case archive(outcome: JobState, entry: JSONValue)

    public var failureOutcome: FailureOutcome {
        switch self {
        case .requeue(let delay, _, _): .retrying(delay: delay)
        case .archive(.cancelled, _): .cancelled
        case .archive: .failed
        }
    }
}

/// What a store knows of the worker whose lease on a run expired, from the worker's own status
/// reports (the workers table's `seen_at`, refreshed every few seconds by a live worker, apart
/// from its leases): whether it went silent — it died, or lost the database — or is alive and
/// only stopped extending this lease.
public enum WorkerSighting: Sendable, Hashable {
    /// The store keeps no status of workers, or the run named no worker.
    case unknown
    /// No status of the worker is left: it died before its first report, or went an hour
    /// without one and was forgotten. (A worker that stops cleanly releases its jobs first.)
    case unreported
    /// Its last report came this many seconds before the lease ran out, and none since.
    case silent(before: Double)
    /// It reported this many seconds after the lease ran out: alive, not extending the lease.
    case reporting(after: Double)

    /// From the worker's last report and the lease's end, both in Unix seconds (nil: no row).
    public init(seenAt: Double?, leaseExpiresAt: Double?) {
        guard let seenAt else {
            self = .unreported
            return
        }
        guard let leaseExpiresAt else {
            self = .unknown
            return
        }
        self = seenAt > leaseExpiresAt ? .reporting(after: seenAt - leaseExpiresAt) : .silent(before: leaseExpiresAt - seenAt)
    }

    /// Whether the worker is taken for dead: everything but a worker seen after the lease ran out.
    public var died: Bool {
        if case .reporting = self { false } else { true }
    }
}

/// A run whose lease expired, with what the store knows of its worker.
public struct ExpiredLease: Sendable, Hashable {
    public var run: EndedRun
    /// The lease's owner (the worker's id, `host:pid:random`).
    public var owner: String?
    public var worker: WorkerSighting

    public init(run: EndedRun, owner: String?, worker: WorkerSighting) {
        self.run = run
        self.owner = owner
        self.worker = worker
    }
}

/// A job a rescue found with an expired lease, and what became of it.
public struct RescuedRun: Sendable, Hashable {
    public var id: JobID
    public var attempt: Int
    public var owner: String?
    public var outcome: Outcome
    /// The error recorded in the job's history: whose death it names, and the rule.
    public var detail: String

    public enum Outcome: String, Sendable, Hashable {
        /// Back in the queue, after its backoff.
        case requeued
        /// Failed: its lease lost too often, or its attempts spent.
        case failed
        /// It had been asked to cancel.
        case cancelled
    }

    public init(id: JobID, attempt: Int, owner: String?, outcome: Outcome, detail: String) {
        self.id = id
        self.attempt = attempt
        self.owner = owner
        self.outcome = outcome
        self.detail = detail
    }
}

extension RetryPolicy {
    /// A failed run is retried after a jittered backoff unless its error is permanent, its
    /// attempts are spent, or it was asked to cancel. A run whose lease expired (its worker
    /// died or hung) counts as a retryable interruption, and a job that loses its lease
    /// `maxLeaseLosses` times — one that keeps killing its workers — is failed.
    public func disposition<R: RandomNumberGenerator>(of run: EndedRun, error: DeriveError, lostLease: Bool, at date: Date,
                                                      using random: inout R) -> Disposition {
        if run.cancelRequested {
            return .archive(outcome: .cancelled, entry: error.historyEntry(attempt: run.attempt, at: date))
        }
        if lostLease && run.leaseLosses + 1 >= maxLeaseLosses {
            let fatal = DeriveError(error.code, error.detail, retryable: false)
            return .archive(outcome: .failed, entry: fatal.historyEntry(attempt: run.attempt, at: date))
        }
        let entry = error.historyEntry(attempt: run.attempt, at: date)
        switch outcome(for: error, attempt: run.attempt, maxAttempts: run.maxAttempts, using: &random) {
        case .retrying(let delay): return .requeue(delay: delay, entry: entry, lostLease: lostLease)
        default: return .archive(outcome: .failed, entry: entry)
        }
    }

    public func disposition(of run: EndedRun, error: DeriveError, lostLease: Bool, at date: Date = Date()) -> Disposition {
        var random = SystemRandomNumberGenerator()
        return disposition(of: run, error: error, lostLease: lostLease, at: date, using: &random)
    }

    /// What a rescue does with a run whose lease expired: requeued as an `interrupted` failure
    /// (retryable), or failed at its `maxLeaseLosses`th loss, with an error that names its
    /// worker's death as the likely cause and states the rule.
    public func disposition<R: RandomNumberGenerator>(of expired: ExpiredLease, at date: Date, using random: inout R) -> Disposition {
        disposition(of: expired.run, error: leaseLost(expired), lostLease: true, at: date, using: &random)
    }

    public func disposition(of expired: ExpiredLease, at date: Date = Date()) -> Disposition {
        var random = SystemRandomNumberGenerator()
        return disposition(of: expired, at: date, using: &random)
    }

    /// The error recorded for a run whose lease expired: who held it, what the store knows of
    /// that worker, the losses so far and the rule, e.g. `its worker "w-2" died while running it
    /// (attempt 2; its last status report came 4 s before the lease ran out, none since); lease
    /// lost 2 of 3 times — a job that keeps ending its workers is failed at the 3rd`.
    public func leaseLost(_ expired: ExpiredLease) -> DeriveError {
        let worker = "its worker \(Quoted(expired.owner ?? "?"))", attempt = "attempt \(expired.run.attempt)"
        let what: String
        switch expired.worker {
        case .unknown:
            what = "\(worker) died (or stopped heartbeating) while running it (\(attempt))"
        case .unreported:
            what = "\(worker) died while running it (\(attempt); it left no status report: it died before its first, or was silent for an hour)"
        case .silent(let before):
            what = "\(worker) died while running it (\(attempt); its last status report came \(Self.seconds(before)) before the lease ran out, "
                + "none since: it died or lost the database)"
        case .reporting(let after):
            what = "\(worker) stopped extending the lease while running it, though it still reports (\(attempt); a status report came "
                + "\(Self.seconds(after)) after the lease ran out): the job hung it, or its heartbeats cannot reach the database"
        }
        let losses = expired.run.leaseLosses + 1
        let final = losses >= maxLeaseLosses
        let rule = "a job that keeps ending its workers is failed at the \(Self.ordinal(maxLeaseLosses)) loss"
        var detail = "\(what); lease lost \(losses) of \(maxLeaseLosses) times — " + (final ? "failed, not retried: \(rule)" : rule)
        if !final && expired.run.attempt >= expired.run.maxAttempts {
            detail += "; failed: its \(expired.run.maxAttempts) attempts are spent"
        }
        return DeriveError(.interrupted, detail, retryable: !final)
    }

    /// `1st`, `2nd`, `3rd`, `4th`, `11th`, `21st`.
    static func ordinal(_ number: Int) -> String {
        let suffix = (number % 100) / 10 == 1 ? "th" : [1: "st", 2: "nd", 3: "rd"][number % 10] ?? "th"
        return "\(number)\(suffix)"
    }

    static func seconds(_ value: Double) -> String {
        value < 10 ? String(format: "%.1f s", value) : "\(Int(value.rounded())) s"
    }
}
