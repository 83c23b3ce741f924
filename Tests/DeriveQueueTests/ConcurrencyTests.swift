import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Synchronization
import Testing

/// Several claimers in several processes drain thousands of jobs: none is claimed twice and
/// none is lost.
@Suite struct ConcurrencyTests {
    /// The PostgreSQL cases of the parameterised tests here run only where PostgreSQL is;
    /// this shows as skipped when they did not.
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(StoreKind.runnable.contains(.postgres))
    }

    @Test(arguments: StoreKind.runnable)
    func processesDrainEveryJobExactlyOnce(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        let count = 3000
        var submitted: Set<JobID> = []
        for start in stride(from: 0, to: count, by: 500) {
            let jobs = (start..<min(count, start + 500)).map { NewJob(payload: document("noop:\($0)"), priority: $0 % 3) }
            submitted.formUnion(try queue.store.submit(jobs).map(\.id))
        }
        #expect(submitted.count == count)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("drain-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let processes = 4
        // All four start claiming at the same moment: launched one after another on a loaded
        // machine, the first once drained every job before the others had started.
        let startAt = String(Int(Date().timeIntervalSince1970) + 3)
        let results = DeriveBinary.runConcurrently((0..<processes).map { index in
            ["drain", "--database", queue.location, "--claimers", "3", "--batch", "7",
             "--record", folder.appendingPathComponent("claimed-\(index)").path, "--start-at", startAt]
        }, executable: "queue-drain")
        for result in results {
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stdout.contains("\"errors\":[\""), "\(result.stdout)")
        }
        var claims: [JobID] = []
        var processesThatClaimed = 0
        for index in 0..<processes {
            let lines = try String(contentsOf: folder.appendingPathComponent("claimed-\(index)"), encoding: .utf8)
                .split(separator: "\n")
            if !lines.isEmpty { processesThatClaimed += 1 }
            for line in lines {
                let fields = line.split(separator: " ")
                claims.append(JobID(fields[0])!)
                #expect(fields[1] == "1", "job \(fields[0]) was claimed at attempt \(fields[1])")
            }
        }
        #expect(claims.count == count, "claimed \(claims.count) times for \(count) jobs")
        #expect(Set(claims) == submitted)
        #expect(processesThatClaimed > 1)
        for id in submitted {
            let snapshot = try #require(try queue.store.job(id))
            #expect(snapshot.state == .completed && snapshot.attempt == 1)
        }
    }

    /// Threads of one process share a store: claims and completions batched across them.
    @Test(arguments: StoreKind.runnable)
    func aCompletionBatcherArchivesEveryRunInFewTransactions(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        let ids = Set(try queue.store.submit((0..<1000).map { NewJob(payload: document("n\($0)")) }).map(\.id))
        let counting = CountingStore(queue.store)
        let archived = Mutex<Set<JobID>>([])
        let batcher = CompletionBatcher(store: counting, settings: .init(maxBatch: 100, maxDelay: 0.01)) { _, result in
            if case .success(let done) = result { archived.withLock { $0.formUnion(done) } }
        }
        let threads = (0..<4).map { index in
            Thread {
                while let jobs = try? queue.store.claim(queues: ["default"], limit: 5, owner: "t\(index)", lease: 30), !jobs.isEmpty {
                    for job in jobs { batcher.add(Completion(run: job.run, result: .object(["n": .int(Int(job.run.id))]))) }
                }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.01) }
        batcher.close()
        #expect(archived.withLock { $0 } == ids)
        #expect(counting.calls.withLock { $0 } <= 200, "one transaction per job defeats the batching")
        let sample = try #require(ids.first)
        #expect(try queue.store.job(sample)?.result == .object(["n": .int(Int(sample))]))
    }

    /// What a worker waits for before it starts a retried job (one that may crash it): every
    /// completion queued so far recorded, even with another slot adding more meanwhile.
    @Test func waitingUntilRecordedCoversEverythingQueuedBefore() throws {
        let queue = MemoryJobQueue()
        _ = try queue.submit((0..<40).map { NewJob(payload: document("n\($0)")) })
        let runs = try queue.claim(queues: ["default"], limit: 40, owner: "w", lease: 30).map(\.run)
        // A slow database: each transaction takes 20 ms.
        let batcher = CompletionBatcher(store: CountingStore(queue, delay: 0.02), settings: .init(maxBatch: 5, maxDelay: 0.005))
        for run in runs.prefix(20) { batcher.add(Completion(run: run)) }
        let later = Thread { for run in runs.suffix(20) { batcher.add(Completion(run: run)); Thread.sleep(forTimeInterval: 0.002) } }
        later.start()
        #expect(batcher.waitUntilRecorded(timeout: 10))
        for run in runs.prefix(20) { #expect(try queue.job(run.id)?.state == .completed) }
        while !later.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        #expect(batcher.waitUntilRecorded(timeout: 10))
        #expect(try runs.allSatisfy { try queue.job($0.id)?.state == .completed })
        batcher.close()
        #expect(batcher.waitUntilRecorded(timeout: 0))
    }
}

