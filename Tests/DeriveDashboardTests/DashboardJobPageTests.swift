import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveTestSupport
import Foundation
import Testing

/// A job's page says everything about it, while it runs and after: its worker, its stage, its
/// exact start and run time, the asset it produced, its outputs, and the other jobs of its
/// work; a live job's page follows it until it ends.
@Suite struct DashboardJobPageTests {
    @Test func aJobsPageFollowsItFromItsStageToItsEndAndKeepsItsWorker() async throws {
        let queue = try TestQueue(.sqlite)
        let store = try DashboardRecordsTests.folder()
        defer { try? FileManager.default.removeItem(at: store.root) }
        // An asset recorded by an earlier job: the one this job's report will name.
        let (assetID, _) = try DashboardRecordsTests.recorded(queue, store: store)
        let sha = String(repeating: "d", count: 64)
        let id = try #require(try queue.store.submit([NewJob(payload: document("https://images.example/<b>x</b>.jpg"))]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "host-b:7:<i>w</i>", lease: 30).first).run
        #expect(run.id == id)
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, store: store, port: 0)
        defer { Task { await server.stop() } }
        // Its worker's report, just before the page is asked for (on a loaded machine the server
        // can take long enough to start that an earlier report would count as gone).
        let since = Date().addingTimeInterval(-3)
        try queue.store.report(WorkerStatus(id: "host-b:7:<i>w</i>", host: "host-b", pid: 7, queues: ["default"], slots: 1, startedAt: since,
                                            seenAt: Date(), running: [.init(id: id, stage: "encode", since: since)], finished: [:], stopping: false))

        let running = try await DashboardTests.get(server.port, "/jobs/\(id)")
        #expect(running.status == 200)
        // Its worker (escaped), the stage it reported and for how long, and the page follows it.
        #expect(running.body.contains("host-b:7:&lt;i&gt;w&lt;/i&gt;") && !running.body.contains("<i>w</i>"))
        let stage = running.body.components(separatedBy: "<span id=\"job-stage\">encode for ").dropFirst().first?.prefix { $0 != "s" }
        #expect(stage.flatMap { Int($0) }.map { (3...120).contains($0) } == true, "\(String(describing: stage)) in \(running.body)")
        #expect(running.body.contains("so far"))
        #expect(running.body.contains("<div id=\"job\" data-refresh=\"/jobs/\(id)\" data-every=\"2\">"))
        let started = try #require(try queue.store.job(id)?.startedAt)

