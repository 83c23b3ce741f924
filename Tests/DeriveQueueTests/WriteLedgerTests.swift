import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Synchronization
import Testing

/// The write ledger on both stores: what a run notes before writing, what recording forgets,
/// what the sweep may remove (only keys of finished jobs that no row and no unfinished job
/// names) and that the store's delete happens only then.
@Suite struct WriteLedgerTests {
    @Test(arguments: StoreKind.runnable)
    func onlyWritesNoRowAndNoRunningJobNamesAreRemoved(kind: StoreKind) throws {
        let queue = try TestQueue(kind)
        let store = "s3://bucket/prefix/"
        let ids = try queue.store.submit((0..<3).map { NewJob(payload: .object(["n": .int($0)])) }).map(\.id)
        let runs = try queue.store.claim(queues: ["default"], limit: 3, owner: "w", lease: 30).map(\.run).sorted { $0.id < $1.id }

        // Job 0's first run wrote old/a and old/b, then (a retry after the source changed)
        // new/a, and recorded new/a. Job 1 is still running and has noted shared/x, which job 2
        // (finished, recorded nothing) noted too. Another store's note is not this store's.
        try queue.store.noteWrites(["old/a", "old/b"], store: store, job: ids[0])
        try queue.store.noteWrites(["new/a"], store: store, job: ids[0])
        try queue.store.noteWrites(["shared/x"], store: store, job: ids[1])
        try queue.store.noteWrites(["shared/x", "lone/y"], store: store, job: ids[2])
        try queue.store.noteWrites(["old/a"], store: "folder /elsewhere", job: ids[0])
        let cutoff = Date().addingTimeInterval(60)
        #expect(try queue.store.unrecordedWrites(store: store, notedBefore: cutoff, limit: 100).isEmpty, "no job has finished")

        #expect(try queue.store.complete([Completion(run: runs[0], record: Self.record(keys: ["new/a"]))]) == [ids[0]])
        #expect(try queue.store.complete([Completion(run: runs[2])]) == [ids[2]])
        #expect(Set(try queue.store.unrecordedWrites(store: store, notedBefore: cutoff, limit: 100)) == ["old/a", "old/b", "shared/x", "lone/y"],
                "recording new/a forgot its note; job 1 is running")
        #expect(try queue.store.unrecordedWrites(store: store, notedBefore: Date().addingTimeInterval(-60), limit: 100).isEmpty,
                "nothing was noted before the cutoff")

        let deleted = Mutex<[String]>([])
        func remove(_ key: String) throws -> Bool {
            try queue.store.removeUnrecordedWrite(key, store: store) { key throws(DeriveError) in deleted.withLock { $0.append(key) } }
        }
        #expect(try remove("old/a") && remove("lone/y"))
        #expect(try !remove("shared/x"), "job 1 may still write it")
        #expect(deleted.withLock { $0 } == ["old/a", "lone/y"])
        // A key a derivative row names keeps its object (another job recorded the same work).
        let other = try #require(try queue.store.submit([NewJob(payload: .object(["n": .int(9)]))]).first).id
        let otherRun = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(try queue.store.complete([Completion(run: otherRun, record: Self.record(keys: ["old/b"], sha: "b"))]) == [other])
        #expect(try !remove("old/b"))
        #expect(Set(try queue.store.unrecordedWrites(store: store, notedBefore: cutoff, limit: 100)) == ["shared/x"], "old/b's note is forgotten")

        // A delete the store refuses keeps the note, and the error is the store's.
        #expect(try queue.store.complete([Completion(run: runs[1])]) == [ids[1]])
        #expect(throws: DeriveError.self) {
            try queue.store.removeUnrecordedWrite("shared/x", store: store) { _ throws(DeriveError) in
                throw DeriveError(.storageFailed, "no")
            }
        }
        #expect(try queue.store.unrecordedWrites(store: store, notedBefore: cutoff, limit: 100) == ["shared/x"])
        #expect(try remove("shared/x"))
        #expect(try queue.store.unrecordedWrites(store: store, notedBefore: cutoff, limit: 100).isEmpty)
        #expect(try queue.store.unrecordedWrites(store: "folder /elsewhere", notedBefore: cutoff, limit: 100) == ["old/a"])
    }

    /// A minimal record of outputs stored under `keys`.
    static func record(keys: [String], sha: String = "a") -> DerivationRecord {
        let asset = AssetRecord(sha256: String(repeating: sha, count: 64), sourceURL: "https://example.com/p.jpg", bytes: 10, format: "jpeg",
                                width: 4, height: 4, pages: 1, hasAlpha: false, orientation: 1, colorSpace: nil, iccDescription: nil,
                                exif: [:], hasLocation: false, perceptualHash: nil)
        let derivatives = keys.enumerated().map { index, key in
            DerivativeRecord(outputName: "o\(index)", breakpointWidth: nil, chain: .object([:]), chainHash: "h", presetName: nil,
                             presetVersion: nil, storageKey: key, url: "s3://bucket/prefix/" + key, format: "webp", width: 2, height: 2,
                             bytes: 5, sha256: String(repeating: "c", count: 64), quality: 80, frames: 1, hasAlpha: false, blurhash: nil,
                             dominantColor: nil, timings: .object([:]))
        }
        return DerivationRecord(asset: asset, derivatives: derivatives)
    }
}
