import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveTestSupport
import Foundation
import Synchronization
import Testing

/// Every action says what it did on the page it lands on: a cancel of a running job is a
/// request, a retry that queues nothing says why, a retry links to its original, a group's
/// retry counts what it queued and what it skipped.
@Suite struct DashboardFeedbackTests {
    static let token = DashboardActionTests.token

    static func start(_ queue: MemoryJobQueue, store: (any AssetStore)? = nil) async throws -> DashboardServer {
        try await DashboardServer.start(database: queue, store: store, access: DashboardAccess(token: token), port: 0)
    }

    static func act(_ port: Int, _ path: String, form: String = "") async throws -> String {
        let answer = try await DashboardActionTests.post(port, path, form: form, bearer: token)
        #expect(answer.status == 303, "\(path): \(answer.status)")
        return try #require(answer.headers["location"])
    }

    @Test func cancellingARunningJobSaysCancelRequestedAndOffersNoSecondCancel() async throws {
        let queue = MemoryJobQueue()
        let running = try #require(try queue.submit([NewJob(payload: document())]).first).id
        _ = try queue.claim(queues: ["default"], limit: 1, owner: "host-a:1:x", lease: 30)
        let waiting = try #require(try queue.submit([NewJob(payload: document("https://images.example/b.jpg"))]).first).id
        let server = try await Self.start(queue)
        let location = try await Self.act(server.port, "/jobs/\(running)/cancel")
        #expect(location == "/jobs/\(running)?done=cancel-requested")
        let page = try await DashboardTests.get(server.port, location)
        #expect(page.body.contains("Cancel requested: the worker running #\(running) stops it") && page.body.contains("running, cancel requested"))
        #expect(page.body.contains("host-a:1:x"), "the worker running it is not shown")
        // Logged in, the page offers no Cancel button for a job already asked to stop.
        let snapshot = try #require(try queue.job(running))
        #expect(!Views.job(snapshot, actions: .allowed(csrf: "c")).contains("/jobs/\(running)/cancel"))
        // A waiting job is cancelled at once; a finished one has nothing to cancel.
        #expect(try await Self.act(server.port, "/jobs/\(waiting)/cancel") == "/jobs/\(waiting)?done=cancelled")
        #expect(try await DashboardTests.get(server.port, "/jobs/\(waiting)?done=cancelled").body.contains("Cancelled: #\(waiting) was waiting"))
        #expect(try await Self.act(server.port, "/jobs/\(waiting)/cancel") == "/jobs/\(waiting)?done=cancel-finished")
        await server.stop()
    }

    @Test func retryingACompletedOrMissingJobSaysWhyNothingWasQueued() async throws {
        let queue = MemoryJobQueue()
        let id = try #require(try queue.submit([NewJob(payload: document())]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.complete([Completion(run: run)])
        let server = try await Self.start(queue)
        let location = try await Self.act(server.port, "/jobs/\(id)/retry")
        #expect(location == "/jobs/\(id)?done=not-retried&state=completed")
        #expect(try await DashboardTests.get(server.port, location).body.contains("Nothing was queued: it completed"))
        let missing = try await Self.act(server.port, "/jobs/98765/retry")
        let page = try await DashboardTests.get(server.port, missing)
        #expect(page.status == 404 && page.body.contains("Nothing was queued: there is no such job."))
        #expect(try queue.counts().isEmpty, "a retry of a completed or missing job queued something")
        await server.stop()
    }

