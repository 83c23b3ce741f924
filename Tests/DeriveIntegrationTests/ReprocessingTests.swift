import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveSQLite
import DeriveWorker
import DeriveTestSupport
import Foundation
import Testing

/// Schedules, bulk reprocessing, stale outputs and changed sources, with real servers.
@Suite(.enabled(if: TestServers.available && TestServers.postgresAvailable, "needs the servers Scripts/test.sh starts"))
struct ReprocessingTests {
    /// Two workers both run the scheduler on a three-second cron: every fire is enqueued
    /// exactly once; after both are down for several fire times, the missed fires are caught up
    /// once.
    @Test func everyFireIsEnqueuedOnceAndMissedFiresAreCaughtUpOnce() throws {
        let queue = try TestQueue(.postgres)
        let save = try DeriveBinary.run(["schedule", "add", "tick", "--cron", "*/3 * * * * *", "--revalidate", "--database", queue.location])
        #expect(save.status == 0, "\(save.stderr)")
        let environment = ["DERIVE_SCHEDULER_INTERVAL": "0.2", "DERIVE_LOG_FORMAT": "json"]
        let arguments = ["work", "--database", queue.location, "--slots", "1"]
        let workers = try (0..<2).map { _ in try BackgroundProcess(arguments, environment: environment) }
        Thread.sleep(forTimeInterval: 12)
        for worker in workers {
            worker.signal(SIGTERM)
            #expect(worker.wait(timeout: 30) == 0)
        }
        let stopped = Date()

        let sql = try queue.sql()
        func fires() throws -> [(time: Double, job: String?)] {
            try sql.query("SELECT extract(epoch FROM fire_time)::float8, job_id FROM derive.schedule_fires ORDER BY fire_time").rows.map {
                (Double($0[0]!)!, $0[1])
            }
        }
        let running = try fires()
        #expect(running.count >= 3, "\(running)")
        // One fire per three seconds, none twice, none skipped while the workers ran.
        for (earlier, later) in zip(running, running.dropFirst()) { #expect(later.time - earlier.time == 3, "\(running)") }
        // Each fire enqueued its own job, once: one task job per fire time.
        let jobs = try sql.query("""
            SELECT (payload ->> 'fireTime')::float8, count(*) FROM (
                SELECT payload FROM derive.jobs UNION ALL SELECT payload FROM derive.job_archive) j
            WHERE payload ->> 'schedule' = 'tick' GROUP BY 1
            """).rows
        #expect(jobs.count == running.count && jobs.allSatisfy { $0[1] == "1" }, "\(jobs)")
        let fired = workers.map { worker in worker.logLines.filter { $0.contains("\"schedule fired\"") }.count }
        #expect(fired.reduce(0, +) == running.count, "both workers fired some: \(fired)")

        // Down for several fire times, then one worker runs briefly: one catch-up fire.
        Thread.sleep(forTimeInterval: 7)
        let restarted = Date()
        let late = try BackgroundProcess(arguments, environment: environment)
        // Until its first fire (the catch-up): a worker signalled while it starts stops before
        // working, so a fixed pause would race its start-up.
        try waitUntil("the late worker fires", timeout: 30) { late.logLines.contains { $0.contains("\"schedule fired\"") } }
        let firstFire = Date()
        late.signal(SIGTERM)
        #expect(late.wait(timeout: 30) == 0)
        // The fires missed while both were down come as one, at the latest fire time due when
        // the late worker's scheduler first ran: before `restarted`, or after it when start-up
        // took longer than the three-second period (a loaded machine).
        let missed = try fires().filter { $0.time > stopped.timeIntervalSince1970 && $0.time <= firstFire.timeIntervalSince1970 }
        #expect(missed.count == 1, "missed fires caught up once: \(missed), restarted at \(restarted.timeIntervalSince1970)")
    }

    /// Thousands of assets: enqueued in batches, spread in time, below new submissions; the
    /// same reprocess again enqueues nothing new.
    @Test(arguments: StoreKind.runnable)
    func aBulkReprocessIsBatchedSpreadLowAndIdempotent(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        _ = try queue.store.savePreset(name: "web", outputs: .array([.object(["name": .string("thumb"), "chain": .string("c_thumb,w_64,h_64")])]))
        try seedAssets(queue, count: 2500, preset: "web", version: 1)
        _ = try queue.store.savePreset(name: "web", outputs: .array([.object(["name": .string("thumb"), "chain": .string("c_thumb,w_96,h_96")])]))
        let upload = try #require(try queue.store.submit([NewJob(payload: document("https://images.example/new.jpg"))]).first).id

        func reprocess(_ extra: [String]) throws -> JSONValue {
            let result = try DeriveBinary.run(["reprocess", "--preset", "web", "--stale", "--database", queue.location, "--json"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            return try JSONParser().parse(result.stdout)
        }
        #expect(try reprocess(["--dry-run"])["matched"] == .int(2500))
        let first = try reprocess(["--spread", "1h"])
        #expect(first == .object(["matched": .int(2500), "enqueued": .int(2500), "deduplicated": .int(0), "batches": .int(3)]))
        let again = try reprocess(["--spread", "1h"])
        #expect(again["enqueued"] == .int(0) && again["deduplicated"] == .int(2500))

        // (A job whose random time fell within the second the reprocess took is available already.)
        let jobs = try queue.store.jobs(state: nil, queue: nil, limit: 5000).filter { $0.id != upload }
        #expect(jobs.count == 2500 && jobs.allSatisfy { $0.priority == ReprocessPlan.defaultPriority })
        #expect(jobs.filter { $0.state == .scheduled }.count >= 2490)
        let delays = jobs.compactMap { $0.runAt?.timeIntervalSinceNow }
        #expect(delays.allSatisfy { $0 > -60 && $0 < 3600 } && (delays.max()! - delays.min()!) > 3000, "spread over the hour")
        // The new upload is claimed before any reprocess job.
        #expect(try queue.store.claim(queues: ["default"], limit: 10, owner: "w", lease: 30).first?.run.id == upload)
    }

    /// A new version of a preset makes exactly its outputs stale; a stale-only reprocess brings
    /// them current, and the replaced outputs are deleted by policy.
    @Test func changingAPresetMakesExactlyItsOutputsStale() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let prefix = "stale-\(UUID().uuidString.prefix(8).lowercased())"
        func derive(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
            let result = try DeriveBinary.run(arguments + ["--database", queue.location], environment: WorkerEndToEndTests.environment(s3)
                .merging(environment) { $1 })
            #expect(result.status == 0, "derive \(arguments.joined(separator: " ")): \(result.stderr)")
            return result.stdout
        }
        _ = try derive(["presets", "add", "thumbs", "--chain", "c_thumb,w_48,h_48/f_webp"])
        _ = try derive(["presets", "add", "cards", "--chain", "c_fill,w_64,h_32/f_png"])
        let photos = WorkerEndToEndTests.photos.map { origin + "/fixture/" + $0 + "?stale=\(prefix)" }
        _ = try derive(["submit"] + photos + ["--preset", "thumbs"])
        _ = try derive(["submit", photos[0], "--preset", "cards"])
        let work = ["work", "--until-idle", "--store", "s3://\(s3.bucket)/\(prefix)"]
        _ = try derive(work)
        _ = try derive(["presets", "add", "thumbs", "--chain", "c_thumb,w_72,h_72/f_webp"])

        func staleness() throws -> [String: (Int, Int)] {
            let status = try JSONParser().parse(try derive(["status", "--json"]))
            guard case .array(let presets)? = status["presets"] else { return [:] }
            var result: [String: (Int, Int)] = [:]
            for preset in presets {
                if case .string(let name)? = preset["preset"], case .number(let stale)? = preset["stale"], case .number(let assets)? = preset["assets"] {
                    result[name] = (stale.intValue!, assets.intValue!)
                }
            }
            return result
        }
        var now = try staleness()
        #expect(now["thumbs"]! == (3, 3) && now["cards"]! == (0, 1))

        let reprocess = try JSONParser().parse(try derive(["reprocess", "--preset", "thumbs", "--stale", "--json"]))
        #expect(reprocess["enqueued"] == .int(3))
        _ = try derive(work, environment: ["DERIVE_SUPERSEDED_OUTPUTS": "delete"])
        now = try staleness()
        #expect(now["thumbs"]! == (0, 3) && now["cards"]! == (0, 1))

        // The version 1 thumbnails are gone from the table and the bucket; version 2's remain.
        let sql = try queue.sql()
        let rows = try sql.query("SELECT preset_version, storage_key FROM derive.derivatives WHERE preset_name = 'thumbs'").rows
        #expect(rows.count == 3 && rows.allSatisfy { $0[0] == "2" })
        let listed = try S3Listing.keys(s3, prefix: prefix)
        #expect(Set(listed) == Set(rows.map { prefix + "/" + $0[1]! }).union(
            try sql.query("SELECT storage_key FROM derive.derivatives WHERE preset_name = 'cards'").rows.map { prefix + "/" + $0[0]! }))
    }