        let result: JSONValue = .object([
            "source": .object(["sha256": .string(sha)]),
            "timings": .object(["fetch": .decimal(3), "total": .decimal(1234.5)]),
            "outputs": .array([.object(["name": .string("card"), "key": .string("\(sha)/card.jpg"), "format": .string("jpeg"),
                                        "width": .int(256), "height": .int(300)])]),
        ])
        #expect(try queue.store.complete([Completion(run: run, result: result)]) == [id])
        let done = try await DashboardTests.get(server.port, "/jobs/\(id)")
        let finished = try #require(try queue.store.job(id)?.finishedAt)
        // Ended: completed, the same worker, the exact start and finish, the run time between
        // them, the asset and the output linked, and nothing to follow any more.
        #expect(done.body.contains("<span class=\"state-completed\" id=\"job-state\">completed</span>"))
        #expect(done.body.contains("host-b:7:&lt;i&gt;w&lt;/i&gt;"), "the worker is gone once the job ended")
        #expect(done.body.contains(Self.precise(started) + " (its last attempt)") && done.body.contains(Self.precise(finished)))
        // To the millisecond under a minute (a loaded machine can take longer between the claim and the completion).
        let ran = finished.timeIntervalSince(started)
        let runTime = ran < 60 ? String(format: "%.3f s", ran) : humanDuration(ran)
        #expect(done.body.contains("<td>run time</td><td>\(runTime), 1234.5 ms in the worker&#39;s report</td>"), "\(done.body)")
        #expect(done.body.contains("<a href=\"/assets/\(assetID)\">asset #\(assetID)</a>"))
        #expect(done.body.contains("<a href=\"/jobs/\(id)/outputs/0\">card</a>"))
        #expect(!done.body.contains("data-refresh") && !done.body.contains("job-stage"))
        #expect(try await DashboardTests.get(server.port, "/jobs/\(id)/outputs/0").status == 200)
    }

    /// A job's page shows the tags and context it gives its asset, and the asset's page the
    /// ones the asset carries, escaped (issue 30).
    @Test func tagsAndContextAreShownEscaped() async throws {
        let queue = try TestQueue(.sqlite)
        let store = try DashboardRecordsTests.folder()
        defer { try? FileManager.default.removeItem(at: store.root) }
        let payload: JSONValue = .object(["version": .int(1), "source": .string("https://images.example/a.jpg"), "preset": .string("web"),
                                          "tags": .array([.string("sale"), .string("<script>x</script>")]),
                                          "context": .object(["size": .string("small"), "kind": .string("<b>shoes</b>")])])
        let id = try #require(try queue.store.submit([NewJob(payload: payload)]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        let asset = AssetRecord(sha256: String(repeating: "c", count: 64), sourceURL: "https://images.example/a.jpg", bytes: 1000, format: "jpeg",
                                width: 40, height: 30, pages: 1, hasAlpha: false, orientation: 1, colorSpace: "srgb", iccDescription: nil, exif: [:],
                                hasLocation: false, perceptualHash: nil, tags: ["sale", "<script>x</script>"],
                                context: ["kind": "<b>shoes</b>", "size": "small"])
        #expect(try queue.store.complete([Completion(run: run, record: DerivationRecord(asset: asset, derivatives: []))]) == [id])
        let server = try await DashboardServer.start(database: queue.store, records: queue.store, store: store, port: 0)
        defer { Task { await server.stop() } }
        let page = try await DashboardTests.get(server.port, "/jobs/\(id)").body
        #expect(page.contains("<td>tags</td><td>sale, &lt;script&gt;x&lt;/script&gt;</td>"), "\(page)")
        #expect(page.contains("<td>context</td><td>kind=&lt;b&gt;shoes&lt;/b&gt;; size=small</td>"), "\(page)")
        #expect(!page.contains("<script>x") && !page.contains("<b>shoes"))
        let assetID = try #require(try queue.store.assetID(sha256: asset.sha256))
        let assetPage = try await DashboardTests.get(server.port, "/assets/\(assetID)").body
        #expect(assetPage.contains("<td>tags</td><td>sale, &lt;script&gt;x&lt;/script&gt;</td>"), "\(assetPage)")
        #expect(assetPage.contains("<td>context</td><td>kind=&lt;b&gt;shoes&lt;/b&gt;; size=small</td>"), "\(assetPage)")
        #expect(!assetPage.contains("<script>x") && !assetPage.contains("<b>shoes"))
    }

    /// An original links to its retries and a retry to its original and its siblings.
    @Test func anOriginalAndItsRetriesLinkToEachOther() async throws {
        let queue = MemoryJobQueue()
        let original = try #require(try queue.submit([NewJob(payload: document(), maxAttempts: 1)]).first).id
        let run = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.fail([Failure(run: run, error: DeriveError(.sourceUnavailable, "503"))], policy: retryAtOnce)
        let first = try #require(try queue.retry(original))
        let again = try #require(try queue.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        _ = try queue.fail([Failure(run: again, error: DeriveError(.sourceUnavailable, "503"))], policy: retryAtOnce)
        let second = try #require(try queue.retry(first))
        let server = try await DashboardServer.start(database: queue, port: 0)
        defer { Task { await server.stop() } }
        let page = try await DashboardTests.get(server.port, "/jobs/\(original)").body
        #expect(page.contains("<td>retried as</td><td><a href=\"/jobs/\(first)\">#\(first)</a> (failed), <a href=\"/jobs/\(second)\">#\(second)</a> (available)</td>"),
                "\(page)")
        let retry = try await DashboardTests.get(server.port, "/jobs/\(second)").body
        #expect(retry.contains("<td>retry of</td><td><a href=\"/jobs/\(original)\">#\(original)</a></td>"))
        #expect(retry.contains("<td>same work</td><td><a href=\"/jobs/\(first)\">#\(first)</a> (failed)</td>"), "\(retry)")
        // A job nobody retried lists nothing.
        let alone = try #require(try queue.submit([NewJob(payload: document())]).first).id
        let plain = try await DashboardTests.get(server.port, "/jobs/\(alone)").body
        #expect(!plain.contains("retried as") && !plain.contains("same work") && !plain.contains("retry of"))
    }

    /// The jobs list's first page is marked to be read again (at its own address, so every
    /// filter it carries is kept); an older page is not; the script that reads it has the pause
    /// button and holds off while a field is in use.
    @Test func theFirstPageOfJobsFollowsTheQueue() async throws {
        let queue = MemoryJobQueue()
        _ = try OperatorViewsFixtures.finish(queue, count: 60)
        let server = try await DashboardServer.start(database: queue, port: 0)
        defer { Task { await server.stop() } }
        let first = try await DashboardTests.get(server.port, "/jobs?queue=default").body
        #expect(first.contains("<div id=\"jobs\" data-refresh=\"\">"))
        let next = try #require(first.components(separatedBy: "rel=\"next\"")[0].components(separatedBy: "href=\"").last?.prefix { $0 != "\"" })
        let older = try await DashboardTests.get(server.port, String(next).replacingOccurrences(of: "&amp;", with: "&")).body
        #expect(older.contains("<div id=\"jobs\">") && !older.contains("data-refresh"), "\(next)")
        let script = try await DashboardTests.get(server.port, "/static/dashboard.js").body
        #expect(script.contains("Pause live updates") && script.contains("live.dataset.refresh || location.href") && script.contains("document.hidden"))
    }

    static func precise(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }
}

