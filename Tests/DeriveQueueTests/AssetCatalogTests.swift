import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveSQLite
import DeriveTestSupport
import Foundation
import Testing

/// What the dashboard's asset pages read (`AssetCatalog`), one set of semantics on both SQL
/// stores, from rows written by the stores' own completion path: assets paged newest first by
/// keyset, each with its narrowest current outputs and their count; one asset with every output
/// ever made for it, its faces and its sources' revalidation state; one derivative.
@Suite struct AssetCatalogConformanceTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(StoreKind.runnable.contains(.postgres))
    }

    static func sha(_ n: Int) -> String { String(format: "%064x", n) }

    static func asset(_ n: Int, faces: FaceFindings? = nil) -> AssetRecord {
        AssetRecord(sha256: sha(n), sourceURL: "https://images.example/\(n).jpg", bytes: 1000 + n, format: "jpeg", width: 640 + n, height: 480,
                    pages: 1, hasAlpha: false, orientation: 1, colorSpace: "srgb", iccDescription: nil, exif: ["make": "Kodak"],
                    hasLocation: false, perceptualHash: "00ff00ff00ff00ff", faces: faces)
    }

    static func output(_ name: String, width: Int, asset n: Int, preset: (name: String, version: Int)? = nil, key: String? = nil) -> DerivativeRecord {
        let stored = key ?? "\(sha(n))/\(name)-\(width).webp"
        return DerivativeRecord(outputName: name, breakpointWidth: nil, chain: .object(["chain": .string("c_scale,w_\(width)")]),
                                chainHash: "h-\(name)-\(width)", presetName: preset?.name, presetVersion: preset?.version, storageKey: stored,
                                url: "https://cdn.example/\(stored)", format: "webp", width: width, height: width * 3 / 4, bytes: 100 + width,
                                sha256: String(repeating: "c", count: 64), quality: 80, frames: 1, hasAlpha: false, blurhash: "LEHV6nWB2yk8",
                                dominantColor: "#102030", timings: .object(["apply": .decimal(1.5), "encode": .decimal(2.25)]))
    }

    /// Records one finished job through the store's completion path; returns its id.
    @discardableResult
    static func complete(_ store: any DeriveDatabase, _ record: DerivationRecord) throws -> JobID {
        let id = try #require(try store.submit([NewJob(payload: .object(["n": .string(UUID().uuidString)]))]).first).id
        let run = try #require(try store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try store.complete([Completion(run: run, record: record)]) == [id])
        return id
    }

    /// The asset ids in the store, newest first, by walking every page.
    static func walk(_ store: any DeriveDatabase, limit: Int) throws -> (ids: [Int64], pages: [AssetPage]) {
        var ids: [Int64] = [], pages: [AssetPage] = [], cursor: Int64?
        repeat {
            let page = try store.recentAssets(before: cursor, limit: limit, outputsPerAsset: 3)
            ids += page.assets.map(\.id)
            pages.append(page)
            cursor = page.next
        } while cursor != nil && pages.count < 20
        return (ids, pages)
    }

    @Test(arguments: StoreKind.runnable)
    func assetsArePagedNewestFirstByKeyset(kind: StoreKind) throws {
        let queue = try TestQueue(kind), store = queue.store
        let empty = try store.recentAssets(before: nil, limit: 10, outputsPerAsset: 3)
        #expect(empty.assets.isEmpty && empty.next == nil)

        for n in 1...5 { try Self.complete(store, DerivationRecord(asset: Self.asset(n), derivatives: [Self.output("thumb", width: 100, asset: n)])) }
        let (ids, pages) = try Self.walk(store, limit: 2)
        #expect(pages.map(\.assets.count) == [2, 2, 1])
        #expect(pages.last?.next == nil && pages.dropLast().allSatisfy { $0.next == $0.assets.last?.id })
        #expect(ids.count == 5 && ids == ids.sorted(by: >) && Set(ids).count == 5, "\(ids)")
        // Newest first: the last recorded content comes first, with its row's facts.
        let first = try #require(pages.first?.assets.first)
        #expect(first.sha256 == Self.sha(5) && first.sourceURL == "https://images.example/5.jpg" && first.format == "jpeg")
        #expect(first.width == 645 && first.height == 480 && abs(first.createdAt.timeIntervalSinceNow) < 60)

        // A page that ends exactly at the oldest asset still names a cursor; the page after it is empty and last.
        let (exact, exactPages) = try Self.walk(store, limit: 5)
        #expect(exact == ids && exactPages.map(\.assets.count) == [5, 0] && exactPages.last?.next == nil)
        let tail = try store.recentAssets(before: ids[2], limit: 10, outputsPerAsset: 3)
        #expect(tail.assets.map(\.id) == Array(ids[3...]) && tail.next == nil)
        #expect(try store.recentAssets(before: ids.last, limit: 10, outputsPerAsset: 3) == AssetPage(assets: [], next: nil))
        #expect(try store.recentAssets(before: nil, limit: 0, outputsPerAsset: 3) == AssetPage(assets: [], next: nil))
    }

    @Test(arguments: StoreKind.runnable)
    func eachAssetShowsItsNarrowestCurrentOutputsAndCountsThemAll(kind: StoreKind) throws {
        let queue = try TestQueue(kind), store = queue.store
        let outputs = [640, 320, 1280, 320, 100].enumerated().map { Self.output("o\($0.offset)", width: $0.element, asset: 1, key: "k\($0.offset)") }
        let job = try Self.complete(store, DerivationRecord(asset: Self.asset(1), derivatives: outputs))
        try Self.complete(store, DerivationRecord(asset: Self.asset(2), derivatives: []))

        let page = try store.recentAssets(before: nil, limit: 10, outputsPerAsset: 3)
        #expect(page.assets.count == 2 && page.next == nil)
        let bare = try #require(page.assets.first), full = try #require(page.assets.last)
        #expect(bare.sha256 == Self.sha(2) && bare.outputCount == 0 && bare.outputs.isEmpty)
        #expect(full.outputCount == 5)
        // Narrowest first, ties by id (the store numbers one job's rows in no particular order).
        #expect(full.outputs.map(\.record.width) == [100, 320, 320] && full.outputs[1].id < full.outputs[2].id)
        #expect(full.outputs[0].record == outputs[4] && Set(full.outputs.dropFirst().map(\.record.storageKey)) == ["k1", "k3"])
        #expect(full.outputs.allSatisfy { output in outputs.contains(output.record) })
        #expect(full.outputs.allSatisfy { $0.assetID == full.id && $0.jobID == job && $0.supersededAt == nil && $0.currentPresetVersion == nil && !$0.isStale })

        let none = try store.recentAssets(before: nil, limit: 10, outputsPerAsset: 0)
        #expect(none.assets.map(\.outputCount) == [0, 5] && none.assets.allSatisfy { $0.outputs.isEmpty })
        let all = try store.recentAssets(before: nil, limit: 10, outputsPerAsset: 50)
        #expect(all.assets.last?.outputs.map(\.record.width) == [100, 320, 320, 640, 1280])
    }

    /// A new preset version makes the outputs of the older one stale; a job of the new version
    /// supersedes them. The page shows current outputs only; the asset shows every one, newest first.
    @Test(arguments: StoreKind.runnable)
    func supersededAndStaleOutputs(kind: StoreKind) throws {
        let queue = try TestQueue(kind), store = queue.store
        let presetOutputs: JSONValue = .array([.object(["name": .string("a"), "chain": .string("c_scale,w_100")])])
        #expect(try store.savePreset(name: "cards", outputs: presetOutputs) == 1)
        let v1 = [Self.output("a", width: 100, asset: 1, preset: ("cards", 1), key: "a1"), Self.output("b", width: 200, asset: 1, preset: ("cards", 1), key: "b1")]
        let adhoc = Self.output("plain", width: 50, asset: 1, key: "plain")
        let gone = Self.output("old", width: 60, asset: 1, preset: ("deleted-preset", 4), key: "old")
        try Self.complete(store, DerivationRecord(asset: Self.asset(1), derivatives: v1 + [adhoc, gone]))

        var outputs = try #require(try store.recentAssets(before: nil, limit: 1, outputsPerAsset: 10).assets.first).outputs
        #expect(outputs.map(\.record.storageKey) == ["plain", "old", "a1", "b1"])
        #expect(outputs.map(\.currentPresetVersion) == [nil, nil, 1, 1] && outputs.allSatisfy { !$0.isStale })

        #expect(try store.savePreset(name: "cards", outputs: presetOutputs) == 2)
        outputs = try #require(try store.recentAssets(before: nil, limit: 1, outputsPerAsset: 10).assets.first).outputs
        #expect(outputs.map(\.currentPresetVersion) == [nil, nil, 2, 2])
        #expect(outputs.map(\.isStale) == [false, false, true, true], "made by version 1 of a preset now at 2")
        #expect(outputs.allSatisfy { $0.supersededAt == nil })

        Thread.sleep(forTimeInterval: 0.01)
        let v2 = Self.output("a", width: 150, asset: 1, preset: ("cards", 2), key: "a2")
        try Self.complete(store, DerivationRecord(asset: Self.asset(1), derivatives: [v2]))
        // Retired presets still count: the newest version of any.
        #expect(try store.retirePreset("cards"))
        let summary = try #require(try store.recentAssets(before: nil, limit: 1, outputsPerAsset: 10).assets.first)
        #expect(summary.outputCount == 3 && summary.outputs.map(\.record.storageKey) == ["plain", "old", "a2"])
        #expect(summary.outputs.last?.currentPresetVersion == 2 && summary.outputs.last?.isStale == false)

        let detail = try #require(try store.asset(id: summary.id))
        // Newest first: the second job's output, then the first job's (one instant: by id, newest first).
        let keys = detail.derivatives.map(\.record.storageKey)
        #expect(keys.first == "a2" && Set(keys.dropFirst()) == ["old", "plain", "b1", "a1"] && keys.count == 5, "\(keys)")
        #expect(detail.derivatives.dropFirst().map(\.id) == detail.derivatives.dropFirst().map(\.id).sorted(by: >))
        #expect(detail.derivatives.first!.createdAt > detail.derivatives.last!.createdAt)
        let superseded = detail.derivatives.filter { $0.supersededAt != nil }
        #expect(Set(superseded.map(\.record.storageKey)) == ["b1", "a1"] && superseded.allSatisfy { $0.isStale && $0.currentPresetVersion == 2 })
        #expect(superseded.allSatisfy { abs($0.supersededAt!.timeIntervalSinceNow) < 60 && $0.supersededAt! >= $0.createdAt })
        #expect(detail.derivatives.first(where: { $0.record.storageKey == "a1" })?.record == v1[0], "a superseded row comes back whole")

        let one = try #require(try store.derivative(id: superseded[1].id))
        #expect(one == superseded[1])
        #expect(try store.derivative(id: summary.outputs[2].id) == summary.outputs[2])
    }

    /// The faces a job found come back with the asset (all but the time detection took, which
    /// is not kept); a later job that did not look keeps them.
    @Test(arguments: StoreKind.runnable)
    func facesComeBackWithTheAsset(kind: StoreKind) throws {
        let queue = try TestQueue(kind), store = queue.store
        let faces = FaceFindings(faces: [DetectedFace(box: Rect(x: 181, y: 140, width: 187, height: 186), score: 1.05),
                                         DetectedFace(box: Rect(x: 10, y: 20, width: 30, height: 31), score: 0.125)],
                                 detector: "dlib-hog", milliseconds: 0)
        try Self.complete(store, DerivationRecord(asset: Self.asset(1, faces: faces), derivatives: []))
        try Self.complete(store, DerivationRecord(asset: Self.asset(2), derivatives: []))
        let ids = try store.recentAssets(before: nil, limit: 10, outputsPerAsset: 1).assets.map(\.id)
        #expect(ids.count == 2)

        let withFaces = try #require(try store.asset(id: ids[1]))
        #expect(withFaces.record == Self.asset(1, faces: faces), "the whole row, faces included")
        #expect(withFaces.id == ids[1] && withFaces.updatedAt >= withFaces.createdAt && withFaces.derivatives.isEmpty && withFaces.sources.isEmpty)
        #expect(try store.asset(id: ids[0])?.record.faces == nil, "no job looked")

        try Self.complete(store, DerivationRecord(asset: Self.asset(1), derivatives: []))
        #expect(try store.asset(id: ids[1])?.record.faces == faces)
    }

    /// The sources whose last content is the asset, by URL, with their versions and validators.
    @Test(arguments: StoreKind.runnable)
    func sourcesShowWhatRevalidationKnows(kind: StoreKind) throws {
        let queue = try TestQueue(kind), store = queue.store
        let b = "https://img.example/b.jpg", a = "https://img.example/a.jpg"
        try Self.complete(store, DerivationRecord(asset: Self.asset(1), derivatives: [],
                                                  source: SourceRecord(url: b, etag: "\"e1\"", lastModified: nil)))
        try Self.complete(store, DerivationRecord(asset: Self.asset(1), derivatives: [],
                                                  source: SourceRecord(url: a, etag: nil, lastModified: "Mon, 23 Nov 2026 10:00:00 GMT")))
        let first = try #require(try store.recentAssets(before: nil, limit: 1, outputsPerAsset: 0).assets.first).id
        var sources = try #require(try store.asset(id: first)).sources
        #expect(sources.map(\.url) == [a, b] && sources.map(\.version) == [1, 1])
        #expect(sources.map(\.etag) == [nil, "\"e1\""] && sources.map(\.lastModified) == ["Mon, 23 Nov 2026 10:00:00 GMT", nil])
        #expect(sources.allSatisfy { abs($0.checkedAt.timeIntervalSinceNow) < 60 && $0.changedAt <= $0.checkedAt })

        // b.jpg now holds other content: it moves to that asset, one version up.
        Thread.sleep(forTimeInterval: 0.01)
        try Self.complete(store, DerivationRecord(asset: Self.asset(2), derivatives: [],
                                                  source: SourceRecord(url: b, etag: "\"e2\"", lastModified: nil)))
        let second = try #require(try store.recentAssets(before: nil, limit: 1, outputsPerAsset: 0).assets.first).id
        #expect(try store.asset(id: first)?.sources.map(\.url) == [a])
        let moved = try #require(try store.asset(id: second)?.sources.first)
        #expect(moved.url == b && moved.version == 2 && moved.etag == "\"e2\"" && moved.changedAt > sources[1].changedAt)

        // An unchanged answer from the origin moves checked_at, not changed_at.
        Thread.sleep(forTimeInterval: 0.01)
        try store.sourceUnchanged(a, etag: "\"e3\"", lastModified: nil)
        sources = try #require(try store.asset(id: first)).sources
        #expect(sources.count == 1 && sources[0].etag == "\"e3\"" && sources[0].version == 1 && sources[0].checkedAt > sources[0].changedAt)
    }

    @Test(arguments: StoreKind.runnable)
    func unknownIdsAreNil(kind: StoreKind) throws {
        let queue = try TestQueue(kind), store = queue.store
        #expect(try store.asset(id: 1) == nil)
        #expect(try store.derivative(id: 1) == nil)
        try Self.complete(store, DerivationRecord(asset: Self.asset(1), derivatives: [Self.output("thumb", width: 100, asset: 1)]))
        let summary = try #require(try store.recentAssets(before: nil, limit: 1, outputsPerAsset: 1).assets.first)
        let output = try #require(summary.outputs.first)
        #expect(try store.asset(id: summary.id + 1000) == nil)
        #expect(try store.derivative(id: output.id + 1000) == nil)
        #expect(try store.asset(id: -1) == nil)
        #expect(try store.derivative(id: -1) == nil)
        #expect(try store.derivative(id: output.id) == output)
        #expect(try store.asset(id: summary.id)?.derivatives == [output])
    }
}

