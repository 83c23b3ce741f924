import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import DeriveVision
import Foundation
import Synchronization
import Testing

/// Faces on real photographs: crops that keep them, effects that hide them, fallbacks when
/// there are none, and one detection per job.
@Suite struct FaceTests {
    static let portrait = "Samples/grace-hopper.jpg"
    static let group = "Tests/Fixtures/group-of-six.jpg"

    /// A detector that counts its calls, around the real one.
    final class CountingDetector: FaceDetector {
        let name = "dlib-hog"
        let inner = DlibFaceDetector()
        let calls = Mutex(0)
        func detect(_ grey: PixelBuffer, upsample: Int) throws(DeriveError) -> [DetectedFace] {
            calls.withLock { $0 += 1 }
            return try inner.detect(grey, upsample: upsample)
        }
    }

    static func engine(_ detector: (any FaceDetector)? = DlibFaceDetector(), enabled: Bool = true) throws -> VipsEngine {
        var settings = Harness.allLoaders
        settings.faces.enabled = enabled
        return try VipsEngine(settings: settings, faceDetector: detector)
    }

    static func repositoryFile(_ path: String) throws -> SourceImage {
        SourceImage(bytes: [UInt8](try Data(contentsOf: Paths.repository.appendingPathComponent(path))), location: path)
    }

    static func render(_ path: String, _ chain: String, engine: VipsEngine? = nil) throws -> (Plan, RenderResult) {
        let engine = try engine ?? Self.engine()
        let source = try repositoryFile(path)
        let inspection = try engine.inspect(source)
        let plan = try engine.planner.plan(JobResolver().resolve(TransformationInput.parse(chain)), source: inspection.facts)
        return (plan, try engine.render(plan, source: source, inspection: inspection, overlays: NoOverlays()))
    }

    /// The faces the detector finds in an encoded output.
    static func faces(in output: RenderedOutput) throws -> [DetectedFace] {
        try Self.engine().faces(in: SourceImage(bytes: output.data, location: output.name)).faces
    }

    /// `fc` is the engine's: the plan defers the steps that name it, the job finds faces once,
    /// and the engine decides with the count (six in the group, one in the portrait).
    @Test func conditionsOnTheFaceCount() throws {
        let chain = "if_fc_gt_5/c_scale,w_60/if_else/c_scale,w_30/if_end/f_png"
        #expect(try Self.render(Self.group, chain).1.outputs[0].metadata.width == 60)
        #expect(try Self.render(Self.portrait, chain).1.outputs[0].metadata.width == 30)
        #expect(try Self.render(Self.group, "c_scale,w_fc_mul_10/f_png").1.outputs[0].metadata.width == 60)
        // Without detection the step says why it cannot run.
        do {
            _ = try Self.render(Self.group, chain, engine: Self.engine(enabled: false))
            Issue.record("planned without faces")
        } catch {
            #expect("\(error)".contains("fc (the face count) is not known"), "\(error)")
        }
    }

    @Test func findsEveryFaceOfTheGroupAndThePortrait() throws {
        let engine = try Self.engine()
        #expect(try engine.faces(in: Self.repositoryFile(Self.group)).faces.count == 6)
        let portrait = try engine.faces(in: Self.repositoryFile(Self.portrait)).faces
        #expect(portrait.count == 1)
        // Her face, in upright source pixels: between the eyebrows and the chin, mid-image.
        let face = try #require(portrait.first).box
        #expect((150...220).contains(face.x) && (110...180).contains(face.y) && (160...230).contains(face.width))
    }

    @Test func facesGravityKeepsThePortraitsFaceWhereTheCentreCutsIt() throws {
        let (_, faces) = try Self.render(Self.portrait, "c_fill,w_600,h_250,g_faces/f_png")
        let crop = try #require(faces.outputs[0].metadata.crops.first)
        #expect(crop.basis == .faces && crop.facesSeen == 1 && crop.facesKept == 1)
        #expect(try Self.faces(in: faces.outputs[0]).count == 1)

        let (_, centre) = try Self.render(Self.portrait, "c_fill,w_600,h_250,g_center/f_png")
        #expect(try Self.faces(in: centre.outputs[0]).isEmpty, "the centre cuts her face, which is what g_faces fixes")
    }

    @Test func facesGravityOnAGroupKeepsEveryFaceThatFits() throws {
        let (_, result) = try Self.render(Self.group, "c_fill,w_1000,h_400,g_faces/f_png")
        let crop = try #require(result.outputs[0].metadata.crops.first)
        #expect(crop.facesSeen == 6)
        #expect(crop.facesKept == 6)
        #expect(try Self.faces(in: result.outputs[0]).count == 6)
    }

