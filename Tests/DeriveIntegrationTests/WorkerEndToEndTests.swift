import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveDigest
import DerivePostgres
import DeriveTestSupport
import Foundation
import Testing

/// `derive work` as it runs in production: real PostgreSQL, a real HTTP origin, a real S3
/// server, two worker processes; and the same on the embedded SQLite default.
@Suite(.enabled(if: TestServers.available && TestServers.postgresAvailable, "needs the servers Scripts/test.sh starts"))
struct WorkerEndToEndTests {
    static let photos = ["photos/grace_hopper_noexif.jpg", "photos/nikon-coolpix-p6000_gps.jpg", "photos/coffee_noexif.png"]

    /// The environment a worker needs to reach the test servers.
    static func environment(_ s3: TestServers.S3) -> [String: String] {
        ["AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey, "DERIVE_S3_ENDPOINT": s3.endpoint, "DERIVE_S3_REGION": "us-east-1",
         "DERIVE_FETCH_ALLOW": "127.0.0.1/32", "DERIVE_LOG_FORMAT": "json"]
    }

    @Test func twoWorkersProcessJobsSubmittedInSQLIntoS3() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let prefix = "e2e-\(UUID().uuidString.prefix(8).lowercased())"
        let listener = try queue.sql()
        try listener.execute("LISTEN derive_done")

        // A few hundred jobs, each a different width of one of three photographs.
        let sql = try queue.sql()
        var ids: [JobID] = []
        for index in 0..<240 {
            let source = origin + "/fixture/" + Self.photos[index % 3] + "?n=\(index)"
            let outputs = #"[{"name": "w", "chain": "c_scale,w_\#(60 + index)/f_webp,q_70"}]"#
            ids.append(JobID(try sql.query("SELECT derive.submit($1, $2::jsonb)", [source, outputs]).scalar!)!)
        }

        let arguments = ["work", "--database", queue.location, "--store", "s3://\(s3.bucket)/\(prefix)", "--slots", "2", "--until-idle"]
        let workers = try (0..<2).map { _ in try BackgroundProcess(arguments, environment: Self.environment(s3)) }
        for worker in workers {
            let status = worker.wait(timeout: 300)
            #expect(status == 0, "\(worker.logLines.suffix(20).joined(separator: "\n"))")
            // Stopping because the queues are empty is how --until-idle ends, not a failure (the
            // service group once logged it as "a service has finished unexpectedly").
            let errors = worker.logLines.filter { line in (try? JSONParser().parse(line))?["level"] == .string("error") }
            #expect(errors.isEmpty, "\(errors)")
        }

        // Every job completed once, at its first attempt, and said so on derive_done.
        for id in ids {
            let job = try #require(try queue.store.job(id))
            #expect(job.state == .completed && job.attempt == 1, "job \(id): \(job.state) attempt \(job.attempt) \(job.errors)")
        }
        var done: [JobID: String] = [:]
        let deadline = Date().addingTimeInterval(10)
        while done.count < ids.count, Date() < deadline {
            for notification in try listener.notifications(timeout: 0.5) {
                let payload = try JSONParser().parse(notification.payload)
                if case .number(let id)? = payload["id"], case .string(let outcome)? = payload["outcome"] { done[JobID(id.intValue!)] = outcome }
            }
        }
        #expect(Set(done.keys) == Set(ids) && done.values.allSatisfy { $0 == "completed" })

        // No job was run twice: one "job done" line per job across both workers' logs.
        var runs: [JobID: Int] = [:]
        var perWorker: [Int] = []
        for worker in workers {
            let lines = try worker.logLines.map { try JSONParser().parse($0) }.filter { $0["message"] == .string("job done") }
            perWorker.append(lines.count)
            for line in lines {
                if case .number(let id)? = line["job"] ?? nil, let value = id.intValue { runs[JobID(value), default: 0] += 1 }
                if case .string(let id)? = line["job"] ?? nil, let value = JobID(id) { runs[value, default: 0] += 1 }
            }
        }
        #expect(runs.count == ids.count && runs.values.allSatisfy { $0 == 1 })
        #expect(perWorker.allSatisfy { $0 > 0 }, "both workers should have run jobs: \(perWorker)")

