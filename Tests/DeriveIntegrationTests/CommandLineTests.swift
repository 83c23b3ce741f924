import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import DeriveWorker
import Foundation
import Logging
import Testing

/// The operator's commands, on the embedded default (an SQLite file and a folder).
@Suite struct CommandLineTests {
    /// A fresh embedded setup in a temporary folder.
    final class Workspace {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-cli-\(UUID().uuidString)")
        var database: String { "sqlite:" + folder.appendingPathComponent("derive.sqlite").path }
        var store: String { folder.appendingPathComponent("derived").path }

        init() throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        /// Runs `derive` against this workspace; fails the test on a non-zero exit unless `expectFailure`.
        @discardableResult
        func derive(_ arguments: [String], expectFailure: Bool = false) throws -> DeriveBinary.Result {
            let result = try DeriveBinary.run(arguments + ["--database", database],
                                              environment: ["DERIVE_STORE": store, "DERIVE_LOG_FORMAT": "json"])
            #expect((result.status == 0) != expectFailure, "derive \(arguments.joined(separator: " ")): \(result.stderr)")
            return result
        }

        func json(_ arguments: [String]) throws -> JSONValue {
            try JSONParser().parse(try derive(arguments + ["--json"]).stdout)
        }
    }

    @Test func presetsAreVersionedAndRemovable() throws {
        let workspace = try Workspace()
        #expect(try workspace.json(["presets", "add", "thumbs", "--chain", "c_thumb,w_100,h_100/f_webp"]) == .object(["name": .string("thumbs"), "version": .int(1)]))
        #expect(try workspace.json(["presets", "add", "thumbs", "--chain", #"{"outputs": [{"name": "small", "chain": "c_thumb,w_64,h_64"}, {"name": "big", "chain": "w_800"}]}"#])["version"] == .int(2))
        let listed = try workspace.json(["presets", "list"])
        guard case .array(let presets) = listed else { throw Missing() }
        #expect(presets.count == 1 && presets[0]["version"] == .int(2))
        let first = try workspace.json(["presets", "show", "thumbs", "--version", "1"])
        guard case .array(let outputs)? = first["outputs"] else { throw Missing() }
        #expect(outputs.count == 1 && outputs[0]["name"] == .string("default"))
        // A bad chain is refused before anything is saved, saying why.
        let bad = try workspace.derive(["presets", "add", "broken", "--chain", "c_fill,w_abc"], expectFailure: true)
        #expect(bad.stderr.contains("w_abc") || bad.stderr.contains("width"), "\(bad.stderr)")
        try workspace.derive(["presets", "remove", "thumbs"])
        #expect(try workspace.json(["presets", "list"]) == .array([]))
        guard case .array(let all) = try workspace.json(["presets", "list", "--all"]) else { throw Missing() }
        #expect(all.count == 1 && all[0]["removedAt"] != .null)
        // A job naming a removed preset is refused at submission.
        let refused = try workspace.derive(["submit", "https://images.example/a.jpg", "--preset", "thumbs"], expectFailure: true)
        #expect(refused.stderr.contains("unknown preset"), "\(refused.stderr)")
    }

