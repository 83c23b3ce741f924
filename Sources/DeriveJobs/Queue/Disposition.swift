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
            let fatal = DeriveError(.interrupted, "\(error.detail); the job has lost its lease \(run.leaseLosses + 1) times, "
                                        + "so it is failed rather than retried (it may be crashing its workers)", retryable: false)
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

    /// The error recorded for a run whose lease expired.
    public static func leaseExpired(owner: String?) -> DeriveError {
        DeriveError(.interrupted, "lease expired: worker \(Quoted(owner ?? "?")) stopped heartbeating before finishing the job")
    }
}
