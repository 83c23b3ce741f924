import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveTestSupport
import Foundation
import Testing

/// Everything in Deploy/, checked with the tools that run here: the image's libraries against
/// the binary, the compose file against the compose specification, the unit with
/// systemd-analyze, the Kubernetes manifests against Kubernetes' schemas (and KEDA's, as its
/// documentation describes them), and the settings that must agree across them.
@Suite struct DeployTests {
    static let deploy = Paths.repository.appendingPathComponent("Deploy")
    static let tools = Paths.repository.appendingPathComponent("Tests/Deploy")

    /// Runs a command; its exit status and everything it printed.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = Paths.repository
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    /// A tool the test command installs: missing there is a failure, elsewhere a skip.
    static func has(_ tool: String) -> Bool {
        (try? run(["sh", "-c", "command -v \(tool)"]).status) == 0
    }

    /// Whether a test that needs `tools` runs: always under the test command, which installs
    /// them (a missing one then fails the test), otherwise only where they are installed.
    static func runs(with tools: String...) -> Bool {
        Python.required || tools.allSatisfy(has)
    }

    /// YAML documents as JSON.
    static func documents(_ relative: String) throws -> [JSONValue] {
        let result = try run(["python3", tools.appendingPathComponent("documents.py").path, deploy.appendingPathComponent(relative).path])
        guard result.status == 0, case .array(let files) = try JSONParser().parse(result.output), case .array(let documents)? = files.first else {
            throw TimedOut(description: "could not read \(relative): \(result.output)")
        }
        return documents
    }

    static func kind(_ documents: [JSONValue], _ kind: String) -> JSONValue? {
        documents.first { $0["kind"] == .string(kind) }
    }

    static func int(_ value: JSONValue?) -> Int? {
        switch value {
        case .number(let number)?: number.intValue
        case .string(let text)?: Int(text)
        default: nil
        }
    }

    /// The worker's grace period as the deploy files set it.
    static let grace = 30

    @Test func theImageIsBuiltInStagesAndRunsDeriveWorkAsAnUnprivilegedUser() throws {
        let text = try String(contentsOf: Self.deploy.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let instructions = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("#") }
        let stages = instructions.filter { $0.hasPrefix("FROM ") }
        #expect(stages.count == 2 && stages[0].hasSuffix(" AS build") && stages[1] == "FROM ${RUNTIME_IMAGE}")
        #expect(text.contains("ARG RUNTIME_IMAGE=debian:bookworm-slim") && text.contains("--static-swift-stdlib"))
        let runtime = instructions.drop { $0 != "FROM ${RUNTIME_IMAGE}" }
        #expect(runtime.contains("USER 10001:10001") && text.contains("useradd --system --uid 10001"))
        #expect(runtime.contains { $0.hasPrefix("HEALTHCHECK") && $0.hasSuffix(#"CMD ["derive", "health"]"#) })
        #expect(runtime.contains(#"ENTRYPOINT ["derive"]"#) && runtime.contains(#"CMD ["work"]"#) && runtime.contains("STOPSIGNAL SIGTERM"))
        #expect(runtime.contains { $0.contains("DERIVE_GRACE=\(Self.grace)") })
        // Scraped and probed from outside the container: not the loopback default.
        #expect(runtime.contains { $0.contains("DERIVE_METRICS_ADDRESS=0.0.0.0") })
        #expect(!runtime.contains { $0.hasPrefix("USER root") || $0 == "USER 0" })
    }

