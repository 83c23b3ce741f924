import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// One set of semantics, three stores: every test runs against PostgreSQL (started by the test
/// command), a temporary SQLite file and the in-memory queue the worker's behaviour tests use.
@Suite struct JobStoreConformanceTests {
    /// The PostgreSQL cases of the parameterised tests here run only where PostgreSQL is;
    /// this shows as skipped when they did not.
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(JobStoreKind.runnable.contains(.postgres))
    }

    @Test(arguments: JobStoreKind.runnable)
    func claimsByPriorityThenRunAtThenId(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit([
            NewJob(payload: document("a")), NewJob(payload: document("b"), priority: 5),
            NewJob(payload: document("c"), runAt: Date().addingTimeInterval(-60)), NewJob(payload: document("d"), priority: 5),
            NewJob(payload: document("e"), priority: -1),
        ]).map(\.id)
        let claimed = try queue.store.claim(queues: ["default"], limit: 10, owner: "w1", lease: 30)
        #expect(claimed.map(\.run.id) == [ids[1], ids[3], ids[2], ids[0], ids[4]])
        #expect(claimed.allSatisfy { $0.run.attempt == 1 && $0.run.owner == "w1" && $0.queue == "default" })
        #expect(same(claimed.first?.payload, document("b")))
        let leaseLeft = try #require(claimed.first).leaseExpiresAt.timeIntervalSinceNow
        #expect(leaseLeft > 20 && leaseLeft <= 31)
        let snapshot = try #require(try queue.store.job(ids[1]))
        #expect(snapshot.state == .running && snapshot.leaseOwner == "w1" && snapshot.attempt == 1)
        #expect(try queue.store.claim(queues: ["default"], limit: 10, owner: "w2", lease: 30).isEmpty)
    }

    @Test(arguments: JobStoreKind.runnable)
    func claimsOnlyTheLimitFromTheQueuesAsked(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        _ = try queue.store.submit((0..<3).map { NewJob(payload: document("a\($0)"), queue: "a") }
            + (0..<2).map { NewJob(payload: document("b\($0)"), queue: "b", priority: $0) })
        let fromB = try queue.store.claim(queues: ["b"], limit: 10, owner: "w", lease: 30)
        #expect(fromB.map(\.queue) == ["b", "b"] && fromB.map(\.priority) == [1, 0])
        #expect(try queue.store.claim(queues: ["a"], limit: 2, owner: "w", lease: 30).count == 2)
        #expect(try queue.store.claim(queues: ["a", "b", "c"], limit: 10, owner: "w", lease: 30).count == 1)
    }

    @Test(arguments: JobStoreKind.runnable)
    func completionArchivesTheJobWithItsResult(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        let result = JSONValue.object(["outputs": .array([.string("thumb.webp")])])
        #expect(try queue.store.complete([Completion(run: run, result: result)]) == [id])
        let snapshot = try #require(try queue.store.job(id))
        #expect(snapshot.state == .completed && snapshot.result == result && snapshot.attempt == 1 && snapshot.errors.isEmpty)
        #expect(snapshot.finishedAt != nil && same(snapshot.payload, document()))
        #expect(try queue.store.counts().allSatisfy { $0.states.values.allSatisfy { $0 == 0 } })
        // Completing twice changes nothing.
        #expect(try queue.store.complete([Completion(run: run)]).isEmpty)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aStaleRunCannotOverwriteANewerOne(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        let first = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w1", lease: 0.2).first).run
        #expect(try queue.store.complete([Completion(run: JobRun(id: id, attempt: 2, owner: "w1"))]).isEmpty)
        #expect(try queue.store.complete([Completion(run: JobRun(id: id, attempt: 1, owner: "w2"))]).isEmpty)
        #expect(try queue.store.job(id)?.state == .running)

        // w1 stalls past its lease; the job is rescued and w2 runs it.
        Thread.sleep(forTimeInterval: 0.4)
        #expect(try queue.store.rescueExpired(limit: 10, policy: retryAtOnce).requeued == [id])
        let second = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w2", lease: 30).first).run
        #expect(second.attempt == 2)

        // w1 wakes up: nothing it says about its old run is taken.
        #expect(try queue.store.complete([Completion(run: first)]).isEmpty)
        #expect(try queue.store.fail([Failure(run: first, error: permanent)], policy: retryAtOnce) == [id: .stale])
        #expect(try queue.store.heartbeat([first], lease: 60).extended.isEmpty)
        #expect(try queue.store.release([first]).isEmpty)
        let snapshot = try #require(try queue.store.job(id))
        #expect(snapshot.state == .running && snapshot.leaseOwner == "w2" && snapshot.attempt == 2)
        #expect(try queue.store.complete([Completion(run: second)]) == [id])
    }

    @Test(arguments: JobStoreKind.runnable)
    func aPassingFailureIsRetriedAfterBackoff(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        let outcome = try #require(try queue.store.fail([Failure(run: run, error: passing)], policy: retryMuchLater)[id])
        guard case .retrying(let delay) = outcome else {
            Issue.record("expected a retry, got \(outcome)")
            return
        }
        #expect(delay > 0 && delay <= 1000)
        let waiting = try #require(try queue.store.job(id))
        #expect(waiting.state == .scheduled && waiting.attempt == 1 && waiting.leaseOwner == nil)
        #expect(abs((waiting.runAt?.timeIntervalSinceNow ?? 0) - delay) < 5)
        #expect(waiting.errors.count == 1 && waiting.errors.first?["code"] == .string("source_unavailable")
                    && waiting.errors.first?["attempt"] == .int(1) && waiting.errors.first?["retryable"] == .bool(true))
        // Not claimable, nor promoted, before its time...
        #expect(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).isEmpty)
        #expect(try queue.store.promoteScheduled(limit: 10) == 0)
        // ...unless someone retries it now.
        #expect(try queue.store.retry(id) == id)
        let again = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first)
        #expect(again.run.id == id && again.run.attempt == 2)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aRetryWithoutBackoffIsAvailableAtOnceAndRetryAfterIsHonoured(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit([NewJob(payload: document("a")), NewJob(payload: document("b"))]).map(\.id)
        let runs = try queue.store.claim(queues: ["default"], limit: 2, owner: "w", lease: 30).map(\.run)
        let throttled = DeriveError(.sourceUnavailable, "origin answered 429", retryAfter: 120)
        let outcomes = try queue.store.fail([Failure(run: runs[0], error: passing), Failure(run: runs[1], error: throttled)],
                                            policy: retryAtOnce)
        #expect(outcomes[ids[0]] == .retrying(delay: 0))
        #expect(outcomes[ids[1]] == .retrying(delay: 120))
        #expect(try queue.store.job(ids[0])?.state == .available)
        #expect(try queue.store.job(ids[1])?.state == .scheduled)
        #expect(try queue.store.claim(queues: ["default"], limit: 5, owner: "w", lease: 30).map(\.run.id) == [ids[0]])
    }

    @Test(arguments: JobStoreKind.runnable)
    func aPermanentFailureFailsAtOnce(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document(), maxAttempts: 5)]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try queue.store.fail([Failure(run: run, error: permanent)], policy: retryAtOnce) == [id: .failed])
        let snapshot = try #require(try queue.store.job(id))
        #expect(snapshot.state == .failed && snapshot.attempt == 1 && snapshot.finishedAt != nil)
        #expect(snapshot.errors.count == 1)
        #expect(snapshot.errors.first?["code"] == .string("invalid_job") && snapshot.errors.first?["retryable"] == .bool(false))
        #expect(snapshot.errors.first?["detail"] == .string(permanent.detail))
    }

    @Test(arguments: JobStoreKind.runnable)
    func aJobFailsWhenItsAttemptsRunOut(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document(), maxAttempts: 2)]).first).id
        for expected in [FailureOutcome.retrying(delay: 0), .failed] {
            let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
            #expect(try queue.store.fail([Failure(run: run, error: passing)], policy: retryAtOnce)[id] == expected)
        }
        let snapshot = try #require(try queue.store.job(id))
        #expect(snapshot.state == .failed && snapshot.attempt == 2 && snapshot.errors.count == 2)
    }

    @Test(arguments: JobStoreKind.runnable)
    func anExpiredLeaseIsRescuedByAnyWorker(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let other = try queue.openAnother()
        let id = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        _ = try queue.store.claim(queues: ["default"], limit: 1, owner: "dead-worker", lease: 0.2)
        #expect(try other.rescueExpired(limit: 10, policy: retryAtOnce).requeued.isEmpty)
        Thread.sleep(forTimeInterval: 0.4)
        let rescue = try other.rescueExpired(limit: 10, policy: retryAtOnce)
        #expect(rescue.requeued == [id] && rescue.failed.isEmpty)
        let snapshot = try #require(try other.job(id))
        #expect(snapshot.state == .available && snapshot.leaseOwner == nil)
        #expect(snapshot.errors.first?["code"] == .string("interrupted"))
        guard case .string(let detail)? = snapshot.errors.first?["detail"] else { throw Missing() }
        // The worker never reported its status: the store can say no more than that it is gone.
        #expect(detail.hasPrefix(#"its worker "dead-worker" died while running it (attempt 1; it left no status report"#), "\(detail)")
        #expect(detail.hasSuffix("lease lost 1 of 3 times — a job that keeps ending its workers is failed at the 3rd loss"), "\(detail)")
        #expect(rescue.rescued == [RescuedRun(id: id, attempt: 1, owner: "dead-worker", outcome: .requeued, detail: detail)])
        #expect(try other.claim(queues: ["default"], limit: 1, owner: "w2", lease: 30).first?.run.attempt == 2)
    }

    /// The workers table's own heartbeat (each worker's status report) tells a worker that died
    /// holding a job from one that is alive and only stopped extending its lease.
    @Test(arguments: JobStoreKind.runnable)
    func aRescueSaysWhetherTheWorkerDiedOrIsStillReporting(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let registry = try #require(queue.store as? any WorkerRegistry)
        func report(_ worker: String) throws {
            try registry.report(WorkerStatus(id: worker, host: "h", pid: 1, queues: ["default"], slots: 1, startedAt: Date(), seenAt: Date(),
                                             running: [], finished: [:], stopping: false))
        }
        let ids = try queue.store.submit([NewJob(payload: document("a")), NewJob(payload: document("b"))]).map(\.id)
        try report("h:1:dead")
        try report("h:2:alive")
        _ = try queue.store.claim(queues: ["default"], limit: 1, owner: "h:1:dead", lease: 0.2)
        _ = try queue.store.claim(queues: ["default"], limit: 1, owner: "h:2:alive", lease: 0.2)
        Thread.sleep(forTimeInterval: 0.4)
        try report("h:2:alive")
        let rescue = try queue.store.rescueExpired(limit: 10, policy: retryAtOnce)
        #expect(Set(rescue.requeued) == Set(ids) && rescue.rescued.count == 2)
        let dead = try #require(rescue.rescued.first { $0.owner == "h:1:dead" })
        #expect(dead.id == ids[0] && dead.detail.hasPrefix(#"its worker "h:1:dead" died while running it (attempt 1; its last status report came "#)
            && dead.detail.contains("before the lease ran out, none since"), "\(dead.detail)")
        let alive = try #require(rescue.rescued.first { $0.owner == "h:2:alive" })
        #expect(alive.detail.hasPrefix(#"its worker "h:2:alive" stopped extending the lease while running it, though it still reports"#)
            && !alive.detail.contains("died"), "\(alive.detail)")
        guard case .string(let recorded)? = try queue.store.job(ids[0])?.errors.last?["detail"] else { throw Missing() }
        #expect(recorded == dead.detail)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aJobThatKeepsLosingItsLeaseIsFailed(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let policy = RetryPolicy(backoff: Backoff(base: 0, factor: 2, maximum: 0), maxLeaseLosses: 2)
        let id = try #require(try queue.store.submit([NewJob(payload: document(), maxAttempts: 10)]).first).id
        for round in 1...2 {
            _ = try queue.store.claim(queues: ["default"], limit: 1, owner: "w\(round)", lease: 0.1)
            Thread.sleep(forTimeInterval: 0.25)
            let rescue = try queue.store.rescueExpired(limit: 10, policy: policy)
            #expect(round == 1 ? rescue.requeued == [id] : rescue.failed == [id])
        }
        let snapshot = try #require(try queue.store.job(id))
        #expect(snapshot.state == .failed && snapshot.errors.count == 2)
        guard case .string(let detail)? = snapshot.errors.last?["detail"] else { throw Missing() }
        #expect(detail.contains(#"its worker "w2" died while running it (attempt 2;"#)
            && detail.hasSuffix("lease lost 2 of 2 times — failed, not retried: a job that keeps ending its workers is failed at the 2nd loss"), "\(detail)")
        #expect(snapshot.errors.last?["retryable"] == .bool(false) && snapshot.errors.last?["code"] == .string("interrupted"))
    }

    @Test(arguments: JobStoreKind.runnable)
    func heartbeatsKeepALongRunLeased(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 0.3).first).run
        Thread.sleep(forTimeInterval: 0.15)
        let beat = try queue.store.heartbeat([run, JobRun(id: 987_654, attempt: 1, owner: "w")], lease: 5)
        #expect(beat.extended == [id] && beat.cancelRequested.isEmpty)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try queue.store.rescueExpired(limit: 10, policy: retryAtOnce).requeued.isEmpty)
        #expect(try queue.store.job(id)?.state == .running)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aScheduledJobIsPromotedWhenDue(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document(), runAt: Date().addingTimeInterval(0.4))]).first).id
        #expect(try queue.store.job(id)?.state == .scheduled)
        #expect(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).isEmpty)
        #expect(try queue.store.promoteScheduled(limit: 10) == 0)
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try queue.store.promoteScheduled(limit: 10) == 1)
        #expect(try queue.store.job(id)?.state == .available)
        #expect(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first?.run.id == id)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aDedupeKeyStopsDuplicatesWhileItsJobIsLive(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let first = try #require(try queue.store.submit([NewJob(payload: document(), dedupeKey: "asset-1")]).first)
        #expect(!first.deduplicated)
        let again = try queue.store.submit([NewJob(payload: document("other"), dedupeKey: "asset-1"),
                                            NewJob(payload: document(), dedupeKey: "asset-2"),
                                            NewJob(payload: document(), dedupeKey: "asset-2"), NewJob(payload: document())])
        #expect(again[0] == SubmitResult(id: first.id, deduplicated: true))
        #expect(!again[1].deduplicated && again[2] == SubmitResult(id: again[1].id, deduplicated: true))
        #expect(!again[3].deduplicated && Set(again.map(\.id)).count == 3)
        #expect(same(try queue.store.job(first.id)?.payload, document()))

        // Once the job has finished, the key is free again.
        let runs = try queue.store.claim(queues: ["default"], limit: 10, owner: "w", lease: 30).map(\.run)
        _ = try queue.store.complete(runs.map { Completion(run: $0) })
        let later = try #require(try queue.store.submit([NewJob(payload: document(), dedupeKey: "asset-1")]).first)
        #expect(!later.deduplicated && later.id != first.id)
    }

    @Test(arguments: JobStoreKind.runnable)
    func cancellingAWaitingJobArchivesItAtOnce(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit([NewJob(payload: document()), NewJob(payload: document(), runAt: Date().addingTimeInterval(3600))])
            .map(\.id)
        #expect(try queue.store.cancel(ids[0]) == .cancelled)
        #expect(try queue.store.cancel(ids[1]) == .cancelled)
        #expect(try queue.store.job(ids[0])?.state == .cancelled && queue.store.job(ids[1])?.state == .cancelled)
        #expect(try queue.store.cancel(ids[0]) == .finished)
        #expect(try queue.store.cancel(987_654_321) == .notFound)
        #expect(try queue.store.claim(queues: ["default"], limit: 10, owner: "w", lease: 30).isEmpty)
    }

    @Test(arguments: JobStoreKind.runnable)
    func cancellingARunningJobStopsItAtItsNextHeartbeat(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit([NewJob(payload: document("a")), NewJob(payload: document("b"))]).map(\.id)
        let runs = try queue.store.claim(queues: ["default"], limit: 2, owner: "w", lease: 30).map(\.run)
        #expect(try queue.store.cancel(ids[0]) == .requested)
        #expect(try queue.store.job(ids[0])?.cancelRequested == true)
        let beat = try queue.store.heartbeat(runs, lease: 30)
        #expect(beat.extended == Set(ids) && beat.cancelRequested == [ids[0]])
        // Only a job that was asked to cancel can be acknowledged as cancelled.
        #expect(try queue.store.acknowledgeCancel(runs) == [ids[0]])
        #expect(try queue.store.job(ids[0])?.state == .cancelled && queue.store.job(ids[1])?.state == .running)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aCancelledRunThatFailsOrIsReleasedIsCancelledNotRetried(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit([NewJob(payload: document("a")), NewJob(payload: document("b"))]).map(\.id)
        let runs = try queue.store.claim(queues: ["default"], limit: 2, owner: "w", lease: 30).map(\.run)
        #expect(try queue.store.cancel(ids[0]) == .requested && queue.store.cancel(ids[1]) == .requested)
        #expect(try queue.store.fail([Failure(run: runs[0], error: passing)], policy: retryAtOnce) == [ids[0]: .cancelled])
        #expect(try queue.store.release([runs[1]]) == [ids[1]])
        #expect(try queue.store.job(ids[0])?.state == .cancelled && queue.store.job(ids[1])?.state == .cancelled)
    }

    @Test(arguments: JobStoreKind.runnable)
    func releasingAtShutdownSpendsNoAttempt(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document(), maxAttempts: 1)]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try queue.store.release([run]) == [id])
        let snapshot = try #require(try queue.store.job(id))
        #expect(snapshot.state == .available && snapshot.attempt == 0 && snapshot.leaseOwner == nil && snapshot.errors.isEmpty)
        // With its one attempt intact, it can still run and complete.
        let again = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w2", lease: 30).first).run
        #expect(again.attempt == 1)
        #expect(try queue.store.complete([Completion(run: again)]) == [id])
    }

    @Test(arguments: JobStoreKind.runnable)
    func retryRunsAFailedOrCancelledJobAgain(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit([NewJob(payload: document("a"), queue: "q", priority: 3, maxAttempts: 4),
                                          NewJob(payload: document("b"), queue: "q")]).map(\.id)
        let runs = try queue.store.claim(queues: ["q"], limit: 2, owner: "w", lease: 30).map(\.run)
        _ = try queue.store.fail([Failure(run: runs[0], error: permanent)], policy: retryAtOnce)
        _ = try queue.store.complete([Completion(run: runs[1])])
        let rerun = try #require(try queue.store.retry(ids[0]))
        #expect(rerun != ids[0])
        let snapshot = try #require(try queue.store.job(rerun))
        #expect(snapshot.state == .available && snapshot.attempt == 0 && snapshot.maxAttempts == 4 && snapshot.priority == 3)
        #expect(snapshot.queue == "q" && same(snapshot.payload, document("a")) && snapshot.errors.isEmpty)
        #expect(try queue.store.job(ids[0])?.state == .failed)
        #expect(try queue.store.retry(ids[1]) == nil)
        #expect(try queue.store.retry(987_654_321) == nil)
    }

    /// A double click on Retry all, or `derive jobs retry` run twice: one live job, not two.
    @Test(arguments: JobStoreKind.runnable)
    func retryingAFailedJobTwiceGivesOneLiveJob(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.store.fail([Failure(run: run, error: permanent)], policy: retryAtOnce)
        let rerun = try #require(try queue.store.retry(id))
        #expect(rerun != id)
        #expect(try queue.store.retry(id) == rerun)
        #expect(try liveJobs(queue.store) == 1)
        #expect(try queue.store.job(rerun)?.dedupeKey == "retry:\(id)")
        // The key is held only while the retry is live: once it has finished, it is free again.
        let again = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(again.id == rerun)
        #expect(try queue.store.complete([Completion(run: again)]) == [rerun])
        let later = try #require(try queue.store.retry(id))
        #expect(later != rerun && later != id)
        #expect(try liveJobs(queue.store) == 1)
    }

    /// After a retry fails too, Retry all retries both the original and its copy: one live job,
    /// and every generation carries the first job's key.
    @Test(arguments: JobStoreKind.runnable)
    func retryingAJobAndItsFailedRetryGivesOneLiveJob(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let original = try #require(try queue.store.submit([NewJob(payload: document())]).first).id
        let first = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.store.fail([Failure(run: first, error: permanent)], policy: retryAtOnce)
        let copy = try #require(try queue.store.retry(original))
        let second = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(second.id == copy)
        #expect(try queue.store.fail([Failure(run: second, error: permanent)], policy: retryAtOnce) == [copy: .failed])
        let archived = try #require(try queue.store.job(copy))
        #expect(archived.state == .failed && archived.dedupeKey == "retry:\(original)")

        // Newest first, as the failures page lists them.
        let fromCopy = try #require(try queue.store.retry(copy))
        #expect(fromCopy != copy && fromCopy != original)
        #expect(try queue.store.retry(original) == fromCopy)
        #expect(try queue.store.retry(copy) == fromCopy)
        #expect(try liveJobs(queue.store) == 1)
        let live = try #require(try queue.store.job(fromCopy))
        #expect(live.state == .available && live.dedupeKey == "retry:\(original)" && same(live.payload, document()))
    }

    @Test(arguments: JobStoreKind.runnable)
    func aRetryKeepsTheJobsOwnDedupeKey(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document(), dedupeKey: "asset-7")]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.store.fail([Failure(run: run, error: permanent)], policy: retryAtOnce)
        let rerun = try #require(try queue.store.retry(id))
        #expect(rerun != id)
        #expect(try queue.store.job(rerun)?.dedupeKey == "asset-7")
        #expect(try queue.store.retry(id) == rerun)
        // The key is the job's own: a submit with it finds the retry, as it would the job.
        let submitted = try #require(try queue.store.submit([NewJob(payload: document("other"), dedupeKey: "asset-7")]).first)
        #expect(submitted == SubmitResult(id: rerun, deduplicated: true))
        #expect(try liveJobs(queue.store) == 1)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aCancelledJobIsRetriedOnceWhileItsRetryIsLive(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let id = try #require(try queue.store.submit([NewJob(payload: document(), queue: "q", priority: 2)]).first).id
        #expect(try queue.store.cancel(id) == .cancelled)
        let rerun = try #require(try queue.store.retry(id))
        #expect(rerun != id)
        #expect(try queue.store.retry(id) == rerun)
        let snapshot = try #require(try queue.store.job(rerun))
        #expect(snapshot.state == .available && snapshot.queue == "q" && snapshot.priority == 2 && snapshot.dedupeKey == "retry:\(id)")
        #expect(try queue.store.job(id)?.state == .cancelled)
        // The retry cancelled too: retrying either runs the work once more, as one job.
        #expect(try queue.store.cancel(rerun) == .cancelled)
        let third = try #require(try queue.store.retry(rerun))
        #expect(third != rerun && third != id)
        #expect(try queue.store.retry(id) == third)
        #expect(try liveJobs(queue.store) == 1)
    }

    @Test(arguments: JobStoreKind.runnable)
    func pruningDeletesOnlyOldArchivedJobs(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        let ids = try queue.store.submit([NewJob(payload: document("a")), NewJob(payload: document("b"))]).map(\.id)
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.store.complete([Completion(run: run)])
        #expect(try queue.store.prune(finishedBefore: Date().addingTimeInterval(-3600)) == 0)
        #expect(try queue.store.prune(finishedBefore: Date().addingTimeInterval(60)) == 1)
        #expect(try queue.store.job(ids[0]) == nil)
        #expect(try queue.store.job(ids[1])?.state == .available)
    }

    @Test(arguments: JobStoreKind.runnable)
    func countsByQueueAndState(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        _ = try queue.store.submit([NewJob(payload: document(), queue: "a"), NewJob(payload: document(), queue: "a"),
                                    NewJob(payload: document(), queue: "a", runAt: Date().addingTimeInterval(3600)),
                                    NewJob(payload: document(), queue: "b"), NewJob(payload: document(), queue: "b")])
        _ = try queue.store.claim(queues: ["a"], limit: 1, owner: "w", lease: 30)
        // A retry waiting for its backoff is scheduled too, and counted apart from jobs set to run later.
        let run = try #require(try queue.store.claim(queues: ["b"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.store.fail([Failure(run: run, error: passing)], policy: retryMuchLater)
        let counts = try queue.store.counts()
        #expect(counts.map(\.queue) == ["a", "b"])
        #expect(counts[0].states == [.available: 1, .running: 1, .scheduled: 1] && counts[0].retrying == 0)
        #expect(counts[1].states == [.available: 1, .scheduled: 1] && counts[1].retrying == 1)
        let oldest = try #require(counts[1].oldestAvailable)
        #expect(abs(oldest.timeIntervalSinceNow) < 60)
    }

    @Test(arguments: JobStoreKind.runnable)
    func aJobTheSchemaRefusesIsAClearPermanentError(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        for job in [NewJob(payload: document(), queue: "no spaces!"), NewJob(payload: document(), maxAttempts: 0)] {
            do {
                _ = try queue.store.submit([job])
                Issue.record("submitted \(job)")
            } catch {
                #expect(error.code == .invalidJob && !error.isRetryable, "\(error)")
            }
        }
        #expect(try queue.store.counts().isEmpty)
    }
}

/// Jobs waiting or running, in every queue.
func liveJobs(_ store: any JobStore) throws -> Int {
    try store.counts().reduce(0) { total, queue in total + queue.states.filter { $0.key.isLive }.values.reduce(0, +) }
}

struct Missing: Error {}