enum OperatorViewsFixtures {
    /// Completes `count` jobs in one queue.
    static func finish(_ queue: MemoryJobQueue, count: Int) throws -> [JobID] {
        let ids = try queue.submit((0..<count).map { _ in NewJob(payload: document()) }).map(\.id)
        let runs = try queue.claim(queues: ["default"], limit: count, owner: "w", lease: 30).map(\.run)
        _ = try queue.complete(runs.map { Completion(run: $0) })
        return ids
    }
}

/// Totals per queue and per worker over time, as bars under a labelled time axis.
@Suite struct DashboardTotalsTests {
    @Test func totalsAreDrawnPerQueueAndPerWorkerWithATimeAxis() async throws {
        let queue = MemoryJobQueue()
        func finish(_ count: Int, queue name: String, owner: String, failing: Bool = false) throws {
            _ = try queue.submit((0..<count).map { _ in NewJob(payload: document(), queue: name, maxAttempts: 1) })
            let runs = try queue.claim(queues: [name], limit: count, owner: owner, lease: 30).map(\.run)
            if failing {
                _ = try queue.fail(runs.map { Failure(run: $0, error: DeriveError(.corruptImage, "truncated")) }, policy: retryAtOnce)
            } else {
                _ = try queue.complete(runs.map { Completion(run: $0) })
            }
        }
        try finish(4, queue: "default", owner: "host-a:1:<script>x</script>")
        try finish(2, queue: "bulk", owner: "host-b:2:y", failing: true)
        let server = try await DashboardServer.start(database: queue, port: 0)
        defer { Task { await server.stop() } }
        let page = try await DashboardTests.get(server.port, "/totals?hours=1")
        #expect(page.status == 200)
        let body = page.body
        // One chart for all, one per queue, one per worker; the worker's name escaped.
        #expect(body.components(separatedBy: "<svg").count - 1 == 5, "\(body)")
        #expect(body.contains("4 completed, 2 failed in the last hour") && body.contains("4 completed, 0 failed in the last hour")
                && body.contains("0 completed, 2 failed in the last hour"))
        #expect(body.contains("host-a:1:&lt;script&gt;x&lt;/script&gt;") && !body.contains("<script>x"))
        #expect(body.contains("<a href=\"/jobs?queue=bulk\">bulk</a>"))
        // The chart for all has a titled bar; a queue's or a worker's draws each outcome as one path.
        #expect(body.contains(" 4 completed, 2 failed</title><rect class=\"completed\"") || body.contains(" 4 completed, 0 failed</title>"), "\(body)")
        #expect(body.components(separatedBy: "<path class=\"completed\" d=\"M").count - 1 == 2
                && body.components(separatedBy: "<path class=\"failed\" d=\"M").count - 1 == 2, "\(body)")
        // The axis: a tick every 10 minutes of the hour, each labelled with its time (UTC).
        let ticks = body.components(separatedBy: "id=\"totals-all\"")[1].components(separatedBy: "</svg>")[0]
        #expect(ticks.components(separatedBy: "<line class=\"tick\"").count - 1 == 6)
        let labels = ticks.components(separatedBy: "<text x=").dropFirst().compactMap { $0.split(separator: ">").dropFirst().first?.prefix(5) }
        #expect(labels.count == 6 && labels.allSatisfy { $0.count == 5 && $0.dropFirst(2).first == ":" }, "\(labels)")
        // At round times: every 10 minutes of the hour.
        #expect(labels.allSatisfy { $0.hasSuffix("0") }, "\(labels)")
        let end = Views.TotalsWindow.lastHour.start(at: Date()).addingTimeInterval(3600)
        #expect(labels.contains { String($0) == Self.clock(Date(timeIntervalSince1970: (end.timeIntervalSince1970 / 600).rounded(.down) * 600)) }
                || labels.contains { String($0) == Self.clock(Date(timeIntervalSince1970: (end.timeIntervalSince1970 / 600).rounded(.down) * 600 - 600)) },
                "\(labels)")
        // The day: 96 bars of 15 minutes, a tick every 4 hours; an unknown window is the day.
        let day = try await DashboardTests.get(server.port, "/totals?hours=7").body
        #expect(day.contains("Finished jobs per 15 minutes over the last 24 hours"))
        #expect(day.components(separatedBy: "id=\"totals-all\"")[1].components(separatedBy: "</svg>")[0]
            .components(separatedBy: "<line class=\"tick\"").count - 1 == 6)
        // The overview's chart has the axis too, and links here.
        let overview = try await DashboardTests.get(server.port, "/").body
        #expect(overview.contains("id=\"throughput\"") && overview.contains("<line class=\"tick\"") && overview.contains("href=\"/totals\""))
    }

    static func clock(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }
}
