import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveTestSupport
import DeriveVips
import Foundation
import Testing

/// `fl_getinfo` (issue 30): the JSON document written beside the image holds what the image
/// and its source are, measured on the files written.
@Suite struct GetInfoInProcessTests {
    @Test func theDocumentBesideTheImageDescribesIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-getinfo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = Paths.fixture("photos/grace_hopper_noexif.jpg").path
        let engine = try VipsEngine()
        let fetcher = LocalFirstFetcher(fetcher: try CurlFetcher(settings: FetchSettings()), maxBytes: 64 << 20)
        let pipeline = JobPipeline(engine: engine, planner: engine.planner, fetcher: fetcher, overlays: NoOverlays(),
                                   store: FileAssetStore(root: folder), naming: .template(.default), catalog: InMemoryPresetCatalog())
        let job = try pipeline.resolve(JobSpec(source: photo, outputs: [
            try TransformationInput.output(named: "card", transformation: "c_fill,w_120,h_80,g_auto/fl_getinfo"),
            try TransformationInput.output(named: "plain", transformation: "c_scale,w_50"),
        ]))
        let report = try pipeline.run(job, source: photo).report
        #expect(report.infoLocations.count == 1, "only the output with fl_getinfo has a document")
        let key = try #require(report.keys.first { $0.contains("card") })
        let location = try #require(report.infoLocations[key])
        let url = try #require(URL(string: location))
        let document = try JSONParser().parse(String(contentsOf: url, encoding: .utf8))

        let sourceBytes = try Data(contentsOf: URL(fileURLWithPath: photo)).count
        let header = try #require(ImageSniffer.facts(of: [UInt8](try Data(contentsOf: URL(fileURLWithPath: photo)))))
        #expect(document["input"]?["width"] == .int(header.orientedSize.width))
        #expect(document["input"]?["height"] == .int(header.orientedSize.height))
        #expect(document["input"]?["bytes"] == .int(sourceBytes))
        let image = try Data(contentsOf: folder.appendingPathComponent(key))
        let written = try #require(ImageSniffer.facts(of: [UInt8](image)))
        #expect(document["output"]?["width"] == .int(written.width) && written.width == 120)
        #expect(document["output"]?["height"] == .int(written.height) && written.height == 80)
        #expect(document["output"]?["bytes"] == .int(image.count))
        #expect(document["output"]?["format"] == .string("jpg") || document["output"]?["format"] == .string("jpeg"))
        // g_auto cropped: the crop is there, inside the image it was taken from.
        guard case .array(let crops)? = document["resize"], case .object? = crops.first else {
            Issue.record("no resize in \(JSONWriter.pretty(document))")
            return
        }
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(key + ".json").path))
    }
}