        // One derivative row per job, each matching its object in S3, and nothing else there.
        let rows = try sql.query("""
            SELECT d.job_id, d.storage_key, d.bytes, d.sha256, d.width, d.height, d.format, a.sha256
            FROM derive.derivatives d JOIN derive.assets a ON a.id = d.asset_id ORDER BY d.job_id
            """).rows
        #expect(rows.count == ids.count)
        #expect(Set(rows.compactMap { $0[0].flatMap { JobID($0) } }) == Set(ids))
        #expect(try sql.query("SELECT count(*) FROM derive.assets").scalar == "3")
        let settings = S3Settings(endpoint: s3.endpoint, region: "us-east-1", accessKey: s3.accessKey, secretKey: s3.secretKey)
        let bucket = S3AssetStore(settings: settings, bucket: s3.bucket, prefix: prefix + "/")
        for row in rows {
            let key = try StorageKey(row[1]!)
            let bytes = try #require(try bucket.get(key), "\(key) is missing from S3")
            #expect(String(bytes.count) == row[2] && ContentHash.sha256(bytes) == row[3], "\(key)")
            let facts = try #require(ImageSniffer.facts(of: bytes))
            #expect(String(facts.width) == row[4] && String(facts.height) == row[5] && facts.format.rawValue == row[6])
            #expect(key.description.hasPrefix(row[7]!))
        }
        // (moto checks the signature of a listing whose prefix holds a "/" wrongly.)
        let listed = try S3Listing.keys(s3, prefix: prefix)
        #expect(listed.count == rows.count && Set(listed) == Set(rows.map { prefix + "/" + $0[1]! }))
    }

    /// SIGTERM: jobs in flight finish, the rest go back without spending an attempt, exit 0.
    @Test func sigtermLetsJobsInFlightFinishAndReleasesTheRest() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let slow = (0..<6).map { _ in origin + "/slow?delay=2&n=\(UUID().uuidString)" }
        let ids = try queue.store.submit(slow.map { source in
            NewJob(payload: .object(["version": .int(1), "source": .string(source),
                                     "outputs": .array([.object(["name": .string("t"), "chain": .string("c_thumb,w_32,h_32")])])]))
        }).map(\.id)
        let worker = try BackgroundProcess(["work", "--database", queue.location, "--store", "s3://\(s3.bucket)/sigterm", "--slots", "2",
                                            "--grace", "20"], environment: Self.environment(s3))
        try waitUntil("two jobs are running") { try queue.store.counts().first?.states[.running] == 2 }
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 60) == 0, "\(worker.logLines.suffix(10).joined(separator: "\n"))")

        let jobs: [JobSnapshot] = try ids.map { id in try #require(try queue.store.job(id)) }
        let finished = jobs.filter { $0.state == .completed }
        let waiting = jobs.filter { $0.state == .available }
        #expect(finished.count == 2, "the two jobs in flight finish within the grace period: \(jobs.map(\.state))")
        #expect(waiting.count == 4 && waiting.allSatisfy { $0.attempt == 0 && $0.leaseOwner == nil })
        #expect(worker.logLines.contains { $0.contains("stopping: finishing jobs in flight") })
    }

    /// SIGTERM with a grace period too short: the jobs in flight are released, attempts intact.
    @Test func jobsStillRunningWhenTheGracePeriodEndsAreReleased() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let id = try #require(try queue.store.submit([NewJob(payload: .object([
            "version": .int(1), "source": .string(origin + "/slow?delay=5&n=\(UUID().uuidString)"),
            "outputs": .array([.object(["name": .string("t"), "chain": .string("c_thumb,w_32,h_32")])]),
        ]), maxAttempts: 1)]).first).id
        let worker = try BackgroundProcess(["work", "--database", queue.location, "--store", "s3://\(s3.bucket)/grace", "--grace", "0.5"],
                                           environment: Self.environment(s3))
        try waitUntil("the job is running") { try queue.store.job(id)?.state == .running }
        worker.signal(SIGTERM)
        #expect(worker.wait(timeout: 30) == 0)
        let job = try #require(try queue.store.job(id))
        #expect(job.state == .available && job.attempt == 0, "\(job.state) attempt \(job.attempt)")
        #expect(worker.logLines.contains { $0.contains("released unfinished jobs") })
    }

    /// SIGKILL mid-job: the other worker rescues the job when its lease expires and completes
    /// it, once.
    @Test func aKilledWorkersJobIsRescuedAndCompletedOnce() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let id = try #require(try queue.store.submit([NewJob(payload: .object([
            "version": .int(1), "source": .string(origin + "/slow?delay=1.5&n=\(UUID().uuidString)"),
            "outputs": .array([.object(["name": .string("t"), "chain": .string("c_thumb,w_48,h_48")])]),
        ]))]).first).id
        var environment = Self.environment(s3)
        environment["DERIVE_RESCUE_INTERVAL"] = "0.5"
        let arguments = ["work", "--database", queue.location, "--store", "s3://\(s3.bucket)/sigkill", "--slots", "1", "--lease", "3"]
        let doomed = try BackgroundProcess(arguments, environment: environment)
        try waitUntil("the first worker runs the job") { try queue.store.job(id)?.state == .running }
        let firstOwner = try queue.store.job(id)?.leaseOwner
        doomed.signal(SIGKILL)
        _ = doomed.wait(timeout: 10)

        let survivor = try BackgroundProcess(arguments, environment: environment)
        defer {
            survivor.signal(SIGTERM)
            _ = survivor.wait(timeout: 30)
        }
        try waitUntil("the job is completed", timeout: 30) { try queue.store.job(id)?.state == .completed }
        let job = try #require(try queue.store.job(id))
        #expect(job.attempt == 2 && job.errors.count == 1 && job.errors.first?["code"] == .string("interrupted"))
        guard case .string(let detail)? = job.errors.first?["detail"] else { throw Missing() }
        #expect(detail.contains(firstOwner ?? "?"))
        let sql = try queue.sql()
        #expect(try sql.query("SELECT count(*) FROM derive.derivatives WHERE job_id = $1", [String(id)]).scalar == "1")
    }

    /// The embedded default: SQLite and a folder, local files submitted with `derive submit`.
    /// A format set (`"formats": [...]`) stores every format under its own key, each with
    /// its row in derive.derivatives, chosen by q_auto from the same pixels.
    @Test func aFormatSetStoresEveryFormatWithItsRow() throws {
        let queue = try TestQueue(.postgres)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-formats-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sql = try queue.sql()
        let outputs = #"[{"name": "card", "chain": "c_fill,w_320,h_200", "formats": ["avif", "webp", "jpeg"], "quality": "auto:good"}]"#
        let source = try TestServers.origin() + "/fixture/photos/coffee_noexif.png"
        let id = JobID(try sql.query("SELECT derive.submit($1, $2::jsonb)", [source, outputs]).scalar!)!
        let worker = try BackgroundProcess(["work", "--database", queue.location, "--store", folder.path, "--until-idle"],
                                           environment: ["DERIVE_LOG_FORMAT": "json", "DERIVE_FETCH_ALLOW": "127.0.0.1/32"])
        #expect(worker.wait(timeout: 300) == 0, "\(worker.logLines.suffix(20).joined(separator: "\n"))")
        let job = try #require(try queue.store.job(id))
        #expect(job.state == .completed, "\(job.errors)")

        let rows = try sql.query("""
            SELECT output_name, format, storage_key, bytes, width, height FROM derive.derivatives WHERE job_id = $1 ORDER BY format
            """, [String(id)]).rows
        #expect(rows.map { $0[0] } == ["card", "card", "card"])
        #expect(rows.map { $0[1] } == ["avif", "jpeg", "webp"])
        #expect(Set(rows.map { $0[2] }).count == 3)
        for row in rows {
            let path = folder.appendingPathComponent(try #require(row[2])).path
            let bytes = try #require(FileManager.default.contents(atPath: path), "\(path) is missing")
            let facts = try #require(ImageSniffer.facts(of: [UInt8](bytes)))
            #expect(facts.format.rawValue == row[1] && String(bytes.count) == row[3])
            #expect(row[4] == "320" && row[5] == "200")
        }
    }

    @Test func theSameFlowOnSQLiteAndAFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = "sqlite:" + folder.appendingPathComponent("derive.sqlite").path
        let store = folder.appendingPathComponent("derived").path
        // Sixty jobs: three photographs at twenty widths (one job per width and photo).
        var submitted: [JobID] = []
        for width in stride(from: 40, to: 240, by: 10) {
            let result = try DeriveBinary.run(["submit"] + Self.photos.map { Paths.fixture($0).path }
                                              + ["--chain", "c_limit,w_\(width)/f_png", "--database", database, "--store", store, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            guard case .array(let items) = try JSONParser().parse(result.stdout) else { throw Missing() }
            submitted += items.compactMap { item in if case .number(let id)? = item["id"] { JobID(id.intValue!) } else { nil } }
        }
        #expect(submitted.count == 60)
        let workers = try (0..<2).map { _ in
            try BackgroundProcess(["work", "--database", database, "--store", store, "--slots", "2", "--until-idle"],
                                  environment: ["DERIVE_LOG_FORMAT": "json"])
        }
        for worker in workers { #expect(worker.wait(timeout: 300) == 0, "\(worker.logLines.suffix(10).joined(separator: "\n"))") }

        let status = try DeriveBinary.run(["jobs", "list", "--state", "completed", "--limit", "1000", "--database", database, "--json"])
        guard case .array(let done) = try JSONParser().parse(status.stdout) else { throw Missing() }
        #expect(done.count == 60 && done.allSatisfy { $0["attempt"] == .int(1) })
        // Every output is in the folder once, under its content-addressed key.
        var outputs: [String] = []
        for job in done {
            guard case .array(let items)? = job["result"]?["outputs"] else { continue }
            for item in items { if case .string(let location)? = item["location"] { outputs.append(location) } }
        }
        #expect(outputs.count == 60 && Set(outputs).count == 60)
        for location in outputs {
            let path = try #require(URL(string: location)).path
            let bytes = try #require(FileManager.default.contents(atPath: path))
            #expect(ImageSniffer.facts(of: [UInt8](bytes))?.format == .png)
        }
        let files = try FileManager.default.subpathsOfDirectory(atPath: store).filter { $0.hasSuffix(".png") && !$0.hasPrefix("originals") }
        #expect(files.count == 60)
        let workersSaw = workers.map { $0.logLines.filter { $0.contains("\"job done\"") }.count }
        #expect(workersSaw.reduce(0, +) == 60)
    }
}


/// Object keys under a prefix, listed with boto3 against the test S3 server.
enum S3Listing {
    static func keys(_ s3: TestServers.S3, prefix: String) throws -> [String] {
        let script = """
            import boto3, sys
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3], region_name="us-east-1")
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[4], Prefix=sys.argv[5]):
                for item in page.get("Contents", []):
                    print(item["Key"])
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, s3.endpoint, s3.accessKey, s3.secretKey, s3.bucket, prefix]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let listed = output.fileHandleForReading.readDataToEndOfFile()
        let problems = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TimedOut(description: "listing S3 failed: \(String(decoding: problems, as: UTF8.self))")
        }
        return String(decoding: listed, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
