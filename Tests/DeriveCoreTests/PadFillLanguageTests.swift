@testable import DeriveCore
import Testing

/// `b_blurred` and `b_auto` with the pad modes (issue 16, item 2): string and JSON forms, round
/// trips, refusals and the planned operation.
@Suite struct PadFillLanguageTests {
    @Test(arguments: [
        ("c_pad,w_400,h_100,b_blurred:400:15", #"{"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": {"blurred": {"intensity": 400, "brightness": 15}}}}"#,
         PadFill.blurred(intensity: 400, brightness: 15)),
        ("c_pad,w_400,h_100,b_blurred", #"{"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": "blurred"}}"#, .blurred(intensity: 100, brightness: 0)),
        ("c_pad,w_400,h_100,b_auto", #"{"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": "auto"}}"#, .auto(.border)),
        ("c_pad,w_400,h_100,b_auto:predominant_contrast", #"{"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": {"auto": "predominant_contrast"}}}"#,
         .auto(.predominantContrast)),
    ])
    func stringAndJSONMeanTheSamePad(text: String, json: String, fill: PadFill) throws {
        var expected = Resize(mode: .pad, width: .pixels(400), height: .pixels(100))
        expected.padFill = fill
        #expect(try ToneEffectTests.step(text) == .resize(expected))
        #expect(try ToneEffectTests.step(json: json) == .resize(expected))
    }

    @Test(arguments: [
        ("c_pad,w_400,h_100,b_blurred:100:0", "c_pad,w_400,h_100,b_blurred"), ("c_lpad,w_400,h_100,b_blurred:400", "c_lpad,w_400,h_100,b_blurred:400"),
        ("c_pad,h_100,w_400,b_blurred:100:-50", "c_pad,w_400,h_100,b_blurred:100:-50"), ("c_mpad,w_400,h_100,b_auto:border", "c_mpad,w_400,h_100,b_auto"),
        ("c_pad,w_400,h_100,b_auto:predominant", "c_pad,w_400,h_100,b_auto:predominant"),
        ("c_pad,w_400,b_blurred", "c_fit,w_400"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func aFillIsNotAColour() throws {
        #expect(try canonical(string: "c_pad,w_400,h_100,b_blurred").identity != (try canonical(string: "c_pad,w_400,h_100").identity))
        #expect(try canonical(string: "c_pad,w_400,h_100,b_auto").identity != (try canonical(string: "c_pad,w_400,h_100,b_auto:predominant").identity))
    }

    @Test(arguments: [
        ("b_blurred", "b_blurred: known to Cloudinary, not supported by Derive without a pad mode: it fills the padding of c_pad, c_lpad or c_mpad"),
        ("c_fill,w_10,h_10,b_auto", "b_auto: known to Cloudinary, not supported by Derive without a pad mode: it fills the padding of c_pad, c_lpad or c_mpad"),
        ("c_pad,w_10,h_10,b_auto:border_gradient", "b_auto:border_gradient: known to Cloudinary, not supported by Derive: gradient pad fills; Derive's b_auto modes are border, predominant, border_contrast and predominant_contrast"),
        ("c_pad,w_10,h_10,b_auto:predominant:4", "b_auto:predominant:4: known to Cloudinary, not supported by Derive: the number of colours and the direction go with the gradient modes, which Derive does not draw; b_auto takes border, predominant, border_contrast or predominant_contrast"),
        ("c_pad,w_10,h_10,b_auto:predominent", #"b_auto:predominent: unknown to Cloudinary (no b_auto mode "predominent"); did you mean "predominant"?"#),
        ("c_pad,w_10,h_10,b_blurred:0", "b_blurred:0: unknown to Cloudinary (b_blurred intensity must be between 1 and 2000, got 0)"),
        ("c_pad,w_10,h_10,b_blurred:100:-400", "b_blurred:100:-400: unknown to Cloudinary (b_blurred brightness must be between -300 and 100, got -400)"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues == [reason], "\(issues)")
    }

    @Test func thePlanPlacesTheImageAndLeavesTheFillToTheEngine() throws {
        let plan = try plan(["c_pad,w_400,h_100,b_blurred"], SourceFacts(format: .jpeg, width: 300, height: 300))
        #expect(plan.outputs[0].operations.last == .padFill(at: Rect(x: 150, y: 0, width: 100, height: 100), canvas: Size(400, 100),
                                                            fill: .blurred(intensity: 100, brightness: 0)))
        #expect(AutoPadColor.predominantContrast.color(border: .black, predominant: Color(red: 250, green: 240, blue: 200)) == .black)
        #expect(AutoPadColor.borderContrast.color(border: Color(red: 10, green: 20, blue: 40), predominant: .white) == .white)
    }
}
