@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// The issues planning `text` on `facts` is refused with, for a string that parses cleanly but
/// that this source cannot plan (a failure is recorded when it plans).
func planRefusal(_ text: String, _ facts: SourceFacts, sourceLocation: SourceLocation = #_sourceLocation) -> [ValidationIssue] {
    if !text.hasPrefix("[") && !text.hasPrefix("{") {
        #expect(CloudinaryParser().parse(text).issues.isEmpty, sourceLocation: sourceLocation)
    }
    do {
        _ = try plan([text], facts)
        Issue.record("\(text) planned", sourceLocation: sourceLocation)
    } catch let error as ValidationError {
        return error.issues
    } catch {
        Issue.record("\(text): \(error)", sourceLocation: sourceLocation)
    }
    return []
}

let photo = SourceFacts(format: .jpeg, width: 4608, height: 3456)

@Suite struct OrientationPlanningTests {
    /// Orientations 5–8 swap width and height; 1–4 do not.
    @Test(arguments: 1...8)
    func orientationDecidesTheAxes(orientation: Int) throws {
        let facts = SourceFacts(format: .jpeg, width: 4000, height: 3000, orientation: orientation)
        let swapped = orientation >= 5
        let p = try plan(["c_fit,w_400,h_400", "c_fill,w_300,h_100"], facts)
        #expect(p.outputs[0].size == (swapped ? Size(300, 400) : Size(400, 300)))
        #expect(p.outputs[1].size == Size(300, 100))
        #expect(p.decode.size == (swapped ? Size(300, 400) : Size(400, 300)))
        #expect(p.source.orientedSize == (swapped ? Size(3000, 4000) : Size(4000, 3000)))
    }

    @Test func ignoringOrientationTurnsTheDecodedImageBack() throws {
        let facts = SourceFacts(format: .jpeg, width: 4000, height: 3000, orientation: 6)
        let p = try plan(["c_fit,w_400,h_400/a_ignore"], facts)
        #expect(p.outputs[0].size == Size(400, 300))
        #expect(p.outputs[0].operations == [.unorient(orientation: 6)])
        #expect(p.decode.size == Size(300, 400))
    }
}

@Suite struct DecodeSizeTests {
    @Test func oneThumbnailDecodesAtItsSize() throws {
        let p = try plan(["c_fit,w_400,h_400"], photo)
        #expect(p.decode.size == Size(400, 300))
        #expect(p.outputs[0].operations == [])
    }

    @Test func severalOutputsShareTheLargestDecode() throws {
        let p = try plan(["c_limit,w_320/f_webp", "c_limit,w_1024/f_jpg", "c_limit,w_2048/f_avif"], photo)
        #expect(p.decode.size == Size(2048, 1536))
        #expect(p.outputs.map(\.size) == [Size(320, 240), Size(1024, 768), Size(2048, 1536)])
        #expect(p.outputs[0].operations == [.resize(Size(320, 240))])
        #expect(p.outputs[2].operations == [])
    }

    @Test func rasterSourcesAreNeverDecodedAboveTheirSize() throws {
        let p = try plan(["c_scale,w_9000"], photo)
        #expect(p.decode.size == photo.orientedSize && p.decode.scale == 1)
        #expect(p.outputs[0].operations == [.resize(Size(9000, 6750))])
    }

    @Test func vectorSourcesRenderAtTheNeededScale() throws {
        let svg = SourceFacts(format: .svg, width: 100, height: 50)
        let p = try plan(["c_scale,w_1000", "c_scale,w_200"], svg)
        #expect(p.decode.size == Size(1000, 500) && p.decode.scale == 10)
        #expect(p.outputs[0].operations == [])
        #expect(p.outputs[1].operations == [.resize(Size(200, 100))])
    }

    @Test func aCropBeforeAResizeRunsOnTheSmallDecode() throws {
        let p = try plan(["c_crop,w_2000,h_2000,x_100,y_100/c_scale,w_200"], SourceFacts(format: .jpeg, width: 4000, height: 3000))
        #expect(p.decode.size == Size(400, 300))
        #expect(p.outputs[0].operations == [.crop(rect(10, 10, 200, 200))])
        #expect(p.outputs[0].size == Size(200, 200))
    }

