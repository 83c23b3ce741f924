import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import DeriveDigest
import DeriveVips
import Foundation
import Testing

/// `pg_name:` and `pg_embedded:` in the pipeline (issue 30): a PSD file as the job's source, the
/// selection made before the header is read, the outputs stored; the recorded source hash is the
/// document's.
@Suite struct PhotoshopPipelineTests {
    @Test func aJobIsMadeFromTheSelectedPartOfTheDocument() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-psd-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipeline = try DefaultImageTests.pipeline(overlays: folder.appendingPathComponent("overlays"), store: folder.appendingPathComponent("store"))
        let psd = Paths.repository.appendingPathComponent("Tests/Fixtures/psd/placedLayer.psd").path
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: psd)))

        let embedded = try pipeline.run(try DefaultImageTests.job("pg_embedded:3/c_scale,w_32/f_png", source: psd), source: psd).report
        #expect(embedded.result.outputs.first?.metadata.width == 32 && embedded.result.outputs.first?.metadata.height == 32)
        #expect(embedded.result.source.sha256 == ContentHash.sha256(bytes))

        let layers = try pipeline.run(try DefaultImageTests.job("pg_name:linked-psd/f_png", source: psd), source: psd).report
        let made = try #require(layers.result.outputs.first)
        #expect(made.metadata.width == 256 && made.metadata.height == 256 && made.metadata.hasAlpha)

        // Without a selection, the PSD goes to libvips, whose only PSD reader (ImageMagick) is blocked.
        let error = #expect(throws: DeriveError.self) { try pipeline.run(try DefaultImageTests.job("c_scale,w_32", source: psd), source: psd) }
        #expect(error?.code == .blockedLoader, "\(String(describing: error))")
    }

    /// Each selection of a document is recorded as an asset of its own (under the hash of the
    /// document's hash and the selection), so reusing one selection's outputs reports its own
    /// facts, not those of the selection that ran last (review 3, finding 7). Through the
    /// pipeline, recording in SQLite.
    @Test func aSelectionsRecordIsItsOwn() throws {
        let queue = try TestQueue(.sqlite)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-psd-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var pipeline = try DefaultImageTests.pipeline(overlays: folder.appendingPathComponent("overlays"), store: folder.appendingPathComponent("store"))
        pipeline.recordedWork = queue.store
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let psd = folder.appendingPathComponent("document.psd").path
        let bytes = try Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/psd/2layers.psd"))
        try bytes.write(to: URL(fileURLWithPath: psd))
        let documentHash = ContentHash.sha256([UInt8](bytes))
        func run(_ chain: String) throws -> JobPipeline.Outcome {
            let outcome = try pipeline.run(try DefaultImageTests.job(chain, source: psd), source: psd)
            let id = try #require(try queue.store.submit([NewJob(payload: .object(["n": .string(UUID().uuidString)]))]).first).id
            let run = try #require(try queue.store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
            #expect(try queue.store.complete([Completion(run: run, record: outcome.record)]) == [id])
            return outcome
        }
        let background = try run("pg_name:Фон/f_png")
        let shape = try run("pg_name:Слой/f_png")
        #expect(background.report.decoded && shape.report.decoded)
        #expect(background.record.asset.sha256 != shape.record.asset.sha256)
        #expect(background.record.asset.sha256 != documentHash && shape.record.asset.sha256 != documentHash)
        #expect(background.report.result.source.sha256 == documentHash)
        #expect(background.report.result.source.perceptualHash != shape.report.result.source.perceptualHash)

        // Every output recorded: reused, with the background's own facts.
        let again = try run("pg_name:Фон/f_png")
        #expect(!again.report.decoded)
        #expect(again.report.result.source.perceptualHash == background.report.result.source.perceptualHash)
        #expect(again.report.result.source.sha256 == documentHash)
        #expect(again.report.locations == background.report.locations)
        #expect(again.record.asset.sha256 == background.record.asset.sha256)

        // The source's row names the selection's asset; checking the document, the same bytes
        // are unchanged (not a changed document to derive again at every check).
        let check = try SourceCheck(database: queue.store, fetcher: pipeline.fetcher).run(psd, queue: "default", priority: 0)
        #expect(check["outcome"] == .string("unchanged"), "\(check)")
        try (bytes + [0]).write(to: URL(fileURLWithPath: psd))
        let changed = try SourceCheck(database: queue.store, fetcher: pipeline.fetcher).run(psd, queue: "default", priority: 0)
        #expect(changed["outcome"] == .string("changed"), "\(changed)")
    }
}