/// A real store that counts how often `complete` is called (and takes `delay` seconds over it).
final class CountingStore: JobStore {
    let base: any JobStore
    let calls = Mutex(0)
    let delay: Double
    init(_ base: any JobStore, delay: Double = 0) {
        self.base = base
        self.delay = delay
    }

    func complete(_ completions: [Completion]) throws(DeriveError) -> Set<JobID> {
        calls.withLock { $0 += 1 }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        return try base.complete(completions)
    }

    func submit(_ jobs: [NewJob]) throws(DeriveError) -> [SubmitResult] { try base.submit(jobs) }
    func claim(queues: [String], limit: Int, owner: String, lease: Double) throws(DeriveError) -> [ClaimedJob] {
        try base.claim(queues: queues, limit: limit, owner: owner, lease: lease)
    }
    func heartbeat(_ runs: [JobRun], lease: Double) throws(DeriveError) -> HeartbeatResult { try base.heartbeat(runs, lease: lease) }
    func fail(_ failures: [Failure], policy: RetryPolicy) throws(DeriveError) -> [JobID: FailureOutcome] {
        try base.fail(failures, policy: policy)
    }
    func acknowledgeCancel(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> { try base.acknowledgeCancel(runs) }
    func release(_ runs: [JobRun]) throws(DeriveError) -> Set<JobID> { try base.release(runs) }
    func rescueExpired(limit: Int, policy: RetryPolicy) throws(DeriveError) -> RescueResult {
        try base.rescueExpired(limit: limit, policy: policy)
    }
    func promoteScheduled(limit: Int) throws(DeriveError) -> Int { try base.promoteScheduled(limit: limit) }
    func cancel(_ id: JobID) throws(DeriveError) -> CancelResult { try base.cancel(id) }
    func retry(_ id: JobID) throws(DeriveError) -> JobID? { try base.retry(id) }
    func job(_ id: JobID) throws(DeriveError) -> JobSnapshot? { try base.job(id) }
    func counts() throws(DeriveError) -> [QueueCounts] { try base.counts() }
    func ping() throws(DeriveError) { try base.ping() }
    func prune(finishedBefore date: Date) throws(DeriveError) -> Int { try base.prune(finishedBefore: date) }
    func pause(queue: String, by who: String) throws(DeriveError) -> Bool { try base.pause(queue: queue, by: who) }
    func resume(queue: String) throws(DeriveError) -> Bool { try base.resume(queue: queue) }
    func pausedQueues() throws(DeriveError) -> [PausedQueue] { try base.pausedQueues() }
    func deleteFinished(_ ids: [JobID]) throws(DeriveError) -> Set<JobID> { try base.deleteFinished(ids) }
}
