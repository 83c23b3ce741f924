import DeriveLanguage
@testable import DeriveJobs
@testable import DerivePostgres
import DeriveTestSupport
import Foundation
import Testing

/// The queue's pure decisions, without a database.
@Suite struct QueueLogicTests {
    let run = EndedRun(id: 7, attempt: 2, maxAttempts: 5, leaseLosses: 0, cancelRequested: false)

    @Test func aPassingFailureIsRetriedAfterAJitteredBackoffAtLeastRetryAfter() {
        var random = SeededRandom(seed: 1)
        let policy = RetryPolicy(backoff: Backoff(base: 5, factor: 2, maximum: 3600))
        for _ in 0..<100 {
            guard case .requeue(let delay, let entry, false) = policy.disposition(of: run, error: passing, lostLease: false, at: Date(),
                                                                                  using: &random) else {
                Issue.record("not requeued")
                return
            }
            #expect(delay >= 0 && delay <= 10)
            #expect(entry["attempt"] == .int(2) && entry["code"] == .string("source_unavailable"))
        }
        let throttled = DeriveError(.sourceUnavailable, "429", retryAfter: 30)
        #expect((policy.disposition(of: run, error: throttled, lostLease: false, at: Date(), using: &random).failureOutcome.delay ?? 0) >= 30)
    }

    @Test func permanentErrorsSpentAttemptsAndCancellationsEndTheJob() {
        let policy = RetryPolicy()
        #expect(policy.disposition(of: run, error: permanent, lostLease: false).failureOutcome == .failed)
        var last = run
        last.attempt = 5
        #expect(policy.disposition(of: last, error: passing, lostLease: false).failureOutcome == .failed)
        var cancelled = run
        cancelled.cancelRequested = true
        #expect(policy.disposition(of: cancelled, error: passing, lostLease: false).failureOutcome == .cancelled)
    }

