import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// The dashboard in a real browser: Debian's headless Chromium, driven by Selenium
/// (`Tests/Browser/dashboard.py`), against `derive dashboard` and `derive work` on the real
/// PostgreSQL and HTTP origin that Scripts/test.sh starts.
@Suite(.enabled(if: TestServers.available && TestServers.postgresAvailable && Browser.available,
                "needs the servers, Chromium, chromedriver and Selenium that Scripts/test.sh installs and starts"))
struct DashboardBrowserTests {
    @Test func anOperatorWatchesTheQueueDrainSeesFailuresAsTextAndRetriesThem() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin()
        let token = "token-\(UUID().uuidString)"
        // Jobs that take a few seconds each, so the browser sees the counts move; and one whose
        // source and error carry a script, which must show as text and never run.
        // Each with a face-aware crop (so the worker looks for faces) and a plain scale (which
        // the asset page draws the faces on).
        let slow = (0..<5).map { _ in
            NewJob(payload: .object(["version": .int(1), "source": .string(origin + "/slow?delay=2&n=\(UUID().uuidString)"), "outputs": .array([
                .object(["name": .string("t"), "chain": .string("c_thumb,w_32,h_32")]),
                .object(["name": .string("scaled"), "chain": .string("c_scale,w_320")]),
            ])]))
        }
        _ = try queue.store.submit(slow)
        // A preset with two versions and a schedule, for their pages.
        for width in [256, 320] {
            _ = try queue.store.savePreset(name: "cards", outputs: .array([.object(["name": .string("card"), "chain": .string("c_scale,w_\(width)")])]))
        }
        try queue.store.saveSchedule(Schedule(name: "nightly-cards", cron: "0 3 * * *", timeZone: "UTC",
                                              action: ReprocessPlan(preset: "cards", filter: AssetFilter(stale: true)).taskDocument))
        let hostileSource = "/nonexistent/<script>window.pwned=1</script>.jpg"
        let hostile = try #require(try queue.store.submit([WorkerBehaviourTests.job(hostileSource, maxAttempts: 1)]).first).id
        // Jobs in a queue no worker serves, to bulk-cancel two at a time; and an upload's job,
        // to find by the name of the file it came from.
        var heldJob = WorkerBehaviourTests.job(origin + "/held.jpg")
        heldJob.queue = "held"
        let held = try queue.store.submit((0..<4).map { index in
            var job = heldJob
            job.payload = .object(["version": .int(1), "source": .string(origin + "/held-\(index).jpg"), "preset": .string("cards")])
            return job
        }).map(\.id)
        var namedJob = heldJob
        namedJob.payload = .object(["version": .int(1), "source": .string("s3://\(UUID().uuidString.lowercased())/originals/5f2b9c.jpg"),
                                    "preset": .string("cards")])
        namedJob.originalName = "Sunset-Holiday 2026.png"
        let named = try #require(try queue.store.submit([namedJob]).first).id

