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
}
