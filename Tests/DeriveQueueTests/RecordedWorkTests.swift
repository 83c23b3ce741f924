import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// What a worker reads back before decoding, on both stores: the asset row and the current
/// derivative rows of the outputs it asks about, decoded by column name into the records a
/// completion wrote, whole.
@Suite struct RecordedWorkTests {
    static let sha = String(repeating: "a", count: 64)

    static func record(_ outputs: [(name: String, identity: String, width: Int?)], presetVersion: Int? = nil) -> DerivationRecord {
        let asset = AssetRecord(sha256: sha, sourceURL: "https://example.com/p.jpg", bytes: 1234, format: "jpeg", width: 640, height: 480,
                                pages: 1, hasAlpha: false, orientation: 6, colorSpace: "srgb", iccDescription: "sRGB IEC61966-2.1",
                                exif: ["make": "Kodak", "takenAt": "2021-05-01T10:00:00"], hasLocation: true, perceptualHash: "00ff00ff00ff00ff")
        let derivatives = outputs.map { output in
            DerivativeRecord(outputName: output.name, breakpointWidth: output.width, chain: .object(["chain": .string("c_scale,w_20")]),
                             chainHash: output.identity, presetName: presetVersion == nil ? nil : "cards", presetVersion: presetVersion,
                             storageKey: "\(sha)/\(output.name)\(output.width.map { "-\($0)w" } ?? "")-\(output.identity).webp",
                             url: "https://cdn.example.com/\(output.name)", format: "webp", width: output.width ?? 20, height: 15, bytes: 321,
                             sha256: String(repeating: "c", count: 64), quality: nil, frames: 1, hasAlpha: true, blurhash: "LEHV6nWB2yk8",
                             dominantColor: "#102030", timings: .object(["apply": .decimal(1.5), "encode": .decimal(2.25)]))
        }
        return DerivationRecord(asset: asset, derivatives: derivatives)
    }

