import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveTestSupport
import Foundation
import Synchronization
import Testing

/// Pausing and resuming a queue from the dashboard, the jobs list's bulk actions with what
/// became of each job, and finding an upload by the name of the file it came from.
@Suite struct DashboardQueueControlTests {
    static let token = DashboardActionTests.token

    static func start(_ queue: MemoryJobQueue) async throws -> DashboardServer {
        try await DashboardServer.start(database: queue, access: DashboardAccess(token: token), port: 0)
    }

    static func act(_ port: Int, _ path: String, form: String = "") async throws -> String {
        let answer = try await DashboardActionTests.post(port, path, form: form, bearer: token)
        #expect(answer.status == 303, "\(path): \(answer.status) \(answer.body)")
        return try #require(answer.headers["location"])
    }

    @Test func aQueueIsPausedAndResumedWithFeedbackAndMarkedWhilePaused() async throws {
        let queue = MemoryJobQueue()
        let waiting = try #require(try queue.submit([NewJob(payload: document("https://images.example/w.jpg"), queue: "bulk")]).first).id
        let server = try await Self.start(queue)

        let paused = try await Self.act(server.port, "/queues/bulk/pause")
        #expect(paused == "/queues?done=paused&queue=bulk")
        #expect(try queue.pausedQueues().map(\.queue) == ["bulk"] && (try queue.pausedQueues()).first?.pausedBy == "dashboard:127.0.0.1")
        #expect(try queue.claim(queues: ["bulk"], limit: 1, owner: "w", lease: 30).isEmpty, "a paused queue's job was claimed")
        let page = try await DashboardTests.get(server.port, paused)
        #expect(page.body.contains("Paused bulk: no worker claims from it") && page.body.contains("state-paused"), "\(page.body)")
        // Marked on the overview, and on the jobs list beside its waiting job.
        #expect(try await DashboardTests.get(server.port, "/").body.contains("<span class=\"state-paused\">paused</span>"))
        let jobs = try await DashboardTests.get(server.port, "/jobs").body
        #expect(jobs.contains("id=\"paused-queues\"") && jobs.contains("(queue paused)") && jobs.contains("/jobs/\(waiting)"))
        // A second pause changes nothing and says so; so does resuming twice.
        #expect(try await Self.act(server.port, "/queues/bulk/pause") == "/queues?done=already-paused&queue=bulk")
        #expect(try await DashboardTests.get(server.port, "/queues?done=already-paused&queue=bulk").body.contains("was already paused"))
        #expect(try await Self.act(server.port, "/queues/bulk/resume") == "/queues?done=resumed&queue=bulk")
        #expect(try await DashboardTests.get(server.port, "/queues?done=resumed&queue=bulk").body.contains("Resumed bulk: workers claim from it again."))
        #expect(try await Self.act(server.port, "/queues/bulk/resume") == "/queues?done=not-paused&queue=bulk")
        #expect(try queue.claim(queues: ["bulk"], limit: 1, owner: "w", lease: 30).map(\.run.id) == [waiting])
        // A queue with no jobs yet, by name from the form.
        #expect(try await Self.act(server.port, "/queues/pause", form: "queue=later") == "/queues?done=paused&queue=later")
        #expect(try await DashboardTests.get(server.port, "/queues").body.contains("later"))
        // A notice a link made elsewhere asks for says nothing untrue: bulk is not paused now.
        #expect(!(try await DashboardTests.get(server.port, "/queues?done=paused&queue=bulk").body.contains("id=\"notice\"")))
        await server.stop()
    }

    @Test func pausingNeedsTheTokenAndAQueueName() async throws {
        let queue = MemoryJobQueue()
        let server = try await Self.start(queue)
        #expect(try await DashboardActionTests.post(server.port, "/queues/bulk/pause", form: "csrf=x").status == 403)
        #expect(try await DashboardActionTests.post(server.port, "/queues/pause", form: "queue=a%20b", bearer: Self.token).status == 400)
        #expect(try await DashboardActionTests.post(server.port, "/queues/pause", form: "", bearer: Self.token).status == 400)
        #expect(try queue.pausedQueues().isEmpty, "a refused pause paused something")
        // Logged in, each queue has its button; read-only, a note says why there is none.
        let counts = [QueueCounts(queue: "bulk", states: [.available: 2], oldestAvailable: nil)]
        let allowed = Views.queues(counts, paused: [PausedQueue(queue: "held", pausedAt: Date(), pausedBy: "cli:ops@h")], now: Date(),
                                   actions: .allowed(csrf: "c"))
        #expect(allowed.contains("action=\"/queues/bulk/pause\"") && allowed.contains("action=\"/queues/held/resume\"") && allowed.contains("by cli:ops@h"))
        #expect(!Views.queues(counts, paused: [], now: Date(), actions: .readOnly).contains("<form method=\"post\""))
        // Who paused is text (a forwarded client address is whatever a proxy was told).
        let hostile = Views.queues([], paused: [PausedQueue(queue: "held", pausedAt: Date(), pausedBy: "dashboard:<script>alert(1)</script>")], now: Date())
        #expect(hostile.contains("dashboard:&lt;script&gt;alert(1)&lt;/script&gt;") && !hostile.contains("<script>alert"))
        await server.stop()
    }

