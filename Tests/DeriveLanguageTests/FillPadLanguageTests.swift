@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `c_fill_pad` and `c_auto_pad` (issue 16, item 2): string and JSON forms, round trips,
/// refusals, and the decision `FillPad` makes from the faces.
@Suite struct FillPadLanguageTests {
    @Test(arguments: [
        ("c_fill_pad,g_auto,w_400,h_100", #"{"resize": {"mode": "fill_pad", "width": 400, "height": 100, "gravity": "auto"}}"#,
         Resize(mode: .fillPad, width: .pixels(400), height: .pixels(100), gravity: .smart(.auto))),
        ("c_auto_pad,w_300,h_300,b_black", #"{"resize": {"mode": "auto_pad", "width": 300, "height": 300, "background": "black"}}"#,
         Resize(mode: .autoPad, width: .pixels(300), height: .pixels(300), background: .black)),
    ])
    func stringAndJSONMeanTheSameResize(text: String, json: String, resize: Resize) throws {
        #expect(try ToneEffectTests.step(text) == .resize(resize))
        #expect(try ToneEffectTests.step(json: json) == .resize(resize))
    }

    @Test(arguments: [
        ("c_fill_pad,g_auto,w_400,h_100", "c_fill_pad,w_400,h_100"),
        ("c_auto_pad,w_300,h_300,b_black", "c_auto_pad,w_300,h_300,b_black"),
        ("c_fill_pad,w_400", "c_scale,w_400"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("c_fill_pad,w_400,h_100,g_north", "g_north: unknown to Cloudinary (g mode fill_pad is content-aware; it takes gravity auto only)"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.contains(reason), "\(issues)")
    }

    /// Without faces there is nothing to keep: a fill (resize to cover, content-aware crop).
    @Test func withoutFacesItFills() {
        let ops = FillPad.operations(input: Size(4000, 3000), target: Size(400, 100), background: .black, faces: [])
        #expect(ops == [.resize(Size(400, 300)), .smartCrop(Size(400, 100), .auto)])
        #expect(FillPad.operations(input: Size(4000, 3000), target: Size(400, 100), background: .black, faces: nil) == ops)
    }

    /// A face the fill would cut: scaled only until the face (with its margin) fits the 100 px
    /// height, the window centred on it, padded to 400 px; a face that fits: a fill.
    @Test func aFaceTheFillWouldCutIsKeptByPadding() {
        let face = Rect(x: 1800, y: 1000, width: 400, height: 1000)
        let ops = FillPad.operations(input: Size(4000, 3000), target: Size(400, 100), background: .black, faces: [face])
        // The kept region is 640 x 2000 (face plus margins): k = 100 / 2000 = 0.05.
        #expect(ops.first == .resize(Size(200, 150)))
        guard case .crop(let window)? = ops.dropFirst().first, case .embed(let at, let canvas, .black)? = ops.last else {
            Issue.record("\(ops)")
            return
        }
        #expect(window.size == Size(200, 100) && canvas == Size(400, 100) && at == Rect(x: 100, y: 0, width: 200, height: 100))
        let small = Rect(x: 1900, y: 1400, width: 100, height: 120)
        let filled = FillPad.operations(input: Size(4000, 3000), target: Size(400, 100), background: .black, faces: [small])
        #expect(filled == [.resize(Size(400, 300)), .smartCrop(Size(400, 100), .auto)])
    }

    @Test func thePlanHasTheBoxAndTheDecisionIsTheEngines() throws {
        let plan = try Planner().plan(JobResolver().resolve(TransformationInput.parse("c_fill_pad,w_400,h_100,b_white")),
                                      source: SourceFacts(format: .jpeg, width: 4000, height: 3000))
        #expect(plan.outputs[0].size == Size(400, 100))
        #expect(plan.outputs[0].operations == [.fillPad(Size(400, 100), background: .white)])
        #expect(plan.needsFaces)
    }
}

/// `a_auto_right` and `a_auto_left` beside a resize (issue 16, item 2).
@Suite struct AutoTurnLanguageTests {
    @Test func stringAndJSONAndRoundTrip() throws {
        var r = Resize(mode: .fill, width: .pixels(400), height: .pixels(200))
        r.autoTurn = .right
        #expect(try ToneEffectTests.step("a_auto_right,c_fill,w_400,h_200") == .resize(r))
        #expect(try ToneEffectTests.step(json: #"{"resize": {"mode": "fill", "width": 400, "height": 200, "autoTurn": "right"}}"#) == .resize(r))
        try expectRoundTrip("c_fill,h_200,w_400,a_auto_right", printed: "c_fill,w_400,h_200,a_auto_right")
        try expectRoundTrip("a_auto_left,c_pad,ar_16:9,w_300", printed: "c_pad,w_300,ar_1.777778,a_auto_left")
        #expect(try canonical(string: "a_auto_left,c_fill,w_400,h_200").identity != (try canonical(string: "c_fill,w_400,h_200").identity))
    }

    /// Issue 42: `a_auto_right.hflip` (modes joined by '.', as Cloudinary documents) trapped the
    /// parser. The turn qualifies the resize; the modes after it are applied in turn after it.
    @Test func dottedModesAfterTheTurn() throws {
        let parsed = CloudinaryParser().parse("c_fill,w_300,h_200,a_auto_right.hflip")
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        var r = Resize(mode: .fill, width: .pixels(300), height: .pixels(200))
        r.autoTurn = .right
        var flip = Rotate()
        flip.horizontalFlip = true
        #expect(parsed.steps == [.resize(r), .rotate(flip)])
        let alone = CloudinaryParser().parse("a_auto_left.vflip.90")
        #expect(alone.issues.isEmpty, "\(alone.issues)")
        #expect(alone.notes.contains { $0.contains("without a resize") })
        // A turn after another mode cannot be applied before the resize: refused, naming a_.
        let late = CloudinaryParser().parse("c_fill,w_300,h_200,a_hflip.auto_right")
        #expect(late.issues.map(\.description).joined().contains("must come first"), "\(late.issues)")
        // Modes Derive does not read inside a list: refused as Cloudinary's, not a trap.
        let auto = CloudinaryParser().parse("a_90.auto")
        #expect(auto.issues.map(\.description).joined().contains("known to Cloudinary, not supported by Derive"), "\(auto.issues)")
    }

    /// A quarter turn first only when the box's orientation is not the image's.
    @Test(arguments: [
        ("a_auto_right,c_fill,w_400,h_200", SourceFacts(format: .jpeg, width: 300, height: 400), 90.0 as Double?),
        ("a_auto_left,c_fill,w_400,h_200", SourceFacts(format: .jpeg, width: 300, height: 400), -90),
        ("a_auto_right,c_fill,w_400,h_200", SourceFacts(format: .jpeg, width: 400, height: 300), nil),
        ("a_auto_right,c_fill,w_200,h_200", SourceFacts(format: .jpeg, width: 300, height: 400), nil),
        ("a_auto_right,c_scale,w_100,h_300", SourceFacts(format: .jpeg, width: 400, height: 300), 90),
    ])
    func turnsOnlyWhenTheOrientationsDiffer(chain: String, facts: SourceFacts, degrees: Double?) throws {
        let plan = try plan([chain], facts)
        if let degrees {
            guard case .rotate(let turned, _, nil)? = plan.outputs[0].operations.first else {
                Issue.record("\(plan.outputs[0].operations)")
                return
            }
            #expect(turned == degrees)
        } else {
            #expect(!plan.outputs[0].operations.contains { if case .rotate = $0 { true } else { false } })
        }
    }

    @Test func aTurnNeedsABox() {
        #expect(CloudinaryParser().parse("a_auto_right,c_scale,w_100").issues.map(\.reason) == ["a_auto turns by the requested box's orientation, so it needs a width and a height, or an aspect ratio"])
    }
}