    @Test func aJobThatLosesItsLeaseTooOftenFails() {
        let policy = RetryPolicy(maxLeaseLosses: 3)
        var lost = run
        lost.leaseLosses = 1
        guard case .requeue(_, let entry, true) = policy.disposition(of: ExpiredLease(run: lost, owner: "w-2", worker: .silent(before: 4))),
              case .string(let detail)? = entry["detail"] else {
            Issue.record("the second loss should be retried")
            return
        }
        #expect(detail == #"its worker "w-2" died while running it (attempt 2; its last status report came 4.0 s before the lease ran out, "#
            + "none since: it died or lost the database); lease lost 2 of 3 times — a job that keeps ending its workers is failed at the 3rd loss")
        #expect(entry["code"] == .string("interrupted") && entry["retryable"] == .bool(true))
        lost.leaseLosses = 2
        guard case .archive(.failed, let last) = policy.disposition(of: ExpiredLease(run: lost, owner: "w-3", worker: .unreported)),
              case .string(let lastDetail)? = last["detail"] else {
            Issue.record("the third loss should fail the job")
            return
        }
        #expect(lastDetail.hasPrefix(#"its worker "w-3" died while running it (attempt 2; it left no status report"#))
        #expect(lastDetail.hasSuffix("lease lost 3 of 3 times — failed, not retried: a job that keeps ending its workers is failed at the 3rd loss"))
        #expect(last["code"] == .string("interrupted") && last["retryable"] == .bool(false))
    }

    /// What the store knows of the worker decides the words: silent since before the lease ran
    /// out (dead), heard from after it (alive, not extending the lease), no status at all.
    @Test func aLostLeaseSaysWhetherItsWorkerDiedOrIsStillReporting() {
        #expect(WorkerSighting(seenAt: 96, leaseExpiresAt: 100) == .silent(before: 4))
        #expect(WorkerSighting(seenAt: 103, leaseExpiresAt: 100) == .reporting(after: 3))
        #expect(WorkerSighting(seenAt: nil, leaseExpiresAt: 100) == .unreported)
        #expect(!WorkerSighting.reporting(after: 1).died && WorkerSighting.silent(before: 1).died)
        let policy = RetryPolicy(maxLeaseLosses: 3)
        let alive = policy.leaseLost(ExpiredLease(run: run, owner: "w", worker: .reporting(after: 12.4))).detail
        #expect(alive.hasPrefix(#"its worker "w" stopped extending the lease while running it, though it still reports (attempt 2; "#
            + "a status report came 12 s after the lease ran out)") && !alive.contains("died"))
        let unknown = policy.leaseLost(ExpiredLease(run: run, owner: nil, worker: .unknown)).detail
        #expect(unknown.hasPrefix(#"its worker "?" died (or stopped heartbeating) while running it (attempt 2)"#))
        var last = run
        last.attempt = 5
        let spent = policy.leaseLost(ExpiredLease(run: last, owner: "w", worker: .silent(before: 1)))
        #expect(spent.detail.hasSuffix("lease lost 1 of 3 times — a job that keeps ending its workers is failed at the 3rd loss; "
            + "failed: its 5 attempts are spent"))
        #expect(policy.disposition(of: ExpiredLease(run: last, owner: "w", worker: .silent(before: 1))).failureOutcome == .failed)
        #expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(RetryPolicy.ordinal)
            == ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"])
    }

    @Test func withoutPositionsAClaimScansEachQueueWhole() {
        let positions = ClaimPositions()
        let segments = positions.segments(for: ["a", "b"], full: false)
        #expect(segments == [
            .init(queue: "a", lowestPriority: Int(Int32.min), highestPriority: Int(Int32.max), after: nil),
            .init(queue: "b", lowestPriority: Int(Int32.min), highestPriority: Int(Int32.max), after: nil),
        ])
    }

    @Test func positionsSplitAQueueIntoRangesInClaimOrder() {
        var positions = ClaimPositions()
        let five = ClaimPositions.Position(runAtMicros: 100, id: 9), zero = ClaimPositions.Position(runAtMicros: 50, id: 3)
        positions.record([("a", 5, five), ("a", 0, zero), ("a", 0, ClaimPositions.Position(runAtMicros: 40, id: 2))],
                         queues: ["a"], full: false, started: 0, now: 1)
        #expect(positions.segments(for: ["a"], full: false) == [
            .init(queue: "a", lowestPriority: 6, highestPriority: Int(Int32.max), after: nil),
            .init(queue: "a", lowestPriority: 5, highestPriority: 5, after: five),
            .init(queue: "a", lowestPriority: 1, highestPriority: 4, after: nil),
            .init(queue: "a", lowestPriority: 0, highestPriority: 0, after: zero),
            .init(queue: "a", lowestPriority: Int(Int32.min), highestPriority: -1, after: nil),
        ])
        // A full scan reads from the start, and what it finds replaces the positions.
        #expect(positions.segments(for: ["a"], full: true).count == 1)
        positions.record([("a", 0, ClaimPositions.Position(runAtMicros: 10, id: 1))], queues: ["a"], full: true, started: 0, now: 1)
        #expect(positions.positions["a"] == [0: ClaimPositions.Position(runAtMicros: 10, id: 1)])
    }

    @Test func aFullScanIsDueAfterTheIntervalAndSlowScansSpaceThemselvesOut() {
        var positions = ClaimPositions(rescanInterval: 1)
        #expect(positions.fullScanDue(now: 10_000_000_000))
        positions.record([], queues: ["a"], full: true, started: 10_000_000_000, now: 10_200_000_000)
        #expect(!positions.fullScanDue(now: 11_000_000_000))
        // A full scan took 0.2 s: the next waits 20 times that, 4 s.
        #expect(!positions.fullScanDue(now: 14_000_000_000))
        #expect(positions.fullScanDue(now: 14_300_000_000))
        positions.forget()
        #expect(positions.fullScanDue(now: 14_300_000_001))
    }

    @Test func queueLocationsAreRecognised() throws {
        #expect(try QueueLocation.parse("postgres://u:p@db/x") == .postgres("postgres://u:p@db/x"))
        #expect(try QueueLocation.parse("postgresql://db/x") == .postgres("postgresql://db/x"))
        #expect(try QueueLocation.parse("host=db dbname=x") == .postgres("host=db dbname=x"))
        #expect(try QueueLocation.parse("sqlite:/var/lib/derive/q.sqlite") == .sqlite(path: "/var/lib/derive/q.sqlite"))
        #expect(try QueueLocation.parse("sqlite:///var/q.sqlite") == .sqlite(path: "/var/q.sqlite"))
        #expect(try QueueLocation.parse("queue.sqlite") == .sqlite(path: "queue.sqlite"))
        #expect(try QueueLocation.from(environment: [:]) == .sqlite(path: "derive.sqlite"))
        #expect(throws: ValidationError.self) { try QueueLocation.parse("mysql://db/x") }
        #expect(throws: ValidationError.self) { try QueueLocation.from(environment: ["DERIVE_DATABASE_URL": "sqlite:"]) }
        #expect("\(QueueLocation.postgres("postgresql://derive:hunter2@db/x"))".contains("***"))
        #expect(!"\(QueueLocation.postgres("postgresql://derive:hunter2@db/x"))".contains("hunter2"))
    }

    @Test func connectionStringsLoseTheirPasswords() {
        #expect(Redacted.connectionString("postgresql://derive:hunter2@db:5432/x?sslmode=require") == "postgresql://derive:***@db:5432/x?sslmode=require")
        #expect(Redacted.connectionString("postgresql://db/x?password=hunter2&user=u") == "postgresql://db/x?password=***&user=u")
        #expect(Redacted.connectionString("host=db password=hunter2 dbname=x") == "host=db password=*** dbname=x")
    }

    @Test func arrayLiteralsQuoteEveryElement() {
        #expect(PostgresArray.literal(["default", "a\"b", "c\\d", "e,f"]) == #"{"default","a\"b","c\\d","e,f"}"#)
    }
}

extension FailureOutcome {
    var delay: Double? {
        if case .retrying(let delay) = self { return delay }
        return nil
    }
}

extension StoreKind: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}