    @Test func aRetryLinksToItsOriginalAndOneOfWorkAlreadyWaitingSaysSo() async throws {
        // The real time, except while a test sets one.
        let clock = Mutex<Date?>(nil)
        let queue = MemoryJobQueue(clock: { clock.withLock { $0 } ?? Date() })
        let id = try DashboardActionTests.failedJob(queue)
        let other = try DashboardActionTests.failedJob(queue)
        let server = try await Self.start(queue)
        let location = try await Self.act(server.port, "/jobs/\(id)/retry")
        let retry = try #require(JobID(location.split(separator: "?")[0].replacingOccurrences(of: "/jobs/", with: "")))
        #expect(retry != id && location == "/jobs/\(retry)?done=retried&from=\(id)")
        let page = try await DashboardTests.get(server.port, location)
        #expect(page.body.contains("Queued again as #\(retry), a retry of #\(id).") && page.body.contains("<a href=\"/jobs/\(id)\">#\(id)</a>"))

        // Another failed job whose work was queued a minute ago: retrying it queues nothing.
        clock.withLock { $0 = Date().addingTimeInterval(-60) }
        let waiting = try #require(try queue.retry(other))
        clock.withLock { $0 = nil }
        #expect(try await Self.act(server.port, "/jobs/\(other)/retry") == "/jobs/\(waiting)?done=retry-waiting&from=\(other)")
        #expect(try await DashboardTests.get(server.port, "/jobs/\(waiting)?done=retry-waiting&from=\(other)").body
            .contains("Nothing new was queued: the work of #\(other) was already waiting as #\(waiting)."))
        await server.stop()
    }

    @Test func retryingAFailureGroupCountsWhatItQueuedAndWhatItSkipped() async throws {
        let queue = MemoryJobQueue()
        // Two generations of one piece of work (a job and its failed retry share a key), and one other.
        let first = try DashboardActionTests.failedJob(queue)
        _ = try queue.retry(first)
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.fail([Failure(run: run, error: DeriveError(.sourceUnavailable, "origin answered 503"))], policy: retryAtOnce)
        _ = try DashboardActionTests.failedJob(queue)
        let server = try await Self.start(queue)
        let location = try await Self.act(server.port, "/failures/retry", form: "code=source_unavailable&hours=1")
        #expect(location.contains("done=group-retried") && location.contains("queued=2") && location.contains("skipped=1"), "\(location)")
        #expect(try queue.counts().first?.states[.available] == 2)
        let page = try await DashboardTests.get(server.port, location)
        #expect(page.body.contains("Retried 3 failed jobs: 2 queued again, 1 skipped as duplicate"), "\(page.body)")
        await server.stop()
    }

    /// The query carries codes and numbers only: text in it is never shown.
    @Test func aNoticeIsWrittenByTheDashboardNotByTheLink() async throws {
        let queue = MemoryJobQueue()
        let id = try DashboardActionTests.failedJob(queue)
        let server = try await Self.start(queue)
        let page = try await DashboardTests.get(server.port, "/jobs/\(id)?done=Your%20token%20expired&from=%3Cb%3E")
        #expect(page.status == 200 && !page.body.contains("id=\"notice\"") && !page.body.contains("token expired"))
        let forged = try await DashboardTests.get(server.port, "/jobs/\(id)?done=retried&from=%3Cscript%3E")
        #expect(!forged.body.contains("id=\"notice\"") && !forged.body.contains("<script>"))
        await server.stop()
    }
}

/// A job's page shows everything its report timed: each stage, each output's apply and encode,
/// what the total holds beyond them, and the total.
@Suite struct DashboardTimingTests {
    @Test func theWaterfallHasEveryStageAndEachOutputsApplyAndEncode() throws {
        let result: JSONValue = .object([
            "timings": .object(["fetch": .decimal(12), "header": .decimal(0.5), "plan": .decimal(0.2), "decode": .decimal(40), "metadata": .decimal(3),
                                "faces": .decimal(0), "store": .decimal(8), "total": .decimal(18_100)]),
            "outputs": .array([
                .object(["name": .string("card"), "width": .int(320), "height": .int(200),
                         "timings": .object(["apply": .decimal(20), "encode": .decimal(17_929)])]),
                .object(["name": .string("thumb"), "breakpointWidth": .int(64), "timings": .object(["apply": .decimal(2), "encode": .decimal(5)])]),
            ]),
        ])
        let finished = Date(timeIntervalSince1970: 1_800_000_000)
        let job = JobSnapshot(id: 7, queue: "default", state: .completed, priority: 0, attempt: 1, maxAttempts: 5, runAt: nil, leaseOwner: nil,
                              dedupeKey: "retry:3", cancelRequested: false, payload: document(), errors: [], result: result,
                              createdAt: finished.addingTimeInterval(-60), finishedAt: finished)
        let page = Views.job(job)
        for stage in ["fetch", "header", "plan", "decode", "metadata", "faces", "card: apply", "card: encode", "thumb @64w: apply",
                      "thumb @64w: encode", "store", "other", "total"] {
            #expect(page.contains("<td>\(stage)</td>") || page.contains("<strong>\(stage)</strong>"), "no \(stage) in the timings")
        }
        #expect(page.contains("17929.0 ms") && page.contains("18100.0 ms"))
        // What the total holds beyond the stages named: 18,100 − 18,019.7.
        #expect(page.contains("80.3 ms"))
        // Its start (the finish less the run time), its run time, and the job it retried.
        #expect(page.contains(timestampText(finished.addingTimeInterval(-18.1))) && page.contains("<a href=\"/jobs/3\">#3</a>"))
    }