    @Test func spatialEffectsBeforeAResizeNeedFullSizeButPointwiseOnesDoNot() throws {
        let blurred = try plan(["e_blur:300/c_scale,w_200"], photo)
        #expect(blurred.decode.size == photo.orientedSize)
        let gray = try plan(["e_grayscale/c_scale,w_200"], photo)
        #expect(gray.decode.size == Size(200, 150))
        #expect(gray.outputs[0].operations == [.effect(.named("grayscale"))])
    }

    @Test func anOutputWithoutResizeAtASmallerDecodeIsResampledBackToFullSize() throws {
        // The SVG is rendered at 4x for one output; the other wants it at its own size.
        let svg = SourceFacts(format: .svg, width: 100, height: 100)
        let p = try plan(["c_scale,w_400", "e_blur:10"], svg)
        #expect(p.decode.size == Size(400, 400))
        #expect(p.outputs[1].operations == [.resize(Size(100, 100)), .effect(.named("blur", 10))])
    }

    @Test func contentAwareCropsScaleWithTheDecode() throws {
        let p = try plan(["c_crop,w_2000,h_1000,g_auto/c_scale,w_500"], SourceFacts(format: .jpeg, width: 4000, height: 3000))
        #expect(p.decode.size == Size(1000, 750))
        #expect(p.outputs[0].operations == [.smartCrop(Size(500, 250), .auto)])
    }
}

@Suite struct PlannedOperationsTests {
    @Test func everyStepBecomesConcreteOperations() throws {
        let p = try plan(["c_pad,w_500,h_500,b_white/a_45/r_20/bo_5px_solid_black/o_50/b_red/e_sepia"], SourceFacts(format: .png, width: 1000, height: 500))
        // The decode lands on 500x250 already, so the pad needs no resample of its own.
        #expect(p.decode.size == Size(500, 250))
        #expect(p.outputs[0].operations == [
            .embed(at: rect(0, 125, 500, 250), canvas: Size(500, 500), background: .white),
            .rotate(degrees: 45, canvas: Size(707, 707), background: .transparent),
            .round(.corners([20, 20, 20, 20]), background: .transparent),
            .border(Border(width: 5, color: .black)),
            .opacity(50),
            .flatten(Color(red: 255, green: 0, blue: 0)),
            .effect(.named("sepia", 80)),
        ])
        #expect(p.outputs[0].size == Size(717, 717))
        #expect(p.outputs[0].encoding.format == .png)
    }

    @Test func trimDefersTheRestUntilTheSizeIsKnown() throws {
        let p = try plan(["e_trim/c_fill,w_100,h_100"], photo)
        #expect(p.outputs[0].size == nil)
        #expect(p.decode.size == photo.orientedSize)
        guard case .deferred(let rest)? = p.outputs[0].operations.last else {
            Issue.record("expected deferred steps")
            return
        }
        // The engine plans the rest with the same planner once the trimmed size is known.
        let later = try Planner().operations(for: rest, input: Size(3000, 2000))
        #expect(later.size == Size(100, 100))
        #expect(later.operations == [.resize(Size(150, 100)), .crop(rect(25, 0, 100, 100))])
    }

    @Test func originalFormatResolvesFromTheSource() throws {
        #expect(try plan(["w_10"], SourceFacts(format: .heif, width: 100, height: 100)).outputs[0].encoding.format == .jpeg)
        #expect(try plan(["w_10"], SourceFacts(format: .svg, width: 100, height: 100)).outputs[0].encoding.format == .png)
        let webp = try plan(["w_10"], SourceFacts(format: .webp, width: 100, height: 100)).outputs[0].encoding
        #expect(webp.format == .webp && webp.quality == .value(80) && webp.effort == 4)
    }
}

@Suite struct PagesAndAnimationTests {
    let animated = SourceFacts(format: .gif, width: 85, height: 77, pages: 12, hasAlpha: true)

