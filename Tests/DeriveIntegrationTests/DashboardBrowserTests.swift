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
        // No page scrolls sideways, at a phone's width or a desktop's (tables scroll in their own box).
        guard case .array(let widths)? = view["widths"], widths.count >= 2 * 13 else { throw BrowserOutputUnreadable("no widths") }
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
        try waitUntil("the retried job ran again", timeout: 60) {
            let live = try queue.store.jobs(state: nil, queue: nil, limit: 50).filter { $0.payload["source"] == .string(hostileSource) }
            let failed = try queue.store.finishedJobs(JobFilter(outcome: .failed, errorCode: "source_refused"), after: nil, limit: 50).jobs
            return live.count + failed.count >= 2
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