    @Test(arguments: ["c_fill,w_300,h_300,g_face", "c_crop,w_200,h_200,g_face"])
    func faceGravityCentresTheLargestFace(chain: String) throws {
        let (_, result) = try Self.render(Self.group, chain + "/f_png")
        let crop = try #require(result.outputs[0].metadata.crops.first)
        #expect(crop.basis == .face)
        let faces = try #require(result.source.faces?.faces).map(\.box)
        let largest = try #require(FaceGeometry.largest(faces))
        // In the pixels of the image the crop was taken from (the group, scaled for c_fill):
        // the window is centred on the largest face, across, as far as the edges allow.
        let scale = Double(crop.input.width) / 1280
        let centre = (Double(largest.x) + Double(largest.width) / 2) * scale
        let expected = min(max(0, centre - Double(crop.rect.width) / 2), Double(crop.input.width - crop.rect.width))
        #expect(abs(Double(crop.rect.x) - expected) <= 2)
        #expect(crop.facesKept >= 1)
    }

    @Test func autoGravityKeepsTheSampleCardsFace() throws {
        // The quick start's card: 600x315 with g_auto. Attention alone cut at the chin.
        let (_, result) = try Self.render(Self.portrait, "c_fill,w_600,h_315,g_auto/f_png")
        let crop = try #require(result.outputs[0].metadata.crops.first)
        #expect(crop.basis == .faces && crop.facesKept == 1)
        #expect(try Self.faces(in: result.outputs[0]).count == 1)
    }

    @Test func aPhotoWithoutFacesFallsBackAsDocumented() throws {
        let coffee = "photos/coffee_noexif.png"
        let engine = try Self.engine()
        let source = try Harness.source(coffee)
        for (gravity, fallback) in [("faces", CropDecision.Basis.center), ("face:center", .center), ("faces:auto", .attention)] {
            let (_, result) = try Harness.render(source, "c_fill,w_200,h_300,g_\(gravity)", engine: engine)
            let crop = try #require(result.outputs[0].metadata.crops.first)
            #expect(crop.fallback == fallback, "g_\(gravity)")
            #expect(crop.facesSeen == 0)
            #expect(result.source.faces?.faces.isEmpty == true)
        }
        // The centre fallback is the centre window of the scaled image.
        let (_, centre) = try Harness.render(source, "c_fill,w_200,h_300,g_faces", engine: engine)
        let crop = try #require(centre.outputs[0].metadata.crops.first)
        #expect(crop.rect.x == (crop.input.width - 200) / 2 && crop.rect.y == 0)
    }

    @Test func pixelateFacesChangesTheFacesAndNothingFarFromThem() throws {
        let (_, hidden) = try Self.render(Self.group, "e_pixelate_faces:12/f_png")
        let (_, plain) = try Self.render(Self.group, "a_0/f_png")
        let a = try Harness.pixels(hidden.outputs[0].data), b = try Harness.pixels(plain.outputs[0].data)
        let faces = try #require(hidden.source.faces?.faces)
        #expect(faces.count == 6)
        for face in faces {
            let region = face.box
            #expect(Self.meanDifference(a, b, in: region) > 4, "face at \(region) unchanged")
        }
        // Far from every face: the top-left corner band and the bottom rows are untouched.
        #expect(Self.meanDifference(a, b, in: Rect(x: 0, y: 800, width: 1280, height: 86)) == 0)
        #expect(Self.meanDifference(a, b, in: Rect(x: 0, y: 0, width: 60, height: 150)) == 0)
    }

    @Test func regionEffectsChangeTheRegionOnly() throws {
        let (_, hidden) = try Self.render(Self.group, "e_pixelate_region:16,x_100,y_100,w_300,h_200/f_png")
        let (_, plain) = try Self.render(Self.group, "a_0/f_png")
        let a = try Harness.pixels(hidden.outputs[0].data), b = try Harness.pixels(plain.outputs[0].data)
        #expect(Self.meanDifference(a, b, in: Rect(x: 100, y: 100, width: 300, height: 200)) > 4)
        #expect(Self.meanDifference(a, b, in: Rect(x: 0, y: 320, width: 1280, height: 566)) == 0)
        #expect(Self.meanDifference(a, b, in: Rect(x: 420, y: 0, width: 860, height: 886)) == 0)
        #expect(hidden.source.faces == nil, "a region effect needs no detector")
    }

