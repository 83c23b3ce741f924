import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import DeriveWorker
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// `/metrics`, `/healthz` and `/readyz` served for real, on loopback.
@Suite struct MetricsServerTests {
    /// A GET: its status, Content-Type and body.
    static func get(_ url: String) async throws -> (status: Int, type: String, body: String) {
        let (data, response) = try await URLSession.shared.data(from: try #require(URL(string: url)))
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.value(forHTTPHeaderField: "Content-Type") ?? "", String(decoding: data, as: UTF8.self))
    }

    @Test func aScrapeOfARealServerShowsEveryKindOfMetricWithItsHelpAndType() async throws {
        let metrics = Metrics()
        metrics.increment(.databaseErrors, by: 2)
        metrics.increment(.jobs, ["outcome": "completed"], by: 5)
        metrics.observe(.stageSeconds, ["stage": "encode"], seconds: 0.3)
        metrics.set(.slotsBusy, to: 3)
        let server = try await MetricsServer.start(address: "127.0.0.1", port: 0, metrics: metrics)
        #expect(server.port > 0 && server.address == "127.0.0.1")
        let (status, type, text) = try await Self.get("http://127.0.0.1:\(server.port)/metrics")
        await server.stop()

        #expect(status == 200 && type == "text/plain; version=0.0.4; charset=utf-8")
        for name in [MetricName.databaseErrors, .jobs, .stageSeconds, .slotsBusy] {
            let type = switch name.kind { case .counter: "counter"; case .gauge: "gauge"; case .histogram: "histogram" }
            #expect(text.contains("# HELP \(name.rawValue) \(name.help)\n# TYPE \(name.rawValue) \(type)\n"), "\(name)")
        }
        #expect(text.contains("\nderive_database_errors_total 2\n"))
        #expect(text.contains("\nderive_jobs_total{outcome=\"completed\"} 5\n"))
        #expect(text.contains("\nderive_stage_seconds_bucket{stage=\"encode\",le=\"0.25\"} 0\n"))
        #expect(text.contains("\nderive_stage_seconds_bucket{stage=\"encode\",le=\"0.5\"} 1\n"))
        #expect(text.contains("\nderive_stage_seconds_bucket{stage=\"encode\",le=\"+Inf\"} 1\n"))
        #expect(text.contains("\nderive_stage_seconds_sum{stage=\"encode\"} 0.3\n") && text.contains("\nderive_stage_seconds_count{stage=\"encode\"} 1\n"))
        #expect(text.contains("\nderive_slots_busy 3.0\n"))
        // Every metric is exported with its help, and only once.
        for name in MetricName.allCases where name.labels.isEmpty {
            #expect(text.components(separatedBy: "# HELP \(name.rawValue) ").count == 2, "\(name)")
        }
    }

    @Test func healthAndReadinessAnswerWithTheirStatusAndOtherPathsAreNotFound() async throws {
        let health = Health(liveWithin: 90, readyWithin: 60)
        let server = try await MetricsServer.start(port: 0, metrics: Metrics(), health: health)
        let base = "http://127.0.0.1:\(server.port)"
        // Nothing has looped yet: neither live nor ready.
        var (status, type, body) = try await Self.get(base + "/healthz")
        #expect(status == 503 && type == "application/json" && body.contains(#""live":false"#), "\(body)")
        (status, _, body) = try await Self.get(base + "/readyz")
        #expect(status == 503 && body.contains(#""ready":false"#), "\(body)")
        (status, _, body) = try await Self.get(base + "/elsewhere?x=1")
        #expect(status == 404 && body == "Derive serves /metrics, /healthz and /readyz\n")
        // The query string does not change the route.
        (status, _, _) = try await Self.get(base + "/metrics?debug=1")
        #expect(status == 200)
        await server.stop()
        // Stopped: the port no longer answers.
        await #expect(throws: (any Error).self) { _ = try await Self.get(base + "/metrics") }
    }