    /// A new version that changes one output of a preset: the reprocess derives that output
    /// again and reuses the unchanged one (no decode for it, the same key and bytes).
    @Test func aReprocessDerivesOnlyTheOutputsAPresetChangeChanged() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let prefix = "partial-\(UUID().uuidString.prefix(8).lowercased())"
        func derive(_ arguments: [String]) throws -> String {
            let result = try DeriveBinary.run(arguments + ["--database", queue.location], environment: WorkerEndToEndTests.environment(s3))
            #expect(result.status == 0, "derive \(arguments.joined(separator: " ")): \(result.stderr)")
            return result.stdout
        }
        func gallery(large: Int) -> String {
            #"{"outputs": [{"name": "thumb", "chain": "c_thumb,w_48,h_48/f_webp"}, {"name": "large", "chain": "c_limit,w_\#(large)/f_webp"}]}"#
        }
        _ = try derive(["presets", "add", "gallery", "--chain", gallery(large: 400)])
        let photos = WorkerEndToEndTests.photos.prefix(2).map { origin + "/fixture/" + $0 + "?partial=\(prefix)" }
        _ = try derive(["submit"] + photos + ["--preset", "gallery"])
        let work = ["work", "--until-idle", "--store", "s3://\(s3.bucket)/\(prefix)"]
        _ = try derive(work)
        let sql = try queue.sql()
        let before = Dictionary(uniqueKeysWithValues: try sql.query("SELECT storage_key, sha256 FROM derive.derivatives").rows.map { ($0[0]!, $0[1]!) })