    func timestampText(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
}

/// A key recorded for an output that the store would refuse names nothing: 404, not the 503
/// of a database that does not answer.
@Suite struct DashboardStoredKeyTests {
    @Test func aBadStoredKeyIsNotFound() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-dashboard-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let queue = MemoryJobQueue()
        let id = try #require(try queue.submit([NewJob(payload: document())]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.complete([Completion(run: run, result: .object(["outputs": .array([
            .object(["name": .string("evil"), "key": .string("../../etc/passwd"), "format": .string("jpeg")]),
        ])]))])
        let server = try await DashboardServer.start(database: queue, store: FileAssetStore(root: folder), port: 0)
        let answer = try await DashboardTests.get(server.port, "/jobs/\(id)/outputs/0")
        #expect(answer.status == 404 && answer.body.contains("not one the store can hold"))
        await server.stop()
    }
}

/// Finding jobs by what their source contains, and bulk actions that ask first.
@Suite struct DashboardSearchTests {
    @Test func jobsAreFoundByTextInTheirSource() async throws {
        let (queue, hostileJob, completed) = try DashboardTests.queue()
        let server = try await DashboardServer.start(database: queue, port: 0)
        // Sources are https://images.example/0.jpg … 59.jpg: "/7.jpg" is one of them.
        let page = try await DashboardTests.get(server.port, "/jobs?source=%2F7.jpg")
        #expect(page.body.contains("href=\"/jobs/\(completed[7])\"") && !page.body.contains("href=\"/jobs/\(completed[17])\""), "\(page.body)")
        #expect(page.body.contains("name=\"source\" value=\"/7.jpg\""))
        let hostile = try await DashboardTests.get(server.port, "/jobs?source=%3Cscript%3E")
        #expect(hostile.body.contains("href=\"/jobs/\(hostileJob)\"") && !hostile.body.contains("href=\"/jobs/\(completed[0])\""))
        #expect(!hostile.body.contains("<script>"))
        // The waiting job is listed only when its source matches.
        #expect(try await DashboardTests.get(server.port, "/jobs?source=waiting").body.contains("Waiting and running"))
        #expect(!(try await DashboardTests.get(server.port, "/jobs?source=nothing-like-it").body.contains("Waiting and running")))
        await server.stop()
    }

    @Test func bulkActionsAskFirst() {
        let failures = Views.failures([FailureGroup(code: "source_refused", count: 39, lastFailedAt: Date())], examples: [:], hours: 24,
                                      actions: .allowed(csrf: "c"))
        #expect(failures.contains("data-confirm=\"Retry all 39 failed jobs of source_refused from the last 24 h?"), "\(failures)")
        let reprocess = Views.reprocess(preset: "cards", version: 2, which: "all", matched: 8, actions: .allowed(csrf: "c"))
        #expect(reprocess.contains("data-confirm=\"Reprocess 8 assets with preset cards v2?\""))
    }
}