    @Test(.enabled(if: DeployTests.runs(with: "readelf", "dpkg"), "needs readelf and dpkg (Scripts/test.sh installs it)"))
    func theImageInstallsEveryLibraryDeriveLinks() throws {
        try #require(Self.has("readelf") && Self.has("dpkg"), "Scripts/test.sh installs readelf and dpkg")
        let result = try Self.run(["python3", Self.tools.appendingPathComponent("check_runtime_libraries.py").path, DeriveBinary.url.path,
                                   Self.deploy.appendingPathComponent("Dockerfile").path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("libvips.so.42: libvips42") && result.output.contains("libpq.so.5: libpq5"), "\(result.output)")
        // The face detector's OpenCV half, opened beside derive (Scripts/test.sh builds it).
        let faceNet = DeriveBinary.url.deletingLastPathComponent().appendingPathComponent("libDeriveFaceNet.so")
        try #require(FileManager.default.fileExists(atPath: faceNet.path), "Scripts/test.sh builds \(faceNet.lastPathComponent)")
        let net = try Self.run(["python3", Self.tools.appendingPathComponent("check_runtime_libraries.py").path, faceNet.path,
                                Self.deploy.appendingPathComponent("Dockerfile").path])
        #expect(net.status == 0, "\(net.output)")
        #expect(net.output.contains("libopencv_dnn.so.406: libopencv-dnn406"), "\(net.output)")
    }

    @Test(.enabled(if: DeployTests.runs(with: "check-jsonschema"), "needs check-jsonschema (Scripts/test.sh installs it)"))
    func theComposeFileFollowsTheSpecificationAndScalesItsWorkers() throws {
        try #require(Self.has("check-jsonschema"), "Scripts/test.sh installs check-jsonschema")
        let check = try Self.run(["check-jsonschema", "--builtin-schema", "vendor.compose-spec", Self.deploy.appendingPathComponent("compose.yaml").path])
        #expect(check.status == 0, "\(check.output)")
        let compose = try #require(try Self.documents("compose.yaml").first)
        let services = try #require(compose["services"])
        for name in ["postgres", "minio", "migrate", "worker"] { #expect(services[name] != nil, "no \(name) service") }
        let worker = try #require(services["worker"])
        #expect(worker["command"] == .array([.string("work")]) && services["migrate"]?["command"] == .array([.string("migrate")]))
        // Scalable: no fixed name, no host port.
        #expect(worker["container_name"] == nil && worker["ports"] == nil)
        #expect(worker["depends_on"]?["migrate"]?["condition"] == .string("service_completed_successfully"))
        guard case .string(let stop)? = worker["stop_grace_period"], let seconds = Int(stop.dropLast()), stop.hasSuffix("s") else {
            throw TimedOut(description: "the worker needs a stop_grace_period in seconds")
        }
        #expect(seconds > Self.grace, "stop_grace_period must outlast DERIVE_GRACE")
        #expect(worker["environment"]?["DERIVE_GRACE"] == .string(String(Self.grace)))
        #expect(worker["environment"]?["DERIVE_METRICS_ADDRESS"] == .string("0.0.0.0"))
    }

    @Test(.enabled(if: DeployTests.runs(with: "systemd-analyze"), "needs systemd-analyze (Scripts/test.sh installs it)"))
    func systemdAcceptsTheUnit() throws {
        try #require(Self.has("systemd-analyze"), "Scripts/test.sh installs systemd-analyze")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // verify checks that ExecStart's program exists: point it at the binary just built.
        let unit = try String(contentsOf: Self.deploy.appendingPathComponent("systemd/derive-worker.service"), encoding: .utf8)
        let copy = folder.appendingPathComponent("derive-worker.service")
        try unit.replacingOccurrences(of: "ExecStart=/usr/local/bin/derive", with: "ExecStart=\(DeriveBinary.url.path)")
            .write(to: copy, atomically: true, encoding: .utf8)
        let verify = try Self.run(["systemd-analyze", "verify", copy.path])
        #expect(verify.status == 0 && verify.output.isEmpty, "systemd-analyze verify: \(verify.output)")
        let security = try Self.run(["systemd-analyze", "security", "--offline=true", copy.path])
        let exposure = security.output.split(separator: "\n").last { $0.contains("Overall exposure level") }
            .flatMap { line in line.split(separator: " ").compactMap { Double($0) }.first }
        #expect((exposure ?? 10) <= 2.0, "sandboxing exposure \(exposure ?? -1): \(security.output.suffix(300))")
        // The stop timeout outlasts the worker's grace period in the environment file.
        let stop = unit.split(separator: "\n").first { $0.hasPrefix("TimeoutStopSec=") }.flatMap { Int($0.dropFirst("TimeoutStopSec=".count)) }
        let environment = try String(contentsOf: Self.deploy.appendingPathComponent("systemd/derive.env.example"), encoding: .utf8)
        #expect(environment.contains("DERIVE_GRACE=\(Self.grace)\n") && (stop ?? 0) > Self.grace)
        #expect(unit.contains("KillSignal=SIGTERM") && unit.contains("NoNewPrivileges=yes") && unit.contains("ProtectSystem=strict"))
    }

    @Test(.enabled(if: DeployTests.runs(with: "kubernetes-validate"), "needs kubernetes-validate (Scripts/test.sh installs it)"))
    func theKubernetesManifestsValidateAndAgree() throws {
        try #require(Self.has("kubernetes-validate"), "Scripts/test.sh installs kubernetes-validate")
        let folder = Self.deploy.appendingPathComponent("kubernetes")
        for file in ["configmap.yaml", "secret.example.yaml", "migrate-job.yaml", "deployment.yaml", "pdb.yaml"] {
            let result = try Self.run(["kubernetes-validate", "--strict", "--quiet", folder.appendingPathComponent(file).path])
            #expect(result.status == 0 && !result.output.contains("ERROR"), "\(file): \(result.output)")
        }
        for (schema, file) in [("keda", "keda.yaml"), ("kustomization", "kustomization.yaml")] {
            let result = try Self.run(["python3", Self.tools.appendingPathComponent("documents.py").path, "--schema",
                                       Self.tools.appendingPathComponent("schemas/\(schema).schema.json").path, folder.appendingPathComponent(file).path])
            #expect(result.status == 0, "\(file): \(result.output)")
        }
        // Every resource the kustomization lists exists.
        let kustomization = try #require(try Self.documents("kubernetes/kustomization.yaml").first)
        guard case .array(let resources)? = kustomization["resources"] else { throw Missing() }
        for case .string(let resource) in resources {
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(resource).path), "\(resource)")
        }

        let config = try #require(Self.kind(try Self.documents("kubernetes/configmap.yaml"), "ConfigMap"))
        let deployment = try #require(Self.kind(try Self.documents("kubernetes/deployment.yaml"), "Deployment"))
        let pod = try #require(deployment["spec"]?["template"]?["spec"])
        #expect(Self.int(config["data"]?["DERIVE_GRACE"]) == Self.grace)
        #expect(config["data"]?["DERIVE_METRICS_ADDRESS"] == .string("0.0.0.0"), "probes and scrapes come to the pod's address")
        #expect((Self.int(pod["terminationGracePeriodSeconds"]) ?? 0) > Self.grace, "the pod's grace must outlast the worker's")
        guard case .array(let containers)? = pod["containers"], let container = containers.first else { throw Missing() }
        guard case .array(let ports)? = container["ports"] else { throw Missing() }
        #expect(ports.contains { $0["name"] == .string("metrics") && Self.int($0["containerPort"]) == Self.int(config["data"]?["DERIVE_METRICS_PORT"]) })
        #expect(container["livenessProbe"]?["httpGet"]?["path"] == .string("/healthz"))
        #expect(container["readinessProbe"]?["httpGet"]?["path"] == .string("/readyz"))
        #expect(container["securityContext"]?["readOnlyRootFilesystem"] == .bool(true))

        let keda = try Self.documents("kubernetes/keda.yaml")
        let scaled = try #require(Self.kind(keda, "ScaledObject"))
        #expect(scaled["spec"]?["scaleTargetRef"]?["name"] == deployment["metadata"]?["name"])
        let authentication = try #require(Self.kind(keda, "TriggerAuthentication"))
        let secret = try #require(Self.kind(try Self.documents("kubernetes/secret.example.yaml"), "Secret"))
        guard case .array(let references)? = authentication["spec"]?["secretTargetRef"], let reference = references.first,
              case .string(let key)? = reference["key"] else { throw Missing() }
        #expect(secret["stringData"]?[key] != nil && reference["name"] == secret["metadata"]?["name"])
        let pdb = try #require(Self.kind(try Self.documents("kubernetes/pdb.yaml"), "PodDisruptionBudget"))
        #expect(pdb["spec"]?["selector"]?["matchLabels"] == deployment["spec"]?["selector"]?["matchLabels"])
    }