/// The faces column read back by column name, as both stores spell it.
@Suite struct AssetCatalogRowTests {
    @Test func facesReadBackFromTheirJSON() throws {
        let faces = FaceFindings(faces: [DetectedFace(box: Rect(x: 1, y: 2, width: 3, height: 4), score: 0.75)], detector: "dlib-hog", milliseconds: 12)
        let read = try FaceFindings(json: faces.json)
        #expect(read.faces == faces.faces && read.detector == "dlib-hog" && read.milliseconds == 0)
        let asset = AssetCatalogConformanceTests.asset(1, faces: FaceFindings(faces: faces.faces, detector: "dlib-hog", milliseconds: 0))
        #expect(try AssetRecord(row: asset.row) == asset)
        #expect(try FaceFindings(json: .object(["count": .int(0), "detector": .string("dlib-hog"), "boxes": .array([])])).faces.isEmpty)
    }

    @Test func malformedFacesAreAnError() throws {
        guard case .object(let members) = AssetCatalogConformanceTests.asset(1).row else { throw Missing() }
        for faces: JSONValue in [.string("none"), .object(["detector": .string("x")]),
                                 .object(["detector": .string("x"), "boxes": .array([.object(["x": .int(1)])])])] {
            let row = JSONValue.object(members.map { $0.key == "faces" ? JSONMember(key: "faces", value: faces) : $0 })
            let error = #expect(throws: DeriveError.self) { try AssetRecord(row: row) }
            #expect(error?.detail.contains("assets.faces") == true, "\(String(describing: error))")
        }
    }
}

