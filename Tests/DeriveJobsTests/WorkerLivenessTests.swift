import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Synchronization
import Testing

/// What `derive status` and the dashboard may say about a worker: live, suspect or gone by when
/// it was last heard, and of the jobs it last reported only those its run still holds. Checked
/// on the in-memory queue (held to the conformance suite of PostgreSQL and SQLite), whose
/// clock the test moves.
struct WorkerLivenessTests {
    final class Clock: Sendable {
        let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: Double) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
        var date: Date { now.withLock { $0 } }
    }

    static func status(_ id: String, seenAt: Date, running: [JobID] = [], stopping: Bool = false) -> WorkerStatus {
        WorkerStatus(id: id, host: "h", pid: 1, queues: ["default"], slots: 2, startedAt: seenAt, seenAt: seenAt,
                     running: running.map { WorkerStatus.RunningJob(id: $0, stage: "decode", since: seenAt) }, finished: [:], stopping: stopping)
    }

    static func running(_ queue: MemoryJobQueue) throws -> [JobID: JobSnapshot] {
        Dictionary(uniqueKeysWithValues: try queue.jobs(state: .running, queue: nil, limit: 100).map { ($0.id, $0) })
    }

    @Test func aWorkerIsSuspectAfterThreeMissedReportsAndGoneAfterALease() {
        let liveness = WorkerLiveness()
        let heard = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(liveness.state(of: Self.status("w", seenAt: heard), at: heard.addingTimeInterval(14)) == .live)
        #expect(liveness.state(of: Self.status("w", seenAt: heard, stopping: true), at: heard.addingTimeInterval(5)) == .stopping)
        #expect(liveness.state(of: Self.status("w", seenAt: heard), at: heard.addingTimeInterval(16)) == .suspect)
        #expect(liveness.state(of: Self.status("w", seenAt: heard, stopping: true), at: heard.addingTimeInterval(16)) == .suspect)
        #expect(liveness.state(of: Self.status("w", seenAt: heard), at: heard.addingTimeInterval(61)) == .gone)
    }

    /// A worker killed mid-job: its last report keeps naming the job. While its lease runs the
    /// job is still its own; once the lease has ended it is not, and after the job was rescued,
    /// claimed by another worker and finished there, the dead worker's report names nothing.
    @Test func aKilledWorkersJobsAreItsOwnOnlyWhileItsRunHoldsTheLease() throws {
        let clock = Clock()
        let queue = MemoryJobQueue(clock: { clock.date })
        let liveness = WorkerLiveness(suspectAfter: 15, goneAfter: 120)
        _ = try queue.submit([NewJob(payload: .object(["source": .string("a.jpg")])), NewJob(payload: .object(["source": .string("b.jpg")]))])
        let claimed = try queue.claim(queues: ["default"], limit: 2, owner: "dead", lease: 60)
        #expect(claimed.count == 2)
        let report = Self.status("dead", seenAt: clock.date, running: claimed.map(\.run.id))

        clock.advance(30)
        var believed = liveness.believed(report, running: try Self.running(queue), at: clock.date)
        #expect(believed.running.map(\.id) == claimed.map(\.run.id))
        #expect(liveness.state(of: believed, at: clock.date) == .suspect)

        // The lease has ended: not rescued yet, but no longer this worker's.
        clock.advance(31)
        believed = liveness.believed(report, running: try Self.running(queue), at: clock.date)
        #expect(believed.running.isEmpty)

        // Rescued, claimed by another worker (its report names the job), and one finished there.
        _ = try queue.rescueExpired(limit: 10, policy: retryAtOnce)
        let again = try queue.claim(queues: ["default"], limit: 2, owner: "alive", lease: 60)
        #expect(again.count == 2)
        _ = try queue.complete([Completion(run: again[0].run, result: .object([:]))])
        let held = try Self.running(queue)
        #expect(liveness.believed(report, running: held, at: clock.date).running.isEmpty)
        let other = Self.status("alive", seenAt: clock.date, running: again.map(\.run.id))
        #expect(liveness.believed(other, running: held, at: clock.date).running.map(\.id) == [again[1].run.id])
    }

    @Test func aGoneWorkerRunsNothing() throws {
        let clock = Clock()
        let queue = MemoryJobQueue(clock: { clock.date })
        _ = try queue.submit([NewJob(payload: .object(["source": .string("a.jpg")]))])
        let claimed = try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 600)
        let report = Self.status("w", seenAt: clock.date, running: claimed.map(\.run.id))
        clock.advance(61)
        let liveness = WorkerLiveness()
        // Its lease would still run (600 s), but nothing has been heard from it for a lease.
        #expect(liveness.state(of: report, at: clock.date) == .gone)
        #expect(liveness.believed(report, running: try Self.running(queue), at: clock.date).running.isEmpty)
    }
}
