import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveTestSupport
import DeriveVips
import DeriveWorker
import Foundation
import Testing

/// `d_<image>` in the pipeline: a source that does not exist is replaced by the default image,
/// found as overlays are, and the chain runs on it; a source that exists is used as always; a
/// job without a default still fails, saying the source is missing.
@Suite struct DefaultImageTests {
    static func pipeline(overlays folder: URL, store: URL) throws -> JobPipeline {
        let engine = try VipsEngine()
        let fetcher = LocalFirstFetcher(fetcher: try CurlFetcher(settings: FetchSettings()), maxBytes: 64 << 20)
        return JobPipeline(engine: engine, planner: engine.planner, fetcher: fetcher, overlays: FileOverlayLoader(root: folder),
                           store: FileAssetStore(root: store), naming: .template(.default), catalog: InMemoryPresetCatalog())
    }

    static func job(_ chain: String, source: String) throws -> ResolvedJob {
        try JobResolver().resolve(JobSpec(source: source, outputs: [TransformationInput.output(named: "t", transformation: chain)]))
    }

    @Test func aMissingSourceIsMadeFromTheDefaultImage() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-default-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("overlays"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(contentsOf: Paths.fixture("photos/coffee_noexif.png")).write(to: folder.appendingPathComponent("overlays/avatar.png"))
        let pipeline = try Self.pipeline(overlays: folder.appendingPathComponent("overlays"), store: folder.appendingPathComponent("store"))
        let missing = folder.appendingPathComponent("no-such-photo.jpg").path
        let photo = Paths.fixture("photos/grace_hopper_noexif.jpg").path

        // Missing: the default, resized by the chain (the coffee photo is landscape).
        let fallback = try pipeline.run(try Self.job("c_scale,w_60/d_avatar.png", source: missing), source: missing).report
        #expect(fallback.result.source.location.hasSuffix("overlays/avatar.png"))
        let made = try #require(fallback.result.outputs.first)
        #expect(made.metadata.width == 60 && made.metadata.height < 60)

        // Present: the source, as without d_ (Grace Hopper is portrait).
        let present = try pipeline.run(try Self.job("c_scale,w_60/d_avatar.png", source: photo), source: photo).report
        let plain = try pipeline.run(try Self.job("c_scale,w_60", source: photo), source: photo).report
        #expect(present.result.source.location == plain.result.source.location)
        #expect(present.result.outputs.first?.metadata.height == plain.result.outputs.first?.metadata.height)
        #expect((present.result.outputs.first?.metadata.height ?? 0) > 60)

        // Missing without a default: refused, marked missing; with a default that is missing
        // too, the error names both.
        do {
            _ = try pipeline.run(try Self.job("c_scale,w_60", source: missing), source: missing)
            Issue.record("a missing source without d_ was derived")
        } catch {
            let e = try #require(error as? DeriveError)
            #expect(e.code == .sourceRefused && e.sourceMissing && e.detail.contains("no such file"))
        }
        do {
            _ = try pipeline.run(try Self.job("c_scale,w_60/d_nothing.png", source: missing), source: missing)
            Issue.record("a missing default image was derived")
        } catch {
            let e = try #require(error as? DeriveError)
            #expect(e.code == .sourceRefused && e.detail.contains("no such file") && e.detail.contains("d_nothing.png"), "\(e)")
        }
    }
}