    /// A waiting, a running, a completed and a failed job, and the ids of each.
    static func mixedQueue(clock: @escaping @Sendable () -> Date = { Date() }) throws
        -> (MemoryJobQueue, waiting: JobID, running: JobID, completed: JobID, failed: JobID) {
        let queue = MemoryJobQueue(clock: clock)
        let completed = try #require(try queue.submit([NewJob(payload: document("https://images.example/c.jpg"))]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.complete([Completion(run: run)])
        let failed = try DashboardActionTests.failedJob(queue)
        let running = try #require(try queue.submit([NewJob(payload: document("https://images.example/r.jpg"))]).first).id
        _ = try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30)
        let waiting = try #require(try queue.submit([NewJob(payload: document("https://images.example/w.jpg"))]).first).id
        return (queue, waiting, running, completed, failed)
    }

    @Test func bulkCancelCountsWhatBecameOfEachJob() async throws {
        let (queue, waiting, running, completed, _) = try Self.mixedQueue()
        let server = try await Self.start(queue)
        let location = try await Self.act(server.port, "/jobs/bulk",
                                          form: "action=cancel&id=\(waiting)&id=\(running)&id=\(completed)&id=999999&back=queue%3Ddefault%26evil%3Dx")
        #expect(location == "/jobs?queue=default&done=bulk-cancel&cancelled=1&requested=1&finished=1&missing=1", "\(location)")
        #expect(try queue.job(waiting)?.state == .cancelled && (try queue.job(running))?.cancelRequested == true)
        let page = try await DashboardTests.get(server.port, location)
        #expect(page.body.contains("Cancel: 1 cancelled (they were waiting); 1 cancel requested (running: their workers stop them at the next heartbeat); "
                                   + "1 skipped: already finished; 1 skipped: no such job."), "\(page.body)")
        await server.stop()
    }

    @Test func bulkRetryAndDeleteCountWhatBecameOfEachJob() async throws {
        // The real time, except while the test sets one.
        let clock = Mutex<Date?>(nil)
        let (queue, waiting, running, completed, failed) = try Self.mixedQueue(clock: { clock.withLock { $0 } ?? Date() })
        // Another failed job, in a queue of its own (so that it is the one claimed).
        let other = try #require(try queue.submit([NewJob(payload: document("https://images.example/o.jpg"), queue: "side", maxAttempts: 1)]).first).id
        let run = try #require(try queue.claim(queues: ["side"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.fail([Failure(run: run, error: DeriveError(.sourceRefused, "refused"))], policy: retryAtOnce)
        let server = try await Self.start(queue)
        let retried = try await Self.act(server.port, "/jobs/bulk", form: "action=retry&id=\(failed)&id=\(completed)&id=\(waiting)&id=\(failed)")
        // The failed job once (the repeat is one id), the completed and the waiting ones skipped.
        #expect(retried == "/jobs?done=bulk-retry&queued=1&waiting=0&run_now=0&skipped=2&missing=0", "\(retried)")
        #expect(try await DashboardTests.get(server.port, retried).body.contains("Retry: 1 queued again; 2 skipped: not failed or cancelled"))
        // A failed job whose work was queued a minute ago: retrying it queues nothing.
        clock.withLock { $0 = Date().addingTimeInterval(-60) }
        _ = try queue.retry(other)
        clock.withLock { $0 = nil }
        let again = try await Self.act(server.port, "/jobs/bulk", form: "action=retry&id=\(other)")
        #expect(again.contains("queued=0&waiting=1"), "\(again)")
        #expect(try await DashboardTests.get(server.port, again).body.contains("1 skipped as duplicates (their work was already waiting)"))

        let deleted = try await Self.act(server.port, "/jobs/bulk", form: "action=delete&id=\(completed)&id=\(failed)&id=\(running)&id=\(waiting)")
        #expect(deleted == "/jobs?done=bulk-delete&deleted=2&live=2&missing=0", "\(deleted)")
        #expect(try queue.job(completed) == nil && (try queue.job(failed)) == nil)
        #expect(try queue.job(running)?.state == .running && (try queue.job(waiting))?.state == .available, "a live job was deleted")
        let page = try await DashboardTests.get(server.port, deleted).body
        #expect(page.contains("Delete: 2 finished jobs deleted; 2 skipped: waiting or running (only finished jobs are deleted; cancel them first)."), "\(page)")
        await server.stop()
    }

    @Test func bulkRequestsAreBoundedAndTheirIdsChecked() async throws {
        let (queue, waiting, _, _, _) = try Self.mixedQueue()
        let server = try await Self.start(queue)
        let tooMany = (1...201).map { "id=\($0)" }.joined(separator: "&")
        for (form, why) in [("action=cancel&" + tooMany, "At most 200 jobs"), ("action=cancel&id=12abc", "is not a job id"),
                            ("action=cancel&id=-3", "is not a job id"), ("action=cancel&id=99999999999999999999999", "is not a job id"),
                            ("action=cancel", "No job was selected"), ("action=explode&id=\(waiting)", "cancel, retry or delete"),
                            ("id=\(waiting)", "cancel, retry or delete")] {
            let answer = try await DashboardActionTests.post(server.port, "/jobs/bulk", form: form, bearer: Self.token)
            #expect(answer.status == 400 && answer.body.contains(why), "\(form.prefix(60)): \(answer.status) \(answer.body)")
        }
        #expect(try await DashboardActionTests.post(server.port, "/jobs/bulk", form: "action=cancel&id=\(waiting)&csrf=x").status == 403)
        #expect(try queue.job(waiting)?.state == .available, "a refused bulk action acted")
        await server.stop()
    }

    @Test func theListHasCheckboxesAndBulkButtonsThatAskFirstOnlyWhenLoggedIn() throws {
        let (queue, _, _, completed, _) = try Self.mixedQueue()
        let page = try queue.finishedJobs(JobFilter(), after: nil, limit: 50)
        let live = try queue.jobs(state: nil, queue: nil, limit: 50)
        let allowed = Views.jobs(page, filter: JobFilter(queue: "default"), live: live, actions: .allowed(csrf: "c"))
        #expect(allowed.contains("<form method=\"post\" action=\"/jobs/bulk\"") && allowed.contains("data-select-all"))
        #expect(allowed.contains("name=\"id\" value=\"\(completed)\"") && allowed.contains("name=\"back\" value=\"queue=default\""))
        for action in ["cancel", "retry", "delete"] {
            #expect(allowed.contains("name=\"action\" value=\"\(action)\" data-confirm=\""), "\(action) does not ask first")
        }
        #expect(allowed.contains("Only finished jobs are deleted; waiting and running ones are kept."))
        let readOnly = Views.jobs(page, filter: JobFilter(), live: live, actions: .readOnly)
        #expect(!readOnly.contains("type=\"checkbox\"") && !readOnly.contains("/jobs/bulk"))
    }

    @Test func anUploadIsFoundByTheNameOfItsFileAndItsPageShowsIt() async throws {
        let queue = MemoryJobQueue()
        let source = "file:///srv/assets/originals/5f2b.jpg"
        let id = try #require(try queue.submit([NewJob(payload: document(source), originalName: "/home/me/Holiday <Beach>.JPG")]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.complete([Completion(run: run)])
        let other = try #require(try queue.submit([NewJob(payload: document("https://images.example/beach.jpg"))]).first).id
        #expect(try queue.originalNames(of: [source, "nothing"]) == [source: ["Holiday <Beach>.JPG"]])
        let server = try await DashboardServer.start(database: queue, port: 0)
        let found = try await DashboardTests.get(server.port, "/jobs?source=Holiday")
        #expect(found.body.contains("href=\"/jobs/\(id)\"") && !found.body.contains("href=\"/jobs/\(other)\""), "\(found.body)")
        // By the source, as before.
        #expect(try await DashboardTests.get(server.port, "/jobs?source=5f2b").body.contains("href=\"/jobs/\(id)\""))
        let job = try await DashboardTests.get(server.port, "/jobs/\(id)")
        #expect(job.body.contains("<td>uploaded as</td><td>Holiday &lt;Beach&gt;.JPG</td>"), "\(job.body)")
        await server.stop()
    }
}