        _ = try derive(["presets", "add", "gallery", "--chain", gallery(large: 300)])
        let reprocess = try JSONParser().parse(try derive(["reprocess", "--preset", "gallery", "--stale", "--json"]))
        #expect(reprocess["enqueued"] == .int(2))
        _ = try derive(work)
        let jobs = try queue.store.jobs(state: .completed, queue: nil, limit: 10).filter { $0.payload["preset"] == .string("gallery") && $0.id > 2 }
        #expect(jobs.count == 2)
        for job in jobs {
            guard case .array(let outputs)? = job.result?["outputs"] else { throw Missing() }
            let reused = outputs.filter { $0["reused"] == .bool(true) }.compactMap { output -> String? in
                if case .string(let name)? = output["name"] { name } else { nil }
            }
            #expect(reused == ["thumb"], "job \(job.id): \(reused)")
        }
        // The thumbnails keep their keys and bytes, now under version 2; the large outputs are new.
        let rows = try sql.query("SELECT output_name, storage_key, sha256, preset_version FROM derive.derivatives WHERE superseded_at IS NULL").rows
        #expect(rows.count == 4 && rows.allSatisfy { $0[3] == "2" })
        for row in rows where row[0] == "thumb" { #expect(before[row[1]!] == row[2]!) }
        for row in rows where row[0] == "large" { #expect(before[row[1]!] == nil) }
    }

    /// Revalidation: an unchanged source costs one conditional request and no work; a changed
    /// one is recorded as a new asset version and derived again.
    @Test func aChangedSourceIsDetectedAndDerivedAgain() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin(), s3 = try TestServers.s3()
        let name = "photo-\(UUID().uuidString.prefix(8))"
        let source = origin + "/mutable/" + name
        #expect(try TestServers.put(source + "?fixture=photos/grace_hopper_noexif.jpg") == 204)
        func derive(_ arguments: [String]) throws -> String {
            let result = try DeriveBinary.run(arguments + ["--database", queue.location], environment: WorkerEndToEndTests.environment(s3))
            #expect(result.status == 0, "derive \(arguments.joined(separator: " ")): \(result.stderr)")
            return result.stdout
        }
        _ = try derive(["presets", "add", "thumbs", "--chain", "c_thumb,w_40,h_40/f_webp"])
        _ = try derive(["submit", source, "--preset", "thumbs"])
        let work = ["work", "--until-idle", "--store", "s3://\(s3.bucket)/revalidate"]
        _ = try derive(work)
        let sql = try queue.sql()
        func sourceRow() throws -> [String?] {
            try sql.query("SELECT s.version, a.sha256 FROM derive.sources s JOIN derive.assets a ON a.id = s.asset_id WHERE s.url = $1",
                          [source]).rows.first ?? []
        }
        let before = try sourceRow()
        #expect(before.first == "1")
        let jobsBefore = try sql.query("SELECT count(*) FROM derive.job_archive").scalar

        // Unchanged: one conditional request, answered 304, and nothing else happens.
        let requestsBefore = try TestServers.requests("/mutable/" + name).requests.count
        #expect(try JSONParser().parse(try derive(["revalidate", "--json"]))["enqueued"] == .int(1))
        _ = try derive(work)
        let requests = try TestServers.requests("/mutable/" + name).requests.dropFirst(requestsBefore)
        #expect(requests.count == 1 && requests.first?["if-none-match"] != nil, "\(requests)")
        #expect(Int(try sql.query("SELECT count(*) FROM derive.job_archive").scalar!)! == Int(jobsBefore!)! + 1, "only the check ran")
        #expect(try sourceRow() == before)

        // Changed: a new asset, the source's version 2, and its outputs derived again.
        #expect(try TestServers.put(source + "?fixture=photos/nikon-coolpix-p6000_gps.jpg") == 204)
        _ = try derive(["revalidate"])
        _ = try derive(work)
        let after = try sourceRow()
        #expect(after.first == "2" && after.last != before.last, "\(after)")
        let outputs = try sql.query("""
            SELECT count(*) FROM derive.derivatives d JOIN derive.assets a ON a.id = d.asset_id WHERE a.sha256 = $1 AND d.preset_name = 'thumbs'
            """, [after.last!!]).scalar
        #expect(outputs == "1")
    }
}