    @Test func animationsKeepEveryFrameWhenTheFormatCanAnimate() throws {
        let p = try plan(["w_40/f_webp", "w_40/f_jpg"], animated)
        #expect(p.decode.pages == .all)
        #expect(p.outputs[0].keepsAnimation && !p.outputs[1].keepsAnimation)
        #expect(p.outputs[1].operations.first == .selectPage(1))
    }

    @Test func aSelectedFrameIsDecodedAlone() throws {
        let p = try plan(["pg_3/f_png"], animated)
        #expect(p.decode.pages == .page(3))
        #expect(!p.outputs[0].keepsAnimation)
        #expect(throws: ValidationError(location: #"outputs[0] ("o0").frame"#, reason: "frame 13 does not exist; the source has 12")) {
            try plan(["pg_13"], animated)
        }
    }

    @Test func documentPagesAreNotAnimations() throws {
        let pdf = SourceFacts(format: .pdf, width: 600, height: 800, pages: 3)
        let p = try plan(["w_100/f_webp"], pdf)
        #expect(p.decode.pages == .page(1) && !p.outputs[0].keepsAnimation)
    }
}

@Suite struct BreakpointPlanningTests {
    @Test(arguments: [
        (200, 1000, 200, 20, [200, 400, 600, 800, 1000]),
        (200, 700, 200, 20, [200, 400, 600, 700]),
        (200, 1000, 200, 3, [200, 600, 1000]),
        (500, 300, 100, 20, [300]),
        (100, 1000, 50, 1, [1000]),
    ])
    func stepSpacedWidths(min: Int, max: Int, step: Int, count: Int, widths: [Int]) {
        #expect(Planner.breakpointWidths(min: min, max: max, step: step, maxCount: count) == widths)
    }

    @Test func stepBreakpointsAreCappedAtTheChainsWidth() throws {
        let p = try plan([#"{"chain": "c_limit,w_900", "format": "webp", "breakpoints": {"minWidth": 300, "maxWidth": 2000, "step": 300}}"#], photo)
        #expect(p.outputs.map(\.breakpointWidth) == [300, 600, 900])
        #expect(p.outputs.map(\.size) == [Size(300, 225), Size(600, 450), Size(900, 675)])
        #expect(p.decode.size == Size(900, 675))
        #expect(Set(p.outputs.map(\.identity)).count == 1)
    }

    @Test func byteBreakpointsGiveTheEngineASearchRange() throws {
        let p = try plan([#"{"chain": [], "format": "jpeg", "breakpoints": {"minWidth": 100, "maxWidth": 8000, "bytes": 15000, "maxCount": 8}}"#], photo)
        #expect(p.outputs.count == 1)
        #expect(p.outputs[0].breakpointSearch == BreakpointSearch(minWidth: 100, maxWidth: 4608, bytes: 15000, maxCount: 8))
    }
}

@Suite struct PlanValidationTests {
    @Test func validateStepsAreCheckedAgainstTheHeader() throws {
        let rule = #"[{"validate": {"minWidth": 5000, "formats": ["png"]}}]"#
        #expect(throws: ValidationError([
            ValidationIssue(location: #"outputs[0] ("o0") step 0 (validate)"#, reason: "width 4608 is below the minimum 5000"),
            ValidationIssue(location: #"outputs[0] ("o0") step 0 (validate)"#, reason: "format jpeg is not allowed (allowed: png)"),
        ])) { try plan([rule], photo) }
        // After a resize the constraint applies to the resized image.
        #expect(throws: Never.self) { try plan([#"[{"resize": {"width": 0.2}}, {"validate": {"maxWidth": 1000}}]"#], photo) }
    }

    @Test func outputsLargerThanTheLimitsAreRefusedBeforeAnyWork() {
        #expect(throws: ValidationError(location: #"outputs[0] ("o0") step 0 (resize)"#,
                                        reason: "would make a 73728x55296 image: known to Cloudinary, not supported by Derive: beyond Derive's limits: the limit is 16384 pixels per side and 100000000 pixels in all")) {
            try plan(["w_16.0"], photo)
        }
        let tight = ChainLimits(maxOutputDimension: 5000, maxOutputPixels: 1_000_000)
        #expect(throws: ValidationError.self) { try plan(["c_pad,w_4000,h_4000"], photo, limits: tight) }
    }
}