    @Test func submitUploadWorkAndInspect() throws {
        let workspace = try Workspace()
        try workspace.derive(["presets", "add", "web", "--chain", #"{"outputs": [{"name": "thumb", "chain": "c_thumb,w_64,h_64/f_webp"}]}"#])
        // Sources from a list file: local files (uploaded first) and comments.
        let list = workspace.folder.appendingPathComponent("sources.txt")
        try "# photographs\n\(Paths.fixture("photos/grace_hopper_noexif.jpg").path)\n\n\(Paths.fixture("photos/coffee_noexif.png").path)\n"
            .write(to: list, atomically: true, encoding: .utf8)
        guard case .array(let submitted) = try workspace.json(["submit", "--from", list.path, "--preset", "web", "--priority", "3"]) else { throw Missing() }
        #expect(submitted.count == 2 && submitted.allSatisfy { $0["original"]?["key"] != nil })
        guard case .array(let uploaded) = try workspace.json(["upload", Paths.fixture("photos/nikon-coolpix-p6000_gps.jpg").path, "--preset", "web",
                                                             "--dedupe"]) else { throw Missing() }
        #expect(uploaded.count == 1)
        // The same upload again, while the first waits, is not queued twice.
        guard case .array(let again) = try workspace.json(["upload", Paths.fixture("photos/nikon-coolpix-p6000_gps.jpg").path, "--preset", "web",
                                                          "--dedupe"]) else { throw Missing() }
        #expect(again.first?["deduplicated"] == .bool(true) && again.first?["id"] == uploaded.first?["id"])
        // URLs are not uploaded; `upload` refuses them.
        try workspace.derive(["upload", "https://images.example/a.jpg", "--preset", "web"], expectFailure: true)

        let status = try workspace.json(["status"])
        guard case .array(let queues)? = status["queues"] else { throw Missing() }
        #expect(queues.first?["available"] == .int(3))

        let summary = try workspace.json(["work", "--until-idle", "--slots", "2"])
        #expect(summary["finished"]?["completed"] == .int(3))

        guard case .array(let done) = try workspace.json(["jobs", "list", "--state", "completed"]) else { throw Missing() }
        #expect(done.count == 3 && done.allSatisfy { $0["priority"] != nil })
        let id = try #require(done.first?["id"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } })
        let shown = try workspace.derive(["jobs", "show", String(id)]).stdout
        #expect(shown.contains("completed") && shown.contains("output    thumb  64x64"))
        // It names the worker that ran it and when its run started, after it ended.
        #expect(shown.contains("\nstarted   ") && shown.contains("\nworker    "), "\(shown)")
        let record = try workspace.json(["jobs", "show", String(id), "--json"])
        for field in ["worker", "startedAt"] {
            guard case .string(let value)? = record[field] else { Issue.record("no \(field) in \(record)"); continue }
            #expect(!value.isEmpty)
        }
        // A finished job can be run again, as a new job.
        let retried = try workspace.json(["jobs", "retry", String(id)])
        #expect(retried["retry"] == .null)   // completed jobs are not retried
        #expect(try workspace.json(["prune", "--older-than", "0s"])["deleted"] == .int(3))
        let missing = try workspace.derive(["jobs", "show", String(id)], expectFailure: true)
        #expect(missing.stderr.contains("there is no job"))
    }

    /// `derive upload --tag --context` puts the asset's tags and context in the job, and the
    /// worker's branch follows them (issue 30).
    @Test func uploadCarriesTagsAndContext() throws {
        let workspace = try Workspace()
        let chain = "if_!sale!_in_tags_and_ctx:!kind!_eq_!shoes!/c_scale,w_40/if_else/c_scale,w_20/if_end"
        guard case .array(let uploaded) = try workspace.json(["upload", Paths.fixture("photos/grace_hopper_noexif.jpg").path, "--chain", chain,
                                                             "--tag", "sale", "--context", "kind=shoes"]) else { throw Missing() }
        let id = try #require(uploaded.first?["id"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } })
        let shown = try workspace.json(["jobs", "show", String(id)])
        #expect(shown["document"]?["tags"] == .array([.string("sale")]))
        #expect(shown["document"]?["context"] == .object(["kind": .string("shoes")]))
        #expect(try workspace.json(["work", "--until-idle"])["finished"]?["completed"] == .int(1))
        let done = try workspace.derive(["jobs", "show", String(id)]).stdout
        #expect(done.contains("40x"), "\(done)")
    }

    @Test func badCommandLinesSayWhatIsWrong() throws {
        let workspace = try Workspace()
        let cases: [([String], String)] = [
            (["submit", "https://images.example/a.jpg"], "give --chain or --preset"),
            (["submit", "https://images.example/a.jpg", "--chain", "w_100", "--queue", "no spaces"], "not a queue name"),
            (["submit", "https://images.example/a.jpg", "--chain", "w_100", "--run-at", "tomorrow"], "--run-at"),
            (["submit", "/no/such/file.jpg", "--chain", "w_100"], "cannot read"),
            (["jobs", "list", "--state", "lost"], "--state must be one of"),
            (["prune", "--older-than", "forever"], "duration"),
            (["work", "--log-format", "xml"], "--log-format"),
        ]
        for (arguments, message) in cases {
            let result = try workspace.derive(arguments, expectFailure: true)
            #expect(result.stderr.contains(message), "derive \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        // An unmigrated PostgreSQL database is refused with the fix, not a SQL error.
        if TestServers.postgresAvailable {
            let (url, drop) = try TestQueue.createDatabase()
            defer { drop() }
            let result = try DeriveBinary.run(["status", "--database", url])
            #expect(result.status != 0 && result.stderr.contains("run `derive migrate` first"), "\(result.stderr)")
        }
    }

    @Test func everyCommandHasHelp() throws {
        for command in [["work"], ["submit"], ["upload"], ["status"], ["jobs", "list"], ["jobs", "show"], ["jobs", "retry"], ["jobs", "cancel"],
                        ["presets", "add"], ["presets", "list"], ["presets", "show"], ["presets", "remove"], ["prune"], ["migrate"], ["run"],
                        ["explain"]] {
            let result = try DeriveBinary.run(command + ["--help"])
            #expect(result.status == 0 && result.stdout.contains("USAGE"), "derive \(command.joined(separator: " ")) --help")
        }
    }
}

/// The worker's observability, without a server.
@Suite struct ObservabilityTests {
    @Test func metricsRenderInPrometheusTextFormat() {
        let metrics = Metrics()
        metrics.increment(.jobs, ["outcome": "completed"], by: 3)
        metrics.increment(.jobs, ["outcome": "failed"])
        metrics.set(.slots, to: 4)
        metrics.observe(.stageSeconds, ["stage": "decode"], seconds: 0.02)
        metrics.observe(.stageSeconds, ["stage": "decode"], seconds: 3)
        metrics.replace(.queueDepth, with: [(["queue": "a\"b", "state": "available"], 7)])
        let text = metrics.render()
        #expect(text.contains("# HELP derive_jobs_total \(MetricName.jobs.help)\n# TYPE derive_jobs_total counter\n"))
        #expect(text.contains("derive_jobs_total{outcome=\"completed\"} 3\n") && text.contains("derive_jobs_total{outcome=\"failed\"} 1\n"))
        #expect(metrics.value(.jobs, ["outcome": "completed"]) == 3)
        // swift-prometheus writes gauges and bucket bounds as Swift prints a Double (4.0, 5.0):
        // the same numbers to Prometheus, which itself writes le="5.0" since 3.0.
        #expect(text.contains("derive_slots 4.0\n"))
        #expect(text.contains("derive_stage_seconds_bucket{stage=\"decode\",le=\"0.025\"} 1\n"))
        #expect(text.contains("derive_stage_seconds_bucket{stage=\"decode\",le=\"5.0\"} 2\n"))
        #expect(text.contains("derive_stage_seconds_bucket{stage=\"decode\",le=\"+Inf\"} 2\n"))
        #expect(text.contains("derive_stage_seconds_sum{stage=\"decode\"} 3.02\n") && text.contains("derive_stage_seconds_count{stage=\"decode\"} 2\n"))
        #expect(text.contains("derive_queue_depth{queue=\"a\\\"b\",state=\"available\"} 7.0\n"))
        // Every bucket of today's histograms, in order.
        let bounds = text.split(separator: "\n").filter { $0.hasPrefix("derive_stage_seconds_bucket{stage=\"decode\"") }
            .map { $0.split(separator: "le=\"")[1].split(separator: "\"")[0] }
        #expect(bounds == Metrics.buckets.map { Substring(String($0)) } + ["+Inf"])
        // Series without labels are there from the start, at zero.
        #expect(text.contains("derive_database_errors_total 0\n") && text.contains("derive_job_seconds_count 0\n"))
        metrics.replace(.queueDepth, with: [(["queue": "b", "state": "running"], 1)])
        #expect(!metrics.render().contains("queue=\"a\\\"b\"") && metrics.render().contains("derive_queue_depth{queue=\"b\",state=\"running\"} 1.0\n"))
        metrics.replace(.queueDepth, with: [])
        #expect(!metrics.render().contains("derive_queue_depth{"))
    }

    @Test func logLinesAreJSONOrTextWithTheirMetadata() throws {
        final class Lines: @unchecked Sendable {
            var lines: [String] = []
            let lock = NSLock()
        }
        let captured = Lines()
        let write: @Sendable (String) -> Void = { line in captured.lock.withLock { captured.lines.append(line) } }
        var json = Logger(label: "test", factory: { LogOutput(label: $0, format: .json, level: .info, write: write) })
        json[metadataKey: "job"] = "42"
        json.info("job done", metadata: ["ms": .stringConvertible(12), "source": "https://images.example/a.jpg"])
        json.debug("not shown at info")
        let text = Logger(label: "test", factory: { LogOutput(label: $0, format: .text, level: .debug, write: write) })
        text.warning("could not claim", metadata: ["error": "database_unavailable: gone away"])
        #expect(captured.lines.count == 2)
        let line = try JSONParser().parse(captured.lines[0])
        #expect(line["level"] == .string("info") && line["message"] == .string("job done") && line["job"] == .string("42"))
        #expect(line["ms"] == .int(12) && line["source"] == .string("https://images.example/a.jpg"))
        #expect(captured.lines[1].hasSuffix(#"warning could not claim error="database_unavailable: gone away""#), "\(captured.lines[1])")
    }
}