/// No query of the asset catalog scans or sorts assets, derivatives or sources: each reads
/// through an index in the order it returns (checked on 10,000 assets with 50,000 derivatives,
/// analysed, with the planners' own costs), in PostgreSQL and in SQLite.
@Suite struct AssetCatalogPlanTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func everyQueryReadsThroughAnIndex() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        try sql.execute("""
            INSERT INTO derive.presets (name, version, outputs)
            SELECT p, v, '[]'::jsonb FROM unnest(ARRAY['web', 'cards', 'thumbs']) AS p, generate_series(1, 3) AS v;
            INSERT INTO derive.assets (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation, created_at)
            SELECT md5(g::text) || md5((-g)::text), 'https://host' || (g % 20) || '.example/' || g || '.jpg', 1000, 'jpeg', 640, 480, 1, false, 1,
                   now() - (10000 - g) * interval '1 minute'
            FROM generate_series(1, 10000) AS g;
            INSERT INTO derive.derivatives (asset_id, job_id, output_name, chain, chain_hash, preset_name, preset_version, storage_key, url,
                                            format, width, height, bytes, sha256, created_at, superseded_at)
            SELECT a.id, a.id, 'o' || n, '{}'::jsonb, md5(n::text), (ARRAY['web', 'cards', 'thumbs'])[1 + a.id % 3], 1 + (a.id + n) % 3,
                   a.sha256 || '/' || n, 'https://cdn.example/' || a.sha256 || '/' || n, 'webp', 100 * n, 75 * n, 1000, a.sha256,
                   a.created_at + n * interval '1 second', CASE WHEN n = 1 AND a.id % 2 = 0 THEN now() END
            FROM derive.assets a, generate_series(1, 5) AS n;
            INSERT INTO derive.sources (url, asset_id, checked_at, changed_at)
            SELECT a.source_url, a.id, now(), a.created_at FROM derive.assets a
            UNION ALL
            SELECT 's3://bucket/' || a.id, a.id, now(), a.created_at FROM derive.assets a WHERE a.id % 10 = 0;
            ANALYZE derive.presets, derive.assets, derive.derivatives, derive.sources;
            """)
        #expect(try sql.query("SELECT count(*) FROM derive.derivatives").scalar == "50000")
        let queries: [(String, String, [String?])] = [
            ("first page", PostgresJobStore.recentAssetsQuery(before: nil, limit: 50, outputsPerAsset: 4).sql,
             PostgresJobStore.recentAssetsQuery(before: nil, limit: 50, outputsPerAsset: 4).values),
            ("page after a cursor", PostgresJobStore.recentAssetsQuery(before: 5000, limit: 50, outputsPerAsset: 4).sql,
             PostgresJobStore.recentAssetsQuery(before: 5000, limit: 50, outputsPerAsset: 4).values),
            ("one asset", DerivePostgres.CatalogSQL.asset, ["4321"]),
            ("its derivatives", DerivePostgres.CatalogSQL.derivativesOfAsset, ["4321"]),
            ("its sources", DerivePostgres.CatalogSQL.sourcesOfAsset, ["4320"]),
            ("one derivative", DerivePostgres.CatalogSQL.derivative, ["12345"]),
        ]
        for (name, query, values) in queries {
            let plan = try sql.query("EXPLAIN " + query, values).rows.compactMap { $0.first ?? nil }.joined(separator: "\n")
            for table in ["assets", "derivatives", "sources"] {
                #expect(!plan.contains("Seq Scan on \(table)"), "\(name) scans \(table):\n\(plan)")
            }
            #expect(plan.contains("Index"), "\(name):\n\(plan)")
            // Rows come in an index's order: no sort anywhere (an asset's outputs included).
            let sorts = plan.split(separator: "\n").filter { $0.hasPrefix("Sort ") || $0.contains("->  Sort ") || $0.contains("Incremental Sort") }
            #expect(sorts.isEmpty, "\(name) sorts:\n\(plan)")
        }
    }
    @Test func everySQLiteQueryReadsThroughAnIndex() throws {
        let queue = try TestQueue(.sqlite)
        guard case .sqlite(let path) = try QueueLocation.parse(queue.location) else { throw Missing() }
        let connection = try SQLiteConnection(path: path)
        try connection.execute("""
            INSERT INTO presets (name, version, outputs, created_at) VALUES ('web', 1, '[]', 0), ('web', 2, '[]', 0), ('cards', 1, '[]', 0);
            WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 10000)
            INSERT INTO assets (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation, created_at, updated_at)
            SELECT printf('%064d', n), 'https://host' || (n % 20) || '.example/' || n || '.jpg', 1000, 'jpeg', 640, 480, 1, 0, 1, n, n FROM g;
            WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5)
            INSERT INTO derivatives (asset_id, job_id, output_name, chain, chain_hash, preset_name, preset_version, storage_key, url, format,
                                     width, height, bytes, sha256, created_at, superseded_at)
            SELECT a.id, a.id, 'o' || n, '{}', 'h' || n, CASE WHEN a.id % 2 = 0 THEN 'web' ELSE 'cards' END, 1, a.sha256 || '/' || n, 'u',
                   'webp', 100 * n, 75 * n, 1000, a.sha256, a.created_at + n, CASE WHEN n = 1 AND a.id % 2 = 0 THEN a.created_at + 10 END
            FROM assets a, g;
            INSERT INTO sources (url, asset_id, checked_at, changed_at) SELECT source_url, id, created_at, created_at FROM assets;
            ANALYZE;
            """)
        #expect(try connection.query("SELECT count(*) FROM derivatives").first?.first?.int == 50000)
        let first = SQLiteJobStore.recentAssetsQuery(before: nil, limit: 50, outputsPerAsset: 4)
        let later = SQLiteJobStore.recentAssetsQuery(before: 5000, limit: 50, outputsPerAsset: 4)
        let queries: [(String, String, [DatabaseValue])] = [
            ("first page", first.sql, first.values), ("page after a cursor", later.sql, later.values),
            ("one asset", DeriveSQLite.CatalogSQL.asset, [4321]), ("its derivatives", DeriveSQLite.CatalogSQL.derivativesOfAsset, [4321]),
            ("its sources", DeriveSQLite.CatalogSQL.sourcesOfAsset, [4320]), ("one derivative", DeriveSQLite.CatalogSQL.derivative, [12345]),
        ]
        for (name, query, values) in queries {
            let plan = try connection.query("EXPLAIN QUERY PLAN " + query, values).compactMap { $0.last?.string }.joined(separator: "\n")
            // SQLite names tables by their aliases here: every SCAN reads a whole table but one of
            // a subquery's own rows (a co-routine), and the first page's walk of the assets' rowid
            // tree newest first, which is the table's own order and stops at the limit (no
            // TEMP B-TREE below proves there is no sort).
            let lines = plan.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            var allowed = Set(lines.compactMap { $0.hasPrefix("CO-ROUTINE ") || $0.hasPrefix("MATERIALIZE ") ? $0.split(separator: " ").last.map(String.init) : nil })
            if name == "first page" { allowed.insert("assets") }
            let scans = lines.filter { $0.hasPrefix("SCAN ") && !allowed.contains(String($0.dropFirst(5))) }
            #expect(scans.isEmpty, "\(name) scans a table:\n\(plan)")
            #expect(plan.contains("INDEX") || plan.contains("PRIMARY KEY"), "\(name):\n\(plan)")
            #expect(!plan.contains("TEMP B-TREE"), "\(name) sorts:\n\(plan)")
        }
    }
}