    func complete(_ queue: TestQueue, _ record: DerivationRecord) throws {
        let id = try #require(try queue.store.submit([NewJob(payload: .object(["n": .string(UUID().uuidString)]))]).first).id
        let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try queue.store.complete([Completion(run: run, record: record)]) == [id])
    }

    @Test(arguments: StoreKind.runnable)
    func theRowsOfTheOutputsAskedAboutComeBackWhole(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        let asked = [OutputIdentity(name: "thumb", identity: "t1"), OutputIdentity(name: "set", identity: "s1")]
        #expect(try queue.store.recorded(sourceSHA256: Self.sha, outputs: asked) == nil, "content never recorded")

        let written = Self.record([("thumb", "t1", nil), ("set", "s1", 640), ("set", "s1", 320), ("other", "o1", nil), ("thumb", "t0", nil)])
        try complete(queue, written)
        let recorded = try #require(try queue.store.recorded(sourceSHA256: Self.sha, outputs: asked))
        #expect(recorded.asset == written.asset)
        #expect(recorded.derivatives(of: asked[0]) == [written.derivatives[0]])
        #expect(recorded.derivatives(of: asked[1]) == [written.derivatives[2], written.derivatives[1]], "a breakpoint set, narrowest first")
        #expect(recorded.derivatives.count == 3, "only the outputs asked about, by name and identity")
        #expect(try queue.store.recorded(sourceSHA256: String(repeating: "b", count: 64), outputs: asked) == nil)
    }

    /// The tags and context a job gave its asset come back whole; a later job that names none
    /// keeps them, one that names some replaces them (issue 30).
    @Test(arguments: StoreKind.runnable)
    func tagsAndContextAreKeptOnTheAsset(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        let asked = [OutputIdentity(name: "thumb", identity: "t1")]
        var tagged = Self.record([("thumb", "t1", nil)])
        tagged.asset.tags = ["sale", "in stock"]
        tagged.asset.context = ["productType": "shoes", "note": "ünïcode = fine"]
        try complete(queue, tagged)
        #expect(try #require(try queue.store.recorded(sourceSHA256: Self.sha, outputs: asked)).asset == tagged.asset)

        try complete(queue, Self.record([("thumb", "t1", nil)]))
        #expect(try #require(try queue.store.recorded(sourceSHA256: Self.sha, outputs: asked)).asset == tagged.asset)

        var retagged = Self.record([("thumb", "t1", nil)])
        retagged.asset.tags = ["archive"]
        try complete(queue, retagged)
        let asset = try #require(try queue.store.recorded(sourceSHA256: Self.sha, outputs: asked)).asset
        #expect(asset.tags == ["archive"])
        #expect(asset.context == tagged.asset.context)
        #expect(asset.facts == AssetFacts(tags: ["archive"], context: tagged.asset.context!))
    }

    /// Reprocessing an asset carries the tags and context it has, so its outputs take the same
    /// branches (issue 30).
    @Test(arguments: StoreKind.runnable)
    func reprocessJobsCarryTheAssetsTagsAndContext(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        var tagged = Self.record([("thumb", "t1", nil)], presetVersion: 1)
        tagged.asset.tags = ["sale"]
        tagged.asset.context = ["kind": "shoes"]
        try complete(queue, tagged)
        let summary = try Reprocessor(database: queue.store).enqueue(ReprocessPlan(preset: "cards"))
        #expect(summary.enqueued == 1)
        let job = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first)
        #expect(job.payload["tags"] == .array([.string("sale")]) && job.payload["context"] == .object(["kind": .string("shoes")]), "\(job.payload)")
        #expect(try JSONChainDecoder().decodeJob(job.payload).asset == AssetFacts(tags: ["sale"], context: ["kind": "shoes"]))
    }

    /// A newer preset version supersedes the older rows it does not rewrite: those are not
    /// offered for reuse (they may be deleted at any moment), the rewritten ones are.
    @Test(arguments: StoreKind.runnable)
    func supersededRowsAreNotOffered(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        try complete(queue, Self.record([("a", "x1", nil), ("b", "y1", nil)], presetVersion: 1))
        try complete(queue, Self.record([("a", "x1", nil), ("b", "y2", nil)], presetVersion: 2))
        let recorded = try #require(try queue.store.recorded(sourceSHA256: Self.sha, outputs: [
            OutputIdentity(name: "a", identity: "x1"), OutputIdentity(name: "b", identity: "y1"), OutputIdentity(name: "b", identity: "y2"),
        ]))
        #expect(recorded.derivatives.map(\.chainHash).sorted() == ["x1", "y2"])
        #expect(recorded.derivatives.allSatisfy { $0.presetVersion == 2 })
    }
}

/// The rows as both stores spell them back: column names, SQLite's 0 and 1 for booleans, and
/// one strictness for a missing or mistyped column.
@Suite struct RecordRowTests {
    @Test func aRecordReadsBackFromItsOwnRow() throws {
        let record = RecordedWorkTests.record([("set", "s1", 640)])
        #expect(try AssetRecord(row: record.asset.row) == record.asset)
        #expect(try DerivativeRecord(row: record.derivatives[0].row) == record.derivatives[0])
    }

    @Test func sqliteBooleansAndExtraColumnsRead() throws {
        guard case .object(var members) = RecordedWorkTests.record([("a", "x", nil)]).derivatives[0].row else {
            Issue.record("a row is an object")
            throw Missing()
        }
        members = members.map { $0.key == "has_alpha" ? JSONMember(key: "has_alpha", value: .int(1)) : $0 }
        members.append(JSONMember(key: "superseded_at", value: .null))
        #expect(try DerivativeRecord(row: .object(members)).hasAlpha)
    }

    @Test func aMissingOrMistypedColumnIsAnError() throws {
        guard case .object(let members) = RecordedWorkTests.record([("a", "x", nil)]).derivatives[0].row else {
            Issue.record("a row is an object")
            throw Missing()
        }
        for (column, value) in [("width", JSONValue.string("20")), ("storage_key", .null), ("has_alpha", .int(2))] {
            let row = JSONValue.object(members.map { $0.key == column ? JSONMember(key: column, value: value) : $0 })
            let error = #expect(throws: DeriveError.self) { try DerivativeRecord(row: row) }
            #expect(error?.detail.contains("derivatives.\(column)") == true, "\(String(describing: error))")
        }
        let missing = JSONValue.object(members.filter { $0.key != "sha256" })
        #expect(throws: DeriveError.self) { try DerivativeRecord(row: missing) }
    }
}