    /// The query KEDA scales on, run against a migrated database: jobs ready to run in the
    /// workers' queue, nothing else.
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func theScalingQueryCountsJobsReadyToRun() throws {
        let keda = try Self.documents("kubernetes/keda.yaml")
        guard case .array(let triggers)? = Self.kind(keda, "ScaledObject")?["spec"]?["triggers"],
              case .string(let query)? = triggers.first?["metadata"]?["query"] else { throw Missing() }
        let queue = try TestQueue(.postgres)
        _ = try queue.store.submit((0..<3).map { _ in NewJob(payload: document()) } + [NewJob(payload: document(), queue: "other")]
                                   + [NewJob(payload: document(), runAt: Date().addingTimeInterval(3600))])
        _ = try queue.store.submit([NewJob(payload: document(), runAt: Date().addingTimeInterval(0.3))])
        Thread.sleep(forTimeInterval: 0.5)   // the last one is due, but not yet promoted
        _ = try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30)
        #expect(try queue.sql().query(query).scalar == "3", "2 available + 1 scheduled and due in default")
    }

    /// `/healthz` and `/readyz` on the metrics port, and `derive health`, as the operations
    /// guide uses them.
    @Test(.enabled(if: TestServers.available && TestServers.postgresAvailable, "needs the servers Scripts/test.sh starts"))
    func healthSaysWhetherTheDatabaseAndTheStoreAnswer() throws {
        let queue = try TestQueue(.postgres)
        let s3 = try TestServers.s3()
        var environment = WorkerEndToEndTests.environment(s3)
        environment["DERIVE_RESCUE_INTERVAL"] = "0.5"
        let store = "s3://\(s3.bucket)/health"
        /// A worker with its metrics port on loopback, and that port's base URL.
        func start(_ environment: [String: String]) throws -> (BackgroundProcess, String) {
            let worker = try BackgroundProcess(["work", "--database", queue.location, "--store", store, "--metrics-port", "0",
                                                "--metrics-address", "127.0.0.1"], environment: environment)
            return (worker, try serving(worker))
        }
        func serving(_ worker: BackgroundProcess) throws -> String {
            var port = ""
            try waitUntil("the worker serves metrics") {
                guard let line = worker.logLines.first(where: { $0.contains("serving metrics") }),
                      case .string(let value)? = try JSONParser().parse(line)["port"] else { return false }
                port = value
                return true
            }
            return "http://127.0.0.1:\(port)"
        }
        let (healthy, base) = try start(environment)
        defer {
            healthy.signal(SIGTERM)
            _ = healthy.wait(timeout: 30)
        }
        try waitUntil("ready") { (try? TestServers.fetch(base + "/readyz"))?.contains(#""ready":true"#) == true }
        #expect(try TestServers.fetch(base + "/healthz").contains(#""live":true"#))

        // A store that refuses the worker's credentials: live, but not ready, and saying why.
        var wrong = environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let (unready, other) = try start(wrong)
        defer {
            unready.signal(SIGTERM)
            _ = unready.wait(timeout: 30)
        }
        try waitUntil("the store check fails") { (try? TestServers.fetch(other + "/healthz"))?.contains(#""live":true"#) == true }
        Thread.sleep(forTimeInterval: 1)
        let (status, body) = try Self.get(other + "/readyz")
        #expect(status == 503 && body.contains(#""ready":false"#) && body.contains("storage_failed"), "\(status) \(body)")

        // `derive health`, as a container's health check runs it.
        let ok = try DeriveBinary.run(["health", "--database", queue.location, "--store", store, "--json"], environment: environment)
        #expect(ok.status == 0 && ok.stdout.contains(#""healthy":true"#), "\(ok.stdout) \(ok.stderr)")
        let bad = try DeriveBinary.run(["health", "--database", queue.location, "--store", store], environment: wrong)
        #expect(bad.status == 1 && bad.stdout.contains("store: FAILED") && bad.stdout.contains("database: ok"), "\(bad.stdout)")
        let (fresh, drop) = try TestQueue.createDatabase()
        defer { drop() }
        let unmigrated = try DeriveBinary.run(["health", "--database", fresh, "--store", store], environment: environment)
        #expect(unmigrated.status == 1 && unmigrated.stdout.contains("run `derive migrate` first"), "\(unmigrated.stdout)")
    }

    /// `systemctl stop` / `kubectl delete pod` / `docker stop`: SIGTERM, then the worker exits
    /// 0 once its grace period is over, with the job it could not finish released.
    @Test(.enabled(if: TestServers.available && TestServers.postgresAvailable, "needs the servers Scripts/test.sh starts"))
    func aStoppedWorkerExitsWithinItsGracePeriod() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let id = try #require(try queue.store.submit([NewJob(payload: .object([
            "version": .int(1), "source": .string(origin + "/slow?delay=20&n=\(UUID().uuidString)"),
            "outputs": .array([.object(["name": .string("t"), "chain": .string("c_thumb,w_32,h_32")])]),
        ]))]).first).id
        var environment = WorkerEndToEndTests.environment(s3)
        environment["DERIVE_GRACE"] = "3"
        let worker = try BackgroundProcess(["work", "--database", queue.location, "--store", "s3://\(s3.bucket)/grace"], environment: environment)
        try waitUntil("the job runs") { try queue.store.job(id)?.state == .running }
        let stopped = Date()
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 30) == 0)
        let took = Date().timeIntervalSince(stopped)
        #expect(took >= 3 && took < 8, "exited after \(took) s with DERIVE_GRACE=3")
        #expect(try queue.store.job(id)?.state == .available && queue.store.job(id)?.attempt == 0)
    }

    static func get(_ url: String) throws -> (Int, String) {
        let result = try run(["python3", "-c", """
            import sys, urllib.request, urllib.error
            try:
                response = urllib.request.urlopen(sys.argv[1], timeout=5)
                print(response.status); print(response.read().decode())
            except urllib.error.HTTPError as error:
                print(error.code); print(error.read().decode())
            """, url])
        let lines = result.output.split(separator: "\n", maxSplits: 1)
        return (Int(lines.first ?? "") ?? 0, lines.count > 1 ? String(lines[1]) : "")
    }
}
