import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `pg_name:` and `pg_embedded:` through the real engine with its default settings (ImageMagick,
/// which would read a PSD flattened, blocked): the selection stands in for the document as the
/// pipeline makes it, then is inspected, planned, decoded and encoded like any source. The
/// expected pixels are psd-tools 1.26's composite of the same layers.
@Suite struct PhotoshopSelectionTests {
    static func psd(_ name: String) throws -> SourceImage {
        SourceImage(bytes: [UInt8](try Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/psd/\(name)"))), location: name)
    }

    /// What `JobPipeline.run` does: select, inspect, plan, render.
    static func render(_ source: SourceImage, _ chain: String) throws -> (Plan, PixelBuffer) {
        let engine = try VipsEngine()
        let job = try JobResolver().resolve(TransformationInput.parse(chain))
        var source = source
        if let selection = try job.psdSelection() { source = try engine.selecting(selection, from: source) }
        let inspection = try engine.inspect(source)
        let plan = try Planner().plan(job, source: inspection.facts)
        let result = try engine.render(plan, source: source, inspection: inspection, overlays: NoOverlays()) { _ in }
        return (plan, try Harness.pixels(result.outputs[0].data))
    }

    static func close(_ got: [Int], _ want: [Int]) -> Bool {
        if got.count == 4 && got[3] == 0 && want[3] == 0 { return true }
        return zip(got, want).allSatisfy { abs($0 - $1) <= 1 }
    }

    /// 'Слой' (percent-encoded in the string, as a URL carries it) alone, then over 'Фон'.
    @Test func layersByNameAreCompositedAtTheirPlace() throws {
        let top = "%D0%A1%D0%BB%D0%BE%D0%B9", bottom = "%D0%A4%D0%BE%D0%BD"
        let (plan, one) = try Self.render(Self.psd("2layers.psd"), "pg_name:\(top)/f_png")
        #expect(plan.source.format == .png && one.width == 101 && one.height == 55 && one.bands == 4)
        for ((x, y), want) in [((0, 0), [0, 0, 0, 0]), ((60, 40), [243, 244, 195, 254]), ((76, 17), [242, 244, 195, 157])] {
            let got = Harness.pixel(one, x, y)
            #expect(Self.close(got, want), "(\(x), \(y)) \(got), psd-tools \(want)")
        }
        let (_, two) = try Self.render(Self.psd("2layers.psd"), "pg_name:\(top);\(bottom)/f_png")
        for ((x, y), want) in [((0, 0), [255, 255, 255, 255]), ((50, 27), [52, 195, 77, 255]), ((20, 10), [68, 186, 15, 255])] {
            let got = Harness.pixel(two, x, y)
            #expect(Self.close(got, want), "(\(x), \(y)) \(got), psd-tools \(want)")
        }
        // The chain runs on the selection: w_50 of the 101-pixel canvas.
        let (resized, small) = try Self.render(Self.psd("2layers.psd"), "pg_name:\(top);\(bottom)/w_50/f_png")
        #expect(resized.decode.size.width <= 101 && small.width == 50 && small.height == 27)
    }

    /// The third smart object embeds linked-layer.png (64x64, black where psd-tools reads it).
    @Test(arguments: ["pg_embedded:3", "pg_embedded:name:embedded-png", "pg_embedded:name:skyline.jpg;embedded-png"])
    func theEmbeddedFileIsTheSource(chain: String) throws {
        let (plan, image) = try Self.render(Self.psd("placedLayer.psd"), "\(chain)/f_png")
        #expect(plan.source.format == .png && plan.source.width == 64 && plan.source.height == 64)
        #expect(image.width == 64 && image.height == 64)
        #expect(Array(Harness.pixel(image, 32, 32).prefix(3)) == [0, 0, 0])
    }

    @Test(arguments: [
        ("placedLayer.psd", "pg_name:record_cover;Shadow", #"no layer "record_cover"; its layers are "Background", "linked-png", "linked-psd", "embedded-png""#),
        ("placedLayer.psd", "pg_embedded:1", #"the smart object "linked-png" is linked to "linked-layer.png", a file outside the Photoshop document"#),
        ("placedLayer.psd", "pg_embedded:9", "the Photoshop document has 3 smart objects"),
        ("2layers.psd", "pg_embedded:name:myLayer;myLayer2", "no smart object layer of that name; its smart objects are none"),
    ])
    func whatTheDocumentDoesNotHaveFailsClearly(file: String, chain: String, message: String) throws {
        let error = #expect(throws: DeriveError.self) { try Self.render(Self.psd(file), chain) }
        #expect(error?.code == .invalidJob && error?.isRetryable == false)
        #expect(error?.detail.contains(message) == true, "\(error?.detail ?? "")")
    }

    @Test func aSourceThatIsNotAPhotoshopDocumentFailsClearly() throws {
        let error = #expect(throws: DeriveError.self) { try Self.render(Harness.source(ToneEffectTests.photo), "pg_name:record_cover") }
        #expect(error?.code == .invalidJob)
        #expect(error?.detail.contains("of a Photoshop document (PSD or PSB); the source is a JPEG file") == true, "\(error?.detail ?? "")")
    }

    /// One job decodes one source: outputs selecting different parts are refused together.
    @Test func outputsMustSelectTheSamePart() throws {
        let job = try JobResolver().resolve(TransformationInput.parse(#"{"outputs": [{"name": "a", "chain": "pg_embedded:3"}, {"name": "b", "chain": "pg_name:Background"}]}"#))
        let error = #expect(throws: DeriveError.self) { try job.psdSelection() }
        #expect(error?.code == .invalidJob && error?.detail.contains("pg_embedded:3, pg_name:Background") == true, "\(error?.detail ?? "")")
    }

    /// The document's size is checked against the engine's limits before any layer is read.
    @Test func theEnginesLimitsApply() throws {
        let engine = try VipsEngine(settings: EngineSettings(sourceLimits: SourceLimits(maxInputPixels: 10_000)))
        let error = #expect(throws: DeriveError.self) { try engine.selecting(.layers(["Background"]), from: Self.psd("placedLayer.psd")) }
        #expect(error?.code == .limitExceeded)
        // The composite is handed on uncompressed: refused before it is made when past the byte limit.
        let bytes = try VipsEngine(settings: EngineSettings(sourceLimits: SourceLimits(maxInputBytes: 200_000)))
        let tooLarge = #expect(throws: DeriveError.self) { try bytes.selecting(.layers(["Background"]), from: Self.psd("placedLayer.psd")) }
        #expect(tooLarge?.code == .limitExceeded && tooLarge?.detail.contains("262400 bytes of RGBA") == true, "\(tooLarge?.detail ?? "")")
        // The embedded file is its own size (17,272 bytes): within the limit.
        #expect(try bytes.selecting(.embedded(3), from: Self.psd("placedLayer.psd")).bytes.count == 17_272)
    }
}