    @Test func itListensOnLoopbackByDefaultAndABadAddressOrPortFailsClearly() async throws {
        #expect(WorkerEnvironment().metricsAddress == "127.0.0.1")
        let metrics = Metrics()
        let server = try await MetricsServer.start(port: 0, metrics: metrics)
        #expect(server.address == "127.0.0.1")

        await #expect { try await MetricsServer.start(address: "not-an-address", port: 0, metrics: metrics) } throws: { error in
            "\(error)" == "not-an-address is not an IP address (say 127.0.0.1, 0.0.0.0 or ::1)"
        }
        await #expect { try await MetricsServer.start(address: "127.0.0.1", port: 70000, metrics: metrics) } throws: { error in
            "\(error)".contains("70000 is not a port")
        }
        // The port is taken (by the server above): said, not hung.
        await #expect { try await MetricsServer.start(address: "127.0.0.1", port: server.port, metrics: metrics) } throws: { error in
            "\(error)".hasPrefix("cannot listen on 127.0.0.1:\(server.port): ") && "\(error)".contains("in use")
        }
        // An address this host does not have.
        await #expect { try await MetricsServer.start(address: "192.0.2.1", port: 0, metrics: metrics) } throws: { error in
            "\(error)".hasPrefix("cannot listen on 192.0.2.1:0: ")
        }
        await server.stop()
    }

    /// `derive work` on a fresh SQLite queue and folder store with `extra` arguments, run until
    /// `body` returns: `body` gets the worker's "serving metrics" log line and the arguments
    /// without `--metrics-port`.
    func withServingWorker(_ extra: [String], _ body: (_ serving: JSONValue, _ port: String, _ arguments: [String]) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-metrics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let arguments = ["work", "--database", "sqlite:" + folder.appendingPathComponent("derive.sqlite").path,
                         "--store", folder.appendingPathComponent("derived").path] + extra
        let worker = try BackgroundProcess(arguments + ["--metrics-port", "0"], environment: ["DERIVE_LOG_FORMAT": "json"])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 30)
        }
        var serving = JSONValue.null
        try waitUntil("the worker serves metrics") {
            guard let line = worker.logLines.first(where: { $0.contains("serving metrics") }) else { return false }
            serving = try JSONParser().parse(line)
            return true
        }
        guard case .string(let port)? = serving["port"] else { throw Missing() }
        try body(serving, port, arguments)
    }

    /// `derive work --metrics-port 0` with no address: on loopback, and answering there.
    @Test func theWorkerServesOnLoopbackUnlessToldOtherwise() throws {
        try withServingWorker([]) { serving, port, _ throws in
            #expect(serving["address"] == .string("127.0.0.1"), "\(serving)")
            #expect(try TestServers.fetch("http://127.0.0.1:\(port)/metrics").contains("# TYPE derive_slots gauge\nderive_slots "))
            // Live once its loop has turned: the port is served before the first turn, which on
            // a loaded machine can come a moment later.
            try waitUntil("the worker's health says live") {
                try TestServers.fetch("http://127.0.0.1:\(port)/healthz").contains(#""live":true"#)
            }
            #expect(try TestServers.fetch("http://127.0.0.1:\(port)/jobs").contains("Derive serves /metrics"), "no dashboard unless asked for")
        }
    }

    /// `derive work --dashboard`: the dashboard's pages beside /metrics on the worker's port,
    /// read-only without a token; and refused without a metrics port to serve them on.
    @Test func theWorkerServesTheDashboardWhenAsked() throws {
        try withServingWorker(["--dashboard"]) { _, port, arguments throws in
            #expect(try TestServers.fetch("http://127.0.0.1:\(port)/metrics").contains("# TYPE derive_slots gauge"))
            #expect(try TestServers.fetch("http://127.0.0.1:\(port)/").contains("<title>Overview · Derive</title>"))
            #expect(try TestServers.fetch("http://127.0.0.1:\(port)/assets").contains("No asset has been recorded yet."))
            // A form that is not form encoding (`curl -d 'a b'`) once ended the worker: now every
            // POST route answers 4xx and the worker goes on serving.
            for route in WebSurfaceFuzzTests.postRoutes(job: 1) {
                let status = RawHTTP.sendBlocking(RawHTTP.request("POST", route, body: Array("a b".utf8)), port: Int(port) ?? 0).status
                #expect(status.map { (400..<500).contains($0) } == true, "POST \(route): \(String(describing: status))")
            }
            #expect(try TestServers.fetch("http://127.0.0.1:\(port)/healthz").contains(#""live":true"#))

            let refused = try BackgroundProcess(arguments, environment: [:])
            #expect(refused.wait(timeout: 30) != 0)
            #expect(refused.logLines.joined().contains("--dashboard serves the pages on the metrics port"), "\(refused.logLines)")
        }
    }
}
