@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// Decoding twice where the crop depends on the faces (issue 43): the planner decides the crop
/// around the faces in the source's pixels, the one the runner would take on a full-size decode,
/// and decodes only what the outputs need.
@Suite struct FaceDecodeTests {
    let photo = SourceFacts(format: .jpeg, width: 4000, height: 3000)
    /// A face (surer than the crops' threshold) right of the centre, in upright source pixels.
    let face = Rect(x: 2600, y: 900, width: 300, height: 380)
    let planner = Planner(faceDecodeShortSide: 0, faceDecodeCanvas: FaceDetectionSettings.defaultCanvas)

    func planned(_ chains: [String], _ facts: SourceFacts? = nil) throws -> Plan {
        let specs = try chains.enumerated().map { try TransformationInput.output(named: "o\($0)", transformation: $1) }
        return try planner.plan(JobResolver().resolve(JobSpec(source: nil, outputs: specs)), source: facts ?? photo)
    }

    func faces(_ boxes: [Rect]) -> JobFaces { JobFaces(privacy: boxes, crops: boxes) }

    @Test func aThumbnailAroundAFaceDecodesTheDetectorsSizeThenOnlyItsRegionAtItsScale() throws {
        let plan = try planned(["c_thumb,g_face,w_200,h_200"])
        // Before the faces are known the crop is not, so the plan decodes everything.
        #expect(plan.decode.size == Size(4000, 3000))
        #expect(planner.decidesBeforeDecoding(plan))

        let refined = try #require(planner.refined(plan, faces: faces([face])))
        // The crop the runner takes on the full-size image, recorded as it records it.
        let r = Resize(mode: .thumb, width: .pixels(200), height: .pixels(200), gravity: .smart(.face))
        let (_, decision) = try planner.faceCrop(r, in: Size(4000, 3000), faces: [face])
        #expect(refined.decisions == [[try #require(decision)]])
        let rect = try #require(decision).rect
        #expect(rect.width == 665 && rect.height == 665)
        // Decoded at the scale that makes the region 200 px, and only the region.
        let decode = refined.plan.decode
        let scale = 200.0 / Double(rect.width)
        #expect(abs(decode.scale - scale) < 0.001)
        let region = try #require(decode.region)
        #expect(abs(Double(region.x) - Double(rect.x) * scale) <= 1 && abs(Double(region.y) - Double(rect.y) * scale) <= 1)
        #expect(abs(region.width - 200) <= 1 && abs(region.height - 200) <= 1)
        #expect(decode.decodedSize == region.size)
        // What is left is the resample to the output's size (none when the region is it already).
        let operations = refined.plan.outputs[0].operations
        #expect(operations.isEmpty || operations == [.resize(Size(200, 200))])
        #expect(!refined.plan.needsFaces)
    }

    @Test func everyOutputsRegionIsDecodedAndEachCutsItsOwn() throws {
        let plan = try planned(["c_thumb,g_face,w_200,h_200", "c_crop,g_face,w_300,h_300"])
        let refined = try #require(planner.refined(plan, faces: faces([face])))
        // c_crop keeps the source's pixels: the decode is at full scale, the region the union.
        #expect(refined.plan.decode.scale == 1)
        let region = try #require(refined.plan.decode.region)
        let thumb = refined.decisions[0][0].rect, crop = refined.decisions[1][0].rect
        #expect(region == FaceGeometry.union(thumb, crop))
        #expect(refined.plan.outputs[1].operations.first == .crop(Rect(x: crop.x - region.x, y: crop.y - region.y, width: 300, height: 300)))
    }

    @Test func anOutputThatNeedsTheWholeImageKeepsTheWholeDecode() throws {
        let plan = try planned(["c_thumb,g_face,w_200,h_200", "c_limit,w_1200"])
        let refined = try #require(planner.refined(plan, faces: faces([face])))
        // The larger scale of the two (the thumbnail's region, 665 px, made 200), all of it.
        let decode = refined.plan.decode
        #expect(decode.region == nil)
        #expect(decode.size == Size(1203, 902))
        #expect(refined.plan.outputs[1].operations == [.resize(Size(1200, 900))])
        // The thumbnail's crop is the same, rebased onto that decode.
        guard case .crop(let rect)? = refined.plan.outputs[0].operations.first else {
            Issue.record("no crop first: \(refined.plan.outputs[0].operations)")
            return
        }
        let full = refined.decisions[0][0].rect
        #expect(abs(Double(rect.x) - Double(full.x) * decode.scale) <= 1 && abs(Double(rect.width) - Double(full.width) * decode.scale) <= 1)
    }

    @Test func withoutAFaceTheThumbnailFallsBackAsTheRunnerDoes() throws {
        let plan = try planned(["c_thumb,g_face,w_200,h_200"])
        let refined = try #require(planner.refined(plan, faces: faces([])))
        let decision = try #require(refined.decisions[0].first)
        #expect(decision.fallback == .center && decision.basis == .face)
        // c_fill's centre: the resample is the decode itself, and the centred window is all
        // that is decoded of it.
        #expect(refined.plan.decode.size == Size(267, 200))
        #expect(refined.plan.decode.region == Rect(x: 33, y: 0, width: 200, height: 200))
        #expect(refined.plan.outputs[0].operations.isEmpty)
    }

    @Test func anOrientedSourceIsRefinedInItsUprightPixels() throws {
        var turned = photo
        turned.orientation = 6
        let plan = try planned(["c_thumb,g_face,w_200,h_200"], turned)
        let upright = Rect(x: 1200, y: 2600, width: 380, height: 300)
        let refined = try #require(planner.refined(plan, faces: faces([upright])))
        let rect = refined.decisions[0][0].rect
        #expect(refined.decisions[0][0].input == Size(3000, 4000))
        #expect(FaceGeometry.contains(rect, upright))
    }

    @Test func jobsThatGainNothingAreLeftAlone() throws {
        // Already decoded small (a fill's resample comes first): nothing to refine, and the
        // detector reads that decode.
        let fill = try planned(["c_fill,g_faces,w_600,h_315"])
        #expect(planner.refined(fill, faces: faces([face])) == nil)
        #expect(!planner.decidesBeforeDecoding(fill))
        // Privacy effects cover faces wherever they are: no crop to decide.
        let hidden = try planned(["e_pixelate_faces/c_limit,w_1200"])
        #expect(planner.refined(hidden, faces: faces([face])) == nil)
        #expect(!planner.decidesBeforeDecoding(hidden))
        // No faces needed at all.
        #expect(!planner.decidesBeforeDecoding(try planned(["c_thumb,g_north,w_200,h_200"])))
        // A crop around faces after a step that needs the pixels: decided where it is.
        #expect(!planner.decidesBeforeDecoding(try planned(["e_sharpen/c_thumb,g_face,w_200,h_200"])))
    }
}
