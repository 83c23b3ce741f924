import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// The operator's controls, on the three stores: a paused queue keeps accepting jobs but no
/// claim takes from it (from any handle on the queue, as workers on other machines), its
/// running jobs still finish, and resuming makes its jobs claimable again; deleting removes
/// finished jobs only.
@Suite struct QueueControlConformanceTests {
    @Test(arguments: JobStoreKind.runnable)
    func aPausedQueuesJobsAreNotClaimedOtherQueuesAreAndResumeMakesThemClaimable(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        _ = try queue.store.submit((0..<3).map { NewJob(payload: document("a\($0)"), queue: "a") } + [NewJob(payload: document("b"), queue: "b")])
        // One of a's jobs is running when the queue is paused: it finishes.
        let running = try #require(try queue.store.claim(queues: ["a"], limit: 1, owner: "w", lease: 30).first)
        #expect(try queue.store.pause(queue: "a", by: "tester"))
        let paused = try queue.store.pausedQueues()
        #expect(paused.map(\.queue) == ["a"] && paused.first?.pausedBy == "tester")
        #expect(abs((paused.first?.pausedAt.timeIntervalSinceNow ?? 999)) < 30)

        let claimed = try queue.store.claim(queues: ["a", "b"], limit: 10, owner: "w", lease: 30)
        #expect(claimed.map(\.queue) == ["b"], "a paused queue's jobs were claimed")
        // Another handle (another worker process) sees the pause too.
        #expect(try queue.openAnother().claim(queues: ["a"], limit: 10, owner: "other", lease: 30).isEmpty)
        // It keeps accepting jobs.
        _ = try queue.store.submit([NewJob(payload: document("a-late"), queue: "a")])
        #expect(try queue.store.counts().first { $0.queue == "a" }?.states[.available] == 3)
        #expect(try queue.store.complete([Completion(run: running.run)]) == [running.run.id], "a running job could not finish")

        #expect(try queue.store.resume(queue: "a"))
        #expect(try queue.store.pausedQueues().isEmpty)
        #expect(!(try queue.store.resume(queue: "a")), "resuming a running queue said it was paused")
        #expect(try queue.store.claim(queues: ["a"], limit: 10, owner: "w", lease: 30).count == 3)
    }

    @Test(arguments: JobStoreKind.runnable)
    func pausingIsIdempotentAndNamesAreChecked(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        #expect(try queue.store.pause(queue: "bulk", by: "first"))
        #expect(!(try queue.store.pause(queue: "bulk", by: "second")), "a second pause said the queue was running")
        let paused = try queue.store.pausedQueues()
        #expect(paused.count == 1 && paused.first?.pausedBy == "first", "the second pause replaced the first: \(paused)")
        // A queue with no jobs may be paused: a job submitted to it waits.
        _ = try queue.store.submit([NewJob(payload: document(), queue: "bulk")])
        #expect(try queue.store.claim(queues: ["bulk"], limit: 1, owner: "w", lease: 30).isEmpty)
        // Who paused is kept to its bound.
        #expect(try queue.store.pause(queue: "other", by: String(repeating: "x", count: 500)))
        #expect(try queue.store.pausedQueues().first { $0.queue == "other" }?.pausedBy.count == PausedQueue.byLength)
        #expect(try queue.store.pause(queue: "accents", by: "\u{0}\r\n" + String(repeating: "e\u{301}", count: 150)))
        #expect(try queue.store.pausedQueues().first { $0.queue == "accents" }?.pausedBy.unicodeScalars.count == PausedQueue.byLength)
        for bad in ["", "has space", String(repeating: "q", count: 65), "<script>"] {
            #expect(throws: DeriveError.self, "\(bad)") { try queue.store.pause(queue: bad, by: "tester") }
        }
        #expect(try queue.store.pausedQueues().map(\.queue) == ["accents", "bulk", "other"])
    }

    @Test(arguments: JobStoreKind.runnable)
    func deletingRemovesFinishedJobsOnlyNeverALiveOne(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit((0..<4).map { NewJob(payload: document("d\($0)")) }).map(\.id)
        let runs = try queue.store.claim(queues: ["default"], limit: 3, owner: "w", lease: 30).map(\.run)
        _ = try queue.store.complete([Completion(run: runs[0])])
        _ = try queue.store.fail([Failure(run: runs[1], error: DeriveError(.sourceRefused, "refused"))], policy: RetryPolicy())
        // ids[2] is running, ids[3] waiting; 999999 does not exist.
        let deleted = try queue.store.deleteFinished([ids[0], ids[1], ids[2], ids[3], 999_999])
        #expect(deleted == [ids[0], ids[1]])
        #expect(try queue.store.job(ids[0]) == nil && (try queue.store.job(ids[1])) == nil)
        #expect(try queue.store.job(ids[2])?.state == .running && (try queue.store.job(ids[3]))?.state == .available)
        #expect(try queue.store.deleteFinished([]).isEmpty && (try queue.store.deleteFinished([ids[0]])).isEmpty)
    }

    @Test(arguments: JobStoreKind.runnable)
    func anUploadsFileNameIsKeptBesideItsSourceAndSearchedLikeIt(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let source = "file:///srv/originals/5f2b.jpg", plain = "https://images.example/beach-day.jpg"
        _ = try queue.store.submit([NewJob(payload: document(source), originalName: "/Users/me/Beach Day.JPG"),
                                    NewJob(payload: document(plain)), NewJob(payload: document("https://images.example/other.jpg"))])
        // The same content uploaded again under another name, and once more under the first.
        _ = try queue.store.submit([NewJob(payload: document(source), originalName: "copy.jpg"), NewJob(payload: document(source), originalName: "Beach Day.JPG")])
        #expect(try queue.store.originalNames(of: [source, plain]) == [source: ["Beach Day.JPG", "copy.jpg"]])
        let runs = try queue.store.claim(queues: ["default"], limit: 10, owner: "w", lease: 30).map(\.run)
        _ = try queue.store.complete(runs.map { Completion(run: $0) })
        let byName = try queue.store.finishedJobs(JobFilter(sourceContains: "Beach Day"), after: nil, limit: 50).jobs
        #expect(byName.count == 3 && byName.allSatisfy { $0.payload["source"] == .string(source) }, "\(byName.map(\.payload))")
        // The source's own text still matches, case-sensitively as before.
        let bySource = try queue.store.finishedJobs(JobFilter(sourceContains: "beach"), after: nil, limit: 50).jobs
        #expect(bySource.map { $0.payload["source"] } == [.string(plain)])
        #expect(try queue.store.finishedJobs(JobFilter(sourceContains: "copy.jpg"), after: nil, limit: 50).jobs.count == 3)
        // A long name of characters made of two code points each, a path and a control character:
        // kept as its last component, cut to what the databases hold, and the job still goes in.
        let long = "/tmp/x/" + String(repeating: "e\u{301}", count: 300) + "\n.jpg"
        _ = try queue.store.submit([NewJob(payload: document("s3://b/originals/long.jpg"), originalName: long)])
        let kept = try #require(try queue.store.originalNames(of: ["s3://b/originals/long.jpg"])["s3://b/originals/long.jpg"]?.first)
        #expect(kept.unicodeScalars.count == OriginalName.length && !kept.contains("/") && !kept.contains("\n"))
    }
}