    @Test func blurFacesFailsWhenDetectionIsOff() throws {
        let engine = try Self.engine(enabled: false)
        #expect(throws: DeriveError.self) { try Self.render(Self.group, "e_blur_faces", engine: engine) }
        // A face gravity falls back to the centre instead, and says so.
        let (_, result) = try Self.render(Self.group, "c_fill,w_200,h_200,g_faces", engine: engine)
        #expect(result.outputs[0].metadata.crops.first?.fallback == .center)
        #expect(result.source.faces == nil)
    }

    @Test func thumbAroundTheFaceCropsAndScales() throws {
        let (_, result) = try Self.render(Self.portrait, "c_thumb,g_face,w_150,h_150/f_png")
        let output = result.outputs[0]
        #expect(output.metadata.width == 150 && output.metadata.height == 150)
        let crop = try #require(output.metadata.crops.first)
        #expect(crop.basis == .face && crop.facesKept == 1)
        // A head-and-shoulders region, smaller than the whole portrait.
        #expect(crop.rect.width < 512 && crop.rect.width >= 150)
        let (_, zoomed) = try Self.render(Self.portrait, "c_thumb,g_face,w_150,h_150,z_1.5/f_png")
        let closer = try #require(zoomed.outputs[0].metadata.crops.first)
        #expect(closer.rect.width < crop.rect.width)
    }

    @Test func cropAroundTheFaceKeepsItsPixels() throws {
        let (_, result) = try Self.render(Self.portrait, "c_crop,g_face,w_240,h_240/f_png")
        let output = result.outputs[0]
        #expect(output.metadata.width == 240 && output.metadata.height == 240)
        let crop = try #require(output.metadata.crops.first)
        #expect(crop.rect.width == 240 && crop.input == Size(512, 600))
        #expect(try Self.faces(in: output).count == 1)
    }

    @Test func aJobWithFacesInThreeOutputsDetectsOnce() throws {
        let detector = CountingDetector()
        let engine = try Self.engine(detector)
        let job = try String(contentsOf: Paths.repository.appendingPathComponent("Samples/web-outputs.json"), encoding: .utf8)
        let chains = "{\"outputs\": [" + [
            #"{"name": "a", "chain": "c_fill,w_200,h_200,g_faces"}"#,
            #"{"name": "b", "chain": "c_thumb,w_100,h_100/e_blur_faces"}"#,
            #"{"name": "c", "chain": "c_fill,w_300,h_100,g_auto"}"#,
        ].joined(separator: ",") + "]}"
        for text in [chains, job] {
            detector.calls.withLock { $0 = 0 }
            let (plan, result) = try Self.render(Self.portrait, text, engine: engine)
            #expect(plan.needsFaces)
            #expect(result.outputs.count == 3)
            #expect(detector.calls.withLock { $0 } == 1)
        }
    }

    @Test func aJobThatNeedsNoFacesNeverDetects() throws {
        let detector = CountingDetector()
        let (plan, result) = try Self.render(Self.portrait, "c_fill,w_200,h_200,g_north/e_sepia", engine: Self.engine(detector))
        #expect(!plan.needsFaces && result.source.faces == nil)
        #expect(detector.calls.withLock { $0 } == 0)
    }

    @Test func overlaysArePlacedOnEveryFace() throws {
        let (_, marked) = try Self.render(Self.group, "l_text:sans_40:X,co_red,g_faces/fl_layer_apply/f_png")
        let (_, plain) = try Self.render(Self.group, "a_0/f_png")
        let a = try Harness.pixels(marked.outputs[0].data), b = try Harness.pixels(plain.outputs[0].data)
        for face in try #require(marked.source.faces?.faces) {
            let centre = Rect(x: face.box.x + face.box.width / 2 - 10, y: face.box.y + face.box.height / 2 - 10, width: 20, height: 20)
            #expect(Self.meanDifference(a, b, in: centre) > 10)
        }
    }

    static func meanDifference(_ a: PixelBuffer, _ b: PixelBuffer, in region: Rect) -> Double {
        var sum = 0, count = 0
        for y in max(0, region.y)..<min(a.height, region.y + region.height) {
            for x in max(0, region.x)..<min(a.width, region.x + region.width) {
                for c in 0..<min(3, a.bands) {
                    let i = (y * a.width + x) * a.bands + c
                    sum += abs(Int(a.pixels[i]) - Int(b.pixels[i]))
                    count += 1
                }
            }
        }
        return count == 0 ? 0 : Double(sum) / Double(count)
    }
}
