@testable import DeriveCore
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
        ("c_fill_pad,w_400,h_100,g_north", "g mode fill_pad is content-aware; it takes gravity auto only"),
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