        // The worker writes to S3 (WorkerBehaviourTests.worker); the dashboard reads outputs back from there.
        let s3 = try TestServers.s3()
        let dashboard = try BackgroundProcess(["dashboard", "--port", "0", "--database", queue.location, "--store", "s3://\(s3.bucket)/behaviour"],
                                              environment: WorkerEndToEndTests.environment(s3).merging(["DERIVE_DASHBOARD_TOKEN": token]) { $1 })
        defer {
            dashboard.signal(SIGTERM)
            _ = dashboard.wait(timeout: 10)
        }
        let url = "http://127.0.0.1:\(try #require(dashboard.listeningPort(), "\(dashboard.logLines)"))"
        let worker = try WorkerBehaviourTests.worker(queue, ["--slots", "1"])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 30)
        }

        let browser = Process()
        browser.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        browser.arguments = ["python3", Paths.repository.appendingPathComponent("Tests/Browser/dashboard.py").path, url, token, String(hostile)]
        var environment = ProcessInfo.processInfo.environment
        environment["DERIVE_BROWSER_HELD"] = held.map(String.init).joined(separator: ",")
        environment["DERIVE_BROWSER_NAMED"] = "\(named):Sunset-Holiday"
        browser.environment = environment
        let output = Pipe(), errors = Pipe()
        browser.standardOutput = output
        browser.standardError = errors
        try browser.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaints = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        browser.waitUntilExit()
        #expect(browser.terminationStatus == 0, "\(complaints)")
        guard case .object(let seen) = try JSONParser().parse(String(decoding: printed, as: UTF8.self)) else { throw BrowserOutputUnreadable(complaints) }
        let view = Dictionary(uniqueKeysWithValues: seen.map { ($0.key, $0.value) })

        // A waiting or running job's page followed it to its end without a reload: it showed
        // the job live first, then completed, and stopped following.
        guard case .object(let followed)? = view["followedJob"] else { throw BrowserOutputUnreadable("no followed job") }
        let follow = Dictionary(uniqueKeysWithValues: followed.map { ($0.key, $0.value) })
        guard case .array(let states)? = follow["states"] else { throw BrowserOutputUnreadable("no job was waiting or running: \(followed)") }
        let shown = states.compactMap { if case .string(let state) = $0 { state } else { nil } }
        #expect(shown.count >= 2 && ["available", "running"].contains(shown.first ?? "") && shown.last == "completed", "\(JSONWriter.compact(.object(followed)))")
        #expect(follow["reloaded"] == .bool(false) && follow["following"] == .bool(false) && follow["control"] == .bool(false))
        #expect(follow["text"].map { JSONWriter.compact($0) }.map { $0.contains("worker") && $0.contains("run time") && $0.contains("started") } == true,
                "\(String(describing: follow["text"]))")
        // The totals page: a chart for all, one per queue and per worker, each time labelled.
        guard case .object(let totalsSeen)? = view["totals"] else { throw BrowserOutputUnreadable("no totals") }
        let totals = Dictionary(uniqueKeysWithValues: totalsSeen.map { ($0.key, $0.value) })
        #expect((totals["charts"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } } ?? 0) >= 3, "\(JSONWriter.compact(.object(totalsSeen)))")
        guard case .array(let labels)? = totals["labels"] else { throw BrowserOutputUnreadable("no totals labels") }
        #expect(labels.count == 6 && labels.allSatisfy { if case .string(let text) = $0 { text.count == 5 && text.contains(":") } else { false } }, "\(labels)")

        // The overview changed while the worker drained the queue, without a reload.
        guard case .array(let history)? = view["overviewHistory"] else { throw BrowserOutputUnreadable("no history") }
        #expect(history.count >= 2, "the counts never changed on the page: \(history)")
        #expect(view["overviewReloaded"] == .bool(false))
        // The hostile job: text, not code.
        guard case .string(let jobText)? = view["jobText"] else { throw BrowserOutputUnreadable("no job page") }
        #expect(jobText.contains("<script>window.pwned=1</script>"), "\(jobText)")
        #expect(view["pwned"] == .null && view["scriptsOnJobPage"] == .int(1))
        // Without logging in, the page cannot act.
        #expect(view["unauthenticatedRetry"] == .int(403))
        // Logged in, the failures page lists the group and its button retries it.
        guard case .string(let failures)? = view["failuresText"] else { throw BrowserOutputUnreadable("no failures page") }
        #expect(failures.contains("source_refused"), "\(failures)")
        #expect(view["retryButtons"].map { JSONWriter.compact($0) }?.contains("Retry all") == true,
                "after logging in: \(String(describing: view["afterLoginURL"])) \(String(describing: view["afterLoginText"]))")
        // Retry all asks first, saying how many and which.
        #expect(view["retryConfirm"].map { JSONWriter.compact($0) }?.contains("failed jobs of source_refused") == true,
                "\(String(describing: view["retryConfirm"])) \(String(describing: view["retryConfirmError"]))")
        #expect(view["consoleErrors"] == .array([]), "\(String(describing: view["consoleErrors"]))")
        // A completed job's page shows its output, loaded: the image decoded at its size.
        guard case .array(let images)? = view["completedJobImages"] else { throw BrowserOutputUnreadable("no completed job page") }
        #expect(!images.isEmpty && images.allSatisfy { image in
            if case .number(let width)? = image["naturalWidth"], let pixels = width.intValue { return pixels > 0 } else { return false }
        }, "\(images)")
        // The contact sheet and the asset page: pictures loaded, placeholders with the colours of
        // their pictures (the mean of the page's decoding against the hash's own average
        // colour), the face found drawn.
        for key in ["assetPictures", "assetPageImages"] {
            guard case .array(let pictures)? = view[key] else { throw BrowserOutputUnreadable("no \(key)") }
            #expect(!pictures.isEmpty && pictures.allSatisfy { picture in
                if case .number(let width)? = picture["naturalWidth"], let pixels = width.intValue { return pixels > 0 } else { return false }
            }, "\(key): \(pictures)")
        }
        guard case .array(let means)? = view["blurhashMeans"], !means.isEmpty else { throw BrowserOutputUnreadable("no placeholders") }
        for entry in means {
            guard case .string(let hash)? = entry["hash"], case .array(let mean)? = entry["mean"] else { throw BrowserOutputUnreadable("\(entry)") }
            let average = try #require(BlurHashAverage.rgb(hash), "\(hash)")
            let decoded = mean.compactMap { if case .number(let n) = $0 { n.intValue } else { nil } }
            #expect(decoded.count == 3 && zip(decoded, average).allSatisfy { abs($0 - $1) <= 16 }, "\(hash): page \(decoded), hash \(average)")
        }
        #expect(view["faceBoxes"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } } ?? 0 >= 1, "\(String(describing: view["assetText"]))")
        guard case .string(let assetText)? = view["assetText"] else { throw BrowserOutputUnreadable("no asset page") }
        #expect(assetText.contains("face found by") || assetText.contains("faces found by"), "\(assetText)")
        #expect(view["presetsText"].map { JSONWriter.compact($0) }?.contains("cards") == true)
        #expect(view["presetText"].map { JSONWriter.compact($0) }?.contains("c_scale,w_320") == true)
        #expect(view["schedulesText"].map { JSONWriter.compact($0) }?.contains("nightly-cards") == true)
        #expect(view["afterRetryURL"].map { JSONWriter.compact($0) }?.contains("code=source_refused") == true,
                "the retry form was not answered: \(String(describing: view["afterRetryURL"])); failures page: \(failures)")
        // The group's retry says what it did: how many it queued and how many it skipped.
        #expect(view["afterRetryNotice"].map { JSONWriter.compact($0) }?.contains("queued again") == true,
                "\(String(describing: view["afterRetryNotice"]))")
        // The workers' queue paused from the queues page at 400 px: said, and marked on the overview;
        // the job the failures' retry queued waits while it is, marked; resumed at 1,400 px; and the
        // other way round.
        func said(_ key: String, _ field: String = "notice") -> String { view[key]?[field].map { JSONWriter.compact($0) } ?? "" }
        #expect(said("pause").contains("Paused default: no worker claims from it") && view["pause"]?["overviewMarked"] == .bool(true),
                "\(said("pause", "url")) \(said("pause"))")
        let whilePaused = view["whilePaused"].map { JSONWriter.compact($0) } ?? ""
        #expect(whilePaused.contains("(queue paused)") && whilePaused.contains("available"), "\(whilePaused)")
        #expect(said("resume").contains("Resumed default: workers claim from it again."), "\(said("resume", "url"))")
        #expect(said("pause1400").contains("Paused default") && said("resume400").contains("Resumed default"))
        #expect(try queue.store.pausedQueues().isEmpty, "the queue is still paused")
        // Two held jobs ticked and cancelled in one request at each width, after a question.
        for (key, pair) in [("bulkCancel400", held[0..<2]), ("bulkCancel1400", held[2..<4])] {
            // The form was one the live refresh had put in place of the first: it asks all the same.
            #expect(view[key]?["replacedBeforeTicking"] == .bool(true), "\(key): the jobs list was never refreshed in place")
            #expect(said(key, "confirm").contains("Cancel 2 selected jobs?"), "\(key): \(said(key, "confirm")) \(said(key, "confirmError"))")
            #expect(said(key).contains("Cancel: 2 cancelled"), "\(key): \(said(key, "url")) \(said(key))")
            for id in pair { #expect(try queue.store.job(id)?.state == .cancelled, "\(key): job \(id) was not cancelled") }
            let inner = view[key]?["innerWidth"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } } ?? 0
            let scroll = view[key]?["scrollWidth"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } } ?? .max
            #expect(inner > 0 && scroll <= inner, "\(key): the list with its checkboxes scrolls sideways")
        }
        // Found by the name of the file it was uploaded from, and the hostile job by its source, at both widths.
        for width in ["400", "1400"] {
            let byName = view["searchByName"]?[width].map { JSONWriter.compact($0) } ?? ""
            #expect(byName.contains("\"\(named)\"") && !byName.contains("\"\(held[0])\""), "\(width): \(byName)")
            let bySource = view["searchBySource"]?[width].map { JSONWriter.compact($0) } ?? ""
            #expect(bySource.contains("\"\(hostile)\""), "\(width): \(bySource)")
        }
        // No page scrolls sideways, at a phone's width or a desktop's (tables scroll in their own box).
        guard case .array(let widths)? = view["widths"], widths.count >= 2 * 16 else { throw BrowserOutputUnreadable("no widths") }
        for entry in widths {
            let inner = entry["innerWidth"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } } ?? 0
            let scroll = entry["scrollWidth"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } } ?? .max
            #expect(inner > 0 && scroll <= inner, "\(JSONWriter.compact(entry))")
            if entry["width"] == .int(400) { #expect(inner <= 420, "the window did not become 400 px wide: \(JSONWriter.compact(entry))") }
        }
        // While the pictures have not loaded (their requests blocked), each placeholder fills
        // the box its picture will have.
        guard case .array(let holders)? = view["placeholders"], !holders.isEmpty else { throw BrowserOutputUnreadable("no placeholders to measure") }
        for holder in holders {
            let width = holder["width"].flatMap { if case .string(let text) = $0 { Double(text) } else { nil } } ?? 0
            let height = holder["height"].flatMap { if case .string(let text) = $0 { Double(text) } else { nil } } ?? 0
            let canvasWidth = holder["canvasWidth"].flatMap { if case .number(let n) = $0 { n.doubleValue } else { nil } } ?? 0
            let canvasHeight = holder["canvasHeight"].flatMap { if case .number(let n) = $0 { n.doubleValue } else { nil } } ?? 0
            #expect(holder["canvas"] == .bool(true) && width > 0 && abs(canvasWidth - width) <= 1 && abs(canvasHeight - height) <= 1,
                    "\(JSONWriter.compact(holder))")
        }
        // Queued while the queue was paused, it ran once the queue was resumed (and failed again, as its source is refused).
        try waitUntil("the retried job ran again", timeout: 60) {
            let failed = try queue.store.finishedJobs(JobFilter(outcome: .failed, errorCode: "source_refused"), after: nil, limit: 50).jobs
            return failed.filter { $0.payload["source"] == .string(hostileSource) }.count >= 2
        }
    }
}

/// The average colour a BlurHash carries in its first component (characters 2 to 5, sRGB).
enum BlurHashAverage {
    static let digits = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    static func rgb(_ hash: String) -> [Int]? {
        let characters = Array(hash)
        guard characters.count >= 6 else { return nil }
        var value = 0
        for character in characters[2..<6] {
            guard let digit = digits.firstIndex(of: character) else { return nil }
            value = value * 83 + digit
        }
        return [value >> 16, (value >> 8) & 255, value & 255]
    }
}

/// Whether this machine can run the browser tests.
enum Browser {
    static let available: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import selenium"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()
}

struct BrowserOutputUnreadable: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = "the browser script's output could not be read: \(description)" }
}
