import DeriveCurl
import DeriveJobs
import DeriveLanguage
import DeriveTestSupport
import DeriveVips
import Foundation
import Synchronization
import Testing

/// What `derive status` and the dashboard's live page say a job is doing comes from the
/// pipeline's stages: every one in order, `encode` while the outputs are applied and encoded
/// (a long AVIF encode once showed as `decode` throughout).
@Suite struct PipelineStageTests {
    @Test func aJobPassesThroughEveryStageInOrder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-stages-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipeline = try DefaultImageTests.pipeline(overlays: folder, store: folder.appendingPathComponent("store"))
        let photo = Paths.fixture("photos/grace_hopper_noexif.jpg").path
        let seen = Mutex<[JobPipeline.Stage]>([])
        _ = try pipeline.run(try DefaultImageTests.job("c_fill,w_64,h_64/f_webp", source: photo), source: photo,
                             stage: { stage in seen.withLock { $0.append(stage) } })
        #expect(seen.withLock { $0 } == [.fetch, .decode, .encode, .store])
    }
}