/// Assets with one derivative each of `preset` at `version`, written straight to the tables
/// (a reprocess reads them; it does not need pixels).
func seedAssets(_ queue: TestQueue, count: Int, preset: String, version: Int) throws {
    switch queue.kind {
    case .postgres:
        let sql = try queue.sql()
        try sql.query("""
            WITH a AS (
                INSERT INTO derive.assets (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation)
                SELECT md5(i::text) || md5((i + 1)::text), 'https://images.example/' || i || '.jpg', 1000, 'jpeg', 100, 100, 1, false, 1
                FROM generate_series(1, $1::integer) i
                RETURNING id, sha256
            )
            INSERT INTO derive.derivatives (asset_id, job_id, output_name, chain, chain_hash, preset_name, preset_version, storage_key, url,
                                            format, width, height, bytes, sha256)
            SELECT id, 0, 'thumb', '{}', 'h', $2, $3::integer, sha256 || '/thumb.webp', 'u', 'webp', 64, 64, 100, 's' FROM a
            """, [String(count), preset, String(version)])
    case .sqlite:
        guard case .sqlite(let path) = try QueueLocation.parse(queue.location) else { throw Missing() }
        let connection = try SQLiteConnection(path: path)
        try connection.transaction { () throws(SQLiteError) in
            try connection.query("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
                INSERT INTO assets (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation, created_at, updated_at)
                SELECT printf('%064d', i), 'https://images.example/' || i || '.jpg', 1000, 'jpeg', 100, 100, 1, 0, 1, unixepoch(), unixepoch() FROM n
                """, [SQLiteValue(count)])
            try connection.query("""
                INSERT INTO derivatives (asset_id, job_id, output_name, chain, chain_hash, preset_name, preset_version, storage_key, url, format,
                                         width, height, bytes, sha256, created_at)
                SELECT id, 0, 'thumb', '{}', 'h', ?1, ?2, sha256 || '/thumb.webp', 'u', 'webp', 64, 64, 100, 's', unixepoch() FROM assets
                """, [SQLiteValue(preset), SQLiteValue(version)])
        }
    }
}

/// The filters a reprocess picks assets with, on both stores.
@Suite struct ReprocessFilterTests {
    /// The PostgreSQL cases of the parameterised tests here run only where PostgreSQL is;
    /// this shows as skipped when they did not.
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(StoreKind.runnable.contains(.postgres))
    }

    @Test(arguments: StoreKind.runnable)
    func staleAndMissingPickTheRightAssets(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        let thumb = JSONValue.object(["name": .string("thumb"), "chain": .string("c_thumb,w_64,h_64")])
        _ = try queue.store.savePreset(name: "web", outputs: .array([thumb]))
        _ = try queue.store.savePreset(name: "web", outputs: .array([thumb]))
        // Ten assets with web v1 thumbnails, six of them brought to v2; two with none.
        try seedAssets(queue, count: 10, preset: "web", version: 1)
        try queue.execute("UPDATE derivatives SET preset_version = 2 WHERE asset_id <= 6".replacingOccurrences(
            of: "derivatives", with: queue.kind == .postgres ? "derive.derivatives" : "derivatives"))
        let table = queue.kind == .postgres ? "derive.assets" : "assets"
        let now = queue.kind == .postgres ? "" : ", created_at, updated_at"
        let values = queue.kind == .postgres ? "" : ", 0, 0"
        try queue.execute("""
            INSERT INTO \(table) (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation\(now))
            VALUES ('\(String(repeating: "a", count: 64))', 'https://other.example/x.jpg', 1, 'jpeg', 1, 1, 1, false, 1\(values)),
                   ('\(String(repeating: "b", count: 64))', 'https://images.example/y.jpg', 1, 'jpeg', 1, 1, 1, false, 1\(values))
            """)
        let reprocessor = Reprocessor(database: queue.store)
        func count(_ change: (inout AssetFilter) -> Void) throws -> Int {
            var filter = AssetFilter()
            change(&filter)
            return try reprocessor.count(ReprocessPlan(preset: "web", filter: filter, batchSize: 3))
        }
        #expect(try count { _ in } == 12)
        #expect(try count { $0.stale = true } == 4)
        #expect(try count { $0.missing = true } == 6)
        #expect(try count { $0.stale = true; $0.missing = true } == 6)
        // Only the assets with some output of the preset (what the dashboard's "all" reprocesses).
        #expect(try count { $0.derived = true } == 10)
        #expect(try count { $0.derived = true; $0.stale = true } == 4)
        #expect(try count { $0.sourceHost = "images.example" } == 11)
        #expect(try count { $0.createdBefore = Date().addingTimeInterval(-86400 * 365) } == (queue.kind == .postgres ? 0 : 2))
    }
}
