import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// The management calls over `derive serve`'s records (`ServedAssetCatalog`, issue 38) on the
/// three stores: listings by prefix, public ids, tag and context, keyset pages in both orders
/// and directions, tag and context changes, and the tags in use.
@Suite struct ServedAssetCatalogConformanceTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(JobStoreKind.runnable.contains(.postgres))
    }

    typealias Under = ServedAssetsConformanceTests.Under

    /// Twelve assets: `a/…` and `b/…` folders, ids with characters whose code-point order is
    /// not their order in other collations (`B` before `a`, `é` after `z`), creation times a
    /// microsecond apart in places and equal in two, tags and context on some.
    static let ids = ["a/1", "a/10", "a/2", "a/B", "a/z", "a/é", "a_x", "b/1", "b/2", "B/1", "c%d", "c_d"]

    static func fill(_ store: any ServedAssets, cloud: String = "demo") throws {
        for (index, id) in ids.enumerated() {
            let created = 1_700_000_000 + Double(index / 2) * 0.000_001 + Double(index % 2 == 0 ? 0 : 1)
            let asset = ServedAsset(cloud: cloud, publicID: id, version: 1, format: "jpg", width: 10, height: 10, bytes: 100,
                                    sha256: String(repeating: "ab", count: 32), originalKey: "o/\(index)", createdAt: Date(timeIntervalSince1970: created),
                                    tags: index % 3 == 0 ? ["cat", "t\(index)"] : ["t\(index)"],
                                    context: index % 4 == 0 ? ["alt": "x\(index % 8)", "k": "v"] : [:])
            _ = try store.recordUpload(asset, overwrite: false, eager: nil)
        }
    }

    /// Every page of a listing, following cursors through their tokens (as a client does).
    static func all(_ store: any ServedAssetCatalog, _ query: ServedAssetQuery) throws -> [String] {
        var query = query, ids: [String] = [], pages = 0
        while true {
            let page = try store.listServedAssets(query)
            ids += page.assets.map(\.publicID)
            pages += 1
            guard let next = page.next else { break }
            #expect(page.assets.count == query.limit)
            let cursor = ServedAssetCursor(token: next.token)
            #expect(cursor == next)
            query.after = cursor
            if pages > 50 { Issue.record("listing does not end"); break }
        }
        return ids
    }

    static func byBytes(_ ids: [String]) -> [String] {
        ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    @Test(arguments: JobStoreKind.runnable)
    func prefixesListInCodePointOrderPageByPage(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        try Self.fill(store, cloud: "other")
        let folderA = Self.byBytes(Self.ids.filter { $0.hasPrefix("a/") })
        for limit in [1, 2, 5, 500] {
            #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("a/"), order: .publicID, ascending: true, limit: limit)) == folderA)
            #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("a/"), order: .publicID, ascending: false, limit: limit))
                    == folderA.reversed())
        }
        // LIKE's wildcards in a prefix are plain characters.
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("c_"), order: .publicID, ascending: true)) == ["c_d"])
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("c%"), order: .publicID, ascending: true)) == ["c%d"])
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("a_"), order: .publicID, ascending: true)) == ["a_x"])
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("zzz"), order: .publicID, ascending: true)).isEmpty)
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", order: .publicID, ascending: true, limit: 3)) == Self.byBytes(Self.ids))
    }

    @Test(arguments: JobStoreKind.runnable)
    func creationTimesListNewestFirstWithTiesByPublicID(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        let expected = Self.ids.enumerated().map { index, id in
            (ServedAssetCursor(order: .createdAt, createdAt: ServedAssetCursor.microseconds(Date(timeIntervalSince1970: 1_700_000_000
                + Double(index / 2) * 0.000_001 + Double(index % 2 == 0 ? 0 : 1))), publicID: id), id)
        }.sorted { $0.0 < $1.0 }.map(\.1)
        for limit in [1, 3, 7, 20] {
            #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", limit: limit)) == expected.reversed())
            #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", ascending: true, limit: limit)) == expected)
        }
        // The listing carries what the Admin API answers with, not the derivatives.
        let first = try #require(try store.listServedAssets(ServedAssetQuery(cloud: "demo", ascending: true, limit: 1)).assets.first)
        #expect(first.publicID == "a/1" && first.tags == ["cat", "t0"] && first.context == ["alt": "x0", "k": "v"] && first.derivatives.isEmpty)
    }

    @Test(arguments: JobStoreKind.runnable)
    func tagsContextAndPublicIDsSelect(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        let ordered = { (filter: ServedAssetQuery.Filter) throws -> [String] in
            Self.byBytes(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: filter, limit: 2)))
        }
        #expect(try ordered(.tag("cat")) == Self.byBytes(["a/1", "a/B", "a_x", "B/1"]))
        #expect(try ordered(.tag("t5")) == ["a/é"])
        #expect(try ordered(.tag("ca")).isEmpty)
        #expect(try ordered(.context(key: "k", value: nil)) == Self.byBytes(["a/1", "a/z", "b/2"]))
        #expect(try ordered(.context(key: "alt", value: "x4")) == ["a/z"])
        #expect(try ordered(.context(key: "alt", value: "x")) == [])
        #expect(try ordered(.publicIDs(["b/2", "a/10", "missing", "B/1"])) == Self.byBytes(["b/2", "a/10", "B/1"]))
    }

    @Test(arguments: JobStoreKind.runnable)
    func tagsAndContextChange(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        #expect(try store.changeTags(.add(["new", "cat"]), cloud: "demo", publicIDs: ["a/1", "missing", "a/2"]) == ["a/1", "a/2"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1")?.tags == ["cat", "t0", "new"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/2")?.tags == ["t2", "new", "cat"])
        #expect(try store.changeTags(.remove(["cat"]), cloud: "demo", publicIDs: ["a/1"]) == ["a/1"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1")?.tags == ["t0", "new"])
        _ = try store.changeTags(.replace(["only", "only"]), cloud: "demo", publicIDs: ["a/1"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1")?.tags == ["only"])
        _ = try store.changeTags(.removeAll, cloud: "demo", publicIDs: ["a/1"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1")?.tags == [])
        // Another cloud's asset of the same id is untouched.
        #expect(try store.changeTags(.add(["x"]), cloud: "other", publicIDs: ["a/2"]).isEmpty)

        #expect(try store.changeContext(.add(["alt": "new", "caption": "c|d"]), cloud: "demo", publicIDs: ["a/1", "a/10"]) == ["a/1", "a/10"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1")?.context == ["alt": "new", "k": "v", "caption": "c|d"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/10")?.context == ["alt": "new", "caption": "c|d"])
        _ = try store.changeContext(.remove(["k", "absent"]), cloud: "demo", publicIDs: ["a/1"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1")?.context == ["alt": "new", "caption": "c|d"])
        _ = try store.changeContext(.removeAll, cloud: "demo", publicIDs: ["a/1"])
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1")?.context == [:])
        // The listing finds what the change wrote.
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .context(key: "caption", value: "c|d"))) == ["a/10"])
        #expect(Set(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .tag("new")))) == ["a/2"])
    }

    @Test(arguments: JobStoreKind.runnable)
    func theTagsInUsePageInCodePointOrder(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        try Self.fill(store, cloud: "other")
        _ = try store.changeTags(.add(["Zebra", "ünder"]), cloud: "demo", publicIDs: ["a/1"])
        var tags: [String] = [], after: String?
        repeat {
            let page = try store.servedTags(cloud: "demo", prefix: nil, limit: 4, after: after)
            tags += page.tags
            after = page.next
        } while after != nil
        let expected = Self.byBytes(["cat", "Zebra", "ünder"] + (0..<12).map { "t\($0)" })
        #expect(tags == expected)
        #expect(try store.servedTags(cloud: "demo", prefix: "t1", limit: 10, after: nil).tags == ["t1", "t10", "t11"])
        #expect(try store.servedTags(cloud: "nobody", prefix: nil, limit: 10, after: nil).tags.isEmpty)
    }

    /// Search expressions select in SQL what they select in memory (`SearchExpression.matches`),
    /// and page like any listing.
    @Test(arguments: JobStoreKind.runnable)
    func searchExpressionsSelectInSQLWhatTheySelectInMemory(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        try Self.fill(store, cloud: "other")
        _ = try store.changeContext(.add(["caption": "blue sky"]), cloud: "demo", publicIDs: ["a/2", "b/1"])
        let recorded = try Self.ids.map { id in try #require(try store.servedAsset(cloud: "demo", publicID: id)) }
        let now = Date(timeIntervalSince1970: 1_700_000_000.5)
        let expressions = [
            "", "tags:cat", "tags=t5", "tags:t1*", "tags:*", "-tags:cat", "NOT tags:cat AND folder:a", "folder:a/*", "folder=\"\"",
            "folder:b", "filename:1", "filename:B*", "public_id:a/*", "public_id:\"c%d\"", "public_id:c_*", "format:jpg", "format:png",
            "context.alt:*", "context.alt=x4", "context.alt:x*", "context.caption:\"blue sky\"", "context.missing:*",
            "bytes>99", "bytes<=100", "bytes:[1 TO 99]", "bytes:[99 TO 1]", "width:10 AND height:{9 TO 11}", "pixels>=100", "pixels>100",
            "created_at>\"2023-11-14T22:13:20Z\"", "created_at<=\"2023-11-14T22:13:20Z\"", "created_at:{\"2023-11-14T22:13:19Z\" TO \"2023-11-14T22:13:21Z\"}", "uploaded_at>1d",
            "cat OR t7", "a/10 OR 2", "(tags:cat OR folder:b) AND NOT public_id:B*", "resource_type:image type:upload", "resource_type:video",
        ]
        for text in expressions {
            let expression = try SearchExpression.parse(text, now: now)
            let expected = Self.byBytes(recorded.filter { expression.matches($0) }.map(\.publicID))
            let query = ServedAssetQuery(cloud: "demo", filter: .search(expression), order: .publicID, ascending: true, limit: 4)
            let found = try Self.all(store, query)
            #expect(found == expected, "\(text)")
            // The count (Search's total_count and its aggregation by format) agrees, in one statement.
            let counts = try store.countServedAssets(query)
            #expect(counts.values.reduce(0, +) == expected.count && counts.values.allSatisfy { $0 > 0 }, "\(text): \(counts)")
        }
        // A selective expression found something, so the comparison above compared something.
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .search(try SearchExpression.parse("tags:cat")))).count == 4)
    }

    /// Deleting forgets the rows (the asset, its derivatives) of the ids found, in the other
    /// cloud nothing; a derivative recorded afterwards for the deleted version records nothing;
    /// an upload of the same id afterwards starts afresh.
    @Test(arguments: JobStoreKind.runnable)
    func deletingForgetsTheRowsAndOnlyThose(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        try Self.fill(store, cloud: "other")
        let derivative = ServedDerivative(identity: "i1", transformation: "w_10", format: "jpg", key: "d/1", width: 10, height: 10, bytes: 5,
                                          sha256: "s", jobID: 1)
        #expect(try store.recordDerivatives([derivative], cloud: "demo", publicID: "a/1", version: 1))
        let deletion = try store.deleteServedAssets(cloud: "demo", publicIDs: ["b/2", "missing", "a/1"], scope: .whole, store: "s")
        #expect(deletion.found == ["b/2", "a/1"])
        #expect(deletion.derived == ["a/1": 1, "b/2": 0])
        #expect(deletion.keys == ["d/1", "o/0", "o/8"], "the originals and the derivative the rows named")
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1") == nil && store.servedAsset(cloud: "demo", publicID: "b/2") == nil)
        #expect(try store.servedAsset(cloud: "other", publicID: "a/1") != nil, "the other cloud's a/1 is kept")
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .all, limit: 5)).count == Self.ids.count - 2)
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("a/1"), order: .publicID, ascending: true)) == ["a/10"])
        #expect(try !store.recordDerivatives([derivative], cloud: "demo", publicID: "a/1", version: 1), "a late job records nothing")
        #expect(try store.deleteServedAssets(cloud: "demo", publicIDs: ["a/1"], scope: .whole, store: "s") == ServedDeletion(), "deleted once")
        let again = ServedAsset(cloud: "demo", publicID: "a/1", version: 2, format: "png", width: 1, height: 1, bytes: 1, sha256: "cd",
                                originalKey: "o/new", createdAt: Date(timeIntervalSince1970: 1_800_000_000))
        _ = try store.recordUpload(again, overwrite: false, eager: nil)
        let read = try #require(try store.servedAsset(cloud: "demo", publicID: "a/1"))
        #expect(read.format == "png" && read.derivatives.isEmpty && read.tags.isEmpty, "\(read)")
    }

    /// Deleting only derivatives (`keep_original`: all of them; `transformations`: some) keeps
    /// the asset and drops the eager jobs that would record a deleted output again.
    @Test(arguments: JobStoreKind.runnable)
    func deletingDerivativesKeepsTheAsset(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        let recorded = try store.recordUpload(ServedAssetsConformanceTests.asset("p"), overwrite: false, eager: ServedAssetsConformanceTests.eager())
        let job = try #require(recorded.eagerJob)
        let derivatives = ["id0", "id1", "x"].map { ServedAssetsConformanceTests.derivative($0, job: job) }
        #expect(try store.recordDerivatives(derivatives, cloud: "demo", publicID: "p", version: recorded.asset.version))
        let some = try store.deleteServedAssets(cloud: "demo", publicIDs: ["p"], scope: .derivatives(identities: ["x", "nothing"]), store: "s")
        #expect(some == ServedDeletion(found: ["p"], derived: ["p": 1], keys: ["d/x.webp"]))
        var read = try #require(try store.servedAsset(cloud: "demo", publicID: "p"))
        #expect(read.derivatives.keys.sorted() == ["id0", "id1"] && read.eagerJobs.count == 1, "x is no eager output: the job stays")
        let one = try store.deleteServedAssets(cloud: "demo", publicIDs: ["p"], scope: .derivatives(identities: ["id1"]), store: "s")
        #expect(one.keys == ["d/id1.webp"])
        read = try #require(try store.servedAsset(cloud: "demo", publicID: "p"))
        #expect(read.derivatives.keys.sorted() == ["id0"] && read.eagerJobs.isEmpty, "the job that made id1 is dropped")
        let all = try store.deleteServedAssets(cloud: "demo", publicIDs: ["p", "q"], scope: .derivatives(identities: nil), store: "s")
        #expect(all == ServedDeletion(found: ["p"], derived: ["p": 1], keys: ["d/id0.webp"]))
        read = try #require(try store.servedAsset(cloud: "demo", publicID: "p"))
        #expect(read.derivatives.isEmpty && read.originalKey == recorded.asset.originalKey && read.tags == ["one", "two"])
    }

    /// An object leaves the store only when no row names it: an original shared with another
    /// cloud's asset and a derivative another asset also names stay, the rest go; a release is
    /// noted first, so a process killed before it leaves the key to the ledger's sweep.
    @Test(arguments: JobStoreKind.runnable)
    func releasingDeletesOnlyWhatNothingNames(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        try Self.fill(store, cloud: "other")
        let shared = ServedDerivative(identity: "i", transformation: "w_10", format: "jpg", key: "d/shared", width: 1, height: 1, bytes: 1, sha256: "s", jobID: 1)
        var own = shared
        own.identity = "j"
        own.key = "d/own"
        #expect(try store.recordDerivatives([shared, own], cloud: "demo", publicID: "a/1", version: 1))
        #expect(try store.recordDerivatives([shared], cloud: "demo", publicID: "a/2", version: 1))
        let deletion = try store.deleteServedAssets(cloud: "demo", publicIDs: ["a/1"], scope: .whole, store: "s")
        #expect(deletion.keys == ["d/own", "d/shared", "o/0"])
        if let ledger = store as? any WriteLedger {
            #expect(try ledger.unrecordedWrites(store: "s", notedBefore: Date().addingTimeInterval(60), limit: 10).sorted() == deletion.keys,
                    "noted for the sweep until released")
        }
        var deleted: [String] = []
        for key in deletion.keys {
            let released = try store.releaseServedObject(key, store: "s") { key throws(DeriveError) in deleted.append(key) }
            #expect(released == (key == "d/own"), "\(key)")
        }
        #expect(deleted == ["d/own"], "o/0 is the other cloud's a/1's original too; d/shared is a/2's")
        if let ledger = store as? any WriteLedger {
            #expect(try ledger.unrecordedWrites(store: "s", notedBefore: Date().addingTimeInterval(60), limit: 10).isEmpty, "the notes are forgotten")
        }
        // A store that refuses a delete: the release fails, and the key is released later.
        _ = try store.deleteServedAssets(cloud: "other", publicIDs: ["a/1"], scope: .whole, store: "s")
        #expect(throws: DeriveError.self) {
            try store.releaseServedObject("o/0", store: "s") { _ throws(DeriveError) in throw DeriveError(.storageFailed, "refused") }
        }
        #expect(try store.releaseServedObject("o/0", store: "s") { _ throws(DeriveError) in })
    }

    /// A rename moves the row, its derivatives and notifications to the new id at the same
    /// version; a late job of the old id records nothing; a taken id needs overwrite, which
    /// deletes the asset there (its keys returned for release).
    @Test(arguments: JobStoreKind.runnable)
    func renamingMovesTheAssetWhole(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        let derivative = ServedDerivative(identity: "i", transformation: "w_10", format: "jpg", key: "d/1", width: 1, height: 1, bytes: 1, sha256: "s", jobID: 1)
        #expect(try store.recordDerivatives([derivative], cloud: "demo", publicID: "a/1", version: 1))
        try store.recordNotification(NotificationRecord(cloud: "demo", publicID: "a/1", url: "http://h/", type: "upload", status: 200, attempts: 1,
                                                        error: nil, sentAt: Date(timeIntervalSince1970: 1_700_000_000)), cloud: "demo", publicID: "a/1")
        let before = try #require(try store.servedAsset(cloud: "demo", publicID: "a/1"))
        #expect(try store.renameServedAsset(cloud: "demo", from: "a/1", to: "n/1", overwrite: false, store: "s") == .renamed(replaced: ServedDeletion()))
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/1") == nil)
        let after = try #require(try store.servedAsset(cloud: "demo", publicID: "n/1"))
        #expect(after.version == before.version && after.originalKey == before.originalKey && after.tags == before.tags
                && after.createdAt == before.createdAt && after.derivatives["i"]?.key == "d/1" && after.notifications.count == 1, "\(after)")
        #expect(try !store.recordDerivatives([derivative], cloud: "demo", publicID: "a/1", version: 1), "a late job of the old id records nothing")
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .prefix("n/"), order: .publicID, ascending: true)) == ["n/1"])
        #expect(try store.renameServedAsset(cloud: "demo", from: "a/1", to: "x", overwrite: true, store: "s") == .notFound)
        #expect(try store.renameServedAsset(cloud: "demo", from: "n/1", to: "a/2", overwrite: false, store: "s") == .targetExists)
        #expect(try store.servedAsset(cloud: "demo", publicID: "n/1") != nil, "a refused rename changes nothing")
        let over = try store.renameServedAsset(cloud: "demo", from: "n/1", to: "a/2", overwrite: true, store: "s")
        #expect(over == .renamed(replaced: ServedDeletion(found: ["a/2"], derived: ["a/2": 0], keys: ["o/2"])), "\(over)")
        #expect(try store.servedAsset(cloud: "demo", publicID: "a/2")?.originalKey == "o/0")
        #expect(try Self.all(store, ServedAssetQuery(cloud: "demo", filter: .all)).count == Self.ids.count - 1)
    }

    /// Folders are the prefixes of public ids, listed by name in code-point order and paged;
    /// usage counts the cloud's rows and bytes.
    @Test(arguments: JobStoreKind.runnable)
    func foldersAndUsageComeFromThePublicIDs(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        try Self.fill(store)
        try Self.fill(store, cloud: "other")
        #expect(try store.servedFolders(cloud: "demo", under: "", limit: 10, after: nil).folders == ["B", "a", "b"])
        #expect(try store.servedFolders(cloud: "demo", under: "", limit: 2, after: nil) == (["B", "a"], "a"))
        #expect(try store.servedFolders(cloud: "demo", under: "", limit: 2, after: "a") == (["b"], nil))
        #expect(try store.servedFolders(cloud: "demo", under: "a", limit: 10, after: nil).folders == [], "a/ holds ids, no folders")
        let derivative = ServedDerivative(identity: "i", transformation: "w_10", format: "jpg", key: "d/1", width: 1, height: 1, bytes: 7, sha256: "s", jobID: 1)
        #expect(try store.recordDerivatives([derivative], cloud: "demo", publicID: "a/1", version: 1))
        #expect(try store.servedUsage(cloud: "demo") == ServedUsage(assets: Self.ids.count, assetBytes: 100 * Self.ids.count, derivatives: 1, derivativeBytes: 7))
        #expect(try store.servedUsage(cloud: "none") == ServedUsage(assets: 0, assetBytes: 0, derivatives: 0, derivativeBytes: 0))
    }

    /// An eager job added to an asset already recorded (`explicit`) is queued with it, and only
    /// for the version given.
    @Test(arguments: JobStoreKind.runnable)
    func anEagerJobIsAddedToTheAssetsVersion(kind: JobStoreKind) throws {
        let under = try Under(kind), store = under.store
        let recorded = try store.recordUpload(ServedAssetsConformanceTests.asset("p"), overwrite: false, eager: ServedAssetsConformanceTests.eager())
        let (job, outputs) = ServedAssetsConformanceTests.eager(1)
        #expect(try store.addEagerJob(cloud: "demo", publicID: "p", version: recorded.asset.version + 1, job: job, outputs: outputs) == nil)
        #expect(try store.addEagerJob(cloud: "demo", publicID: "missing", version: recorded.asset.version, job: job, outputs: outputs) == nil)
        let id = try #require(try store.addEagerJob(cloud: "demo", publicID: "p", version: recorded.asset.version, job: job, outputs: outputs))
        let read = try #require(try store.servedAsset(cloud: "demo", publicID: "p"))
        #expect(read.eagerJobs.map(\.jobID) == [try #require(recorded.eagerJob), id] && read.eagerJobs.last?.outputs == outputs)
        #expect(try store.job(id) != nil, "queued")
    }

    @Test func cursorsRoundTripAndRefuseWhatDeriveDidNotWrite() {
        let cursor = ServedAssetCursor(order: .createdAt, createdAt: 1_700_000_000_123_457, publicID: "a/é:b c")
        #expect(ServedAssetCursor(token: cursor.token) == cursor)
        #expect(cursor.token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        for bad in ["", "!!", "a==", String(repeating: "A", count: 3000), Data("x:1:a".utf8).base64EncodedString(),
                    Data("c:one:a".utf8).base64EncodedString(), Data("p:0:".utf8).base64EncodedString()] {
            #expect(ServedAssetCursor(token: bad) == nil, "\(bad)")
        }
    }
}
