@testable import DeriveLanguage
import DeriveTestSupport
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
        ("c_pad,w_400,h_100,b_auto:border_gradient", #"{"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": {"auto": "border_gradient"}}}"#,
         .gradient(AutoGradient(source: .border))),
        ("c_pad,w_400,h_100,b_auto:predominant_gradient_contrast:4:diagonal_desc",
         #"{"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": {"gradient": {"from": "predominant", "contrast": true, "colors": 4, "direction": "diagonal_desc"}}}}"#,
         .gradient(AutoGradient(source: .predominant, contrast: true, colors: 4, direction: .diagonalDesc))),
        ("c_pad,w_400,h_100,b_auto:border_gradient:vertical", #"{"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": {"gradient": {"direction": "vertical"}}}}"#,
         .gradient(AutoGradient(source: .border, direction: .vertical))),
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
        ("c_pad,w_400,h_100,b_auto:border_gradient:2:horizontal", "c_pad,w_400,h_100,b_auto:border_gradient"),
        ("c_pad,w_400,h_100,b_auto:predominant_gradient:4", "c_pad,w_400,h_100,b_auto:predominant_gradient:4"),
        ("c_pad,w_400,h_100,b_auto:border_gradient_contrast:diagonal_asc", "c_pad,w_400,h_100,b_auto:border_gradient_contrast:2:diagonal_asc"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func aFillIsNotAColour() throws {
        #expect(try canonical(string: "c_pad,w_400,h_100,b_blurred").identity != (try canonical(string: "c_pad,w_400,h_100").identity))
        #expect(try canonical(string: "c_pad,w_400,h_100,b_auto").identity != (try canonical(string: "c_pad,w_400,h_100,b_auto:predominant").identity))
    }

    @Test(arguments: [
        ("c_fill,w_10,h_10,b_auto", "b_auto: known to Cloudinary, not supported by Derive without a pad mode: it fills the padding of c_pad, c_lpad or c_mpad"),
        ("c_pad,w_10,h_10,b_auto:predominant:4", "b_auto:predominant:4: b_auto:predominant takes no number of colours or direction; they go with the gradient modes (border_gradient, predominant_gradient, and their _contrast)"),
        ("c_pad,w_10,h_10,b_auto:border_gradient:3", #"b_auto:border_gradient:3: unknown to Cloudinary (no number of gradient colours "3"); b_auto's gradients take 2 or 4"#),
        ("c_pad,w_10,h_10,b_auto:border_gradient:2:diagonal", #"b_auto:border_gradient:2:diagonal: unknown to Cloudinary (no gradient direction "diagonal"); directions: horizontal, vertical, diagonal_desc, diagonal_asc"#),
        ("c_pad,w_10,h_10,b_auto:border_gradient:2:vertical:x", #"b_auto:border_gradient:2:vertical:x: b_auto:border_gradient takes a number of colours (2 or 4) and a direction, got "x""#),
        ("c_pad,w_10,h_10,b_auto:predominent", #"b_auto:predominent: unknown to Cloudinary (no b_auto mode "predominent"); did you mean "predominant"?"#),
        ("c_pad,w_10,h_10,b_blurred:0", "b_blurred:0: out of Cloudinary's range (b_blurred intensity must be between 1 and 2000, got 0)"),
        ("c_pad,w_10,h_10,b_blurred:100:-400", "b_blurred:100:-400: out of Cloudinary's range (b_blurred brightness must be between -300 and 100, got -400)"),
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

    /// The gradient's colours: the image cut into bands across the direction, each band's
    /// border median or predominant colour, in order; the table runs through them evenly.
    @Test func gradientColoursComeFromTheBandsInOrder() {
        // 4x2: the left half red, the right half blue; the bottom-right pixel green.
        let red: [UInt8] = [255, 0, 0, 255], blue: [UInt8] = [0, 0, 255, 255], green: [UInt8] = [0, 255, 0, 255]
        let image = PixelBuffer(width: 4, height: 2, bands: 4, pixels: red + red + blue + blue + red + red + blue + green)
        let rb = [Color(red: 255, green: 0, blue: 0), Color(red: 0, green: 0, blue: 255)]
        #expect(GradientPad.colors(of: image, gradient: AutoGradient(source: .predominant)) == rb)
        #expect(GradientPad.colors(of: image, gradient: AutoGradient(source: .border, contrast: true)) == [.white, .white])
        let four = GradientPad.colors(of: image, gradient: AutoGradient(source: .predominant, colors: 4))
        #expect(four == [rb[0], rb[0], rb[1], rb[1]])
        // Vertical: each band is a row, half red and half blue: the median is the same for both.
        let vertical = GradientPad.colors(of: image, gradient: AutoGradient(source: .border, direction: .vertical))
        #expect(vertical.count == 2)
        let table = GradientPad.lookupTable([.black, .white, .black])
        #expect(table.count == 768 && Array(table[0..<3]) == [0, 0, 0] && Array(table[765..<768]) == [0, 0, 0])
        #expect(table[127 * 3] > 250 && table[64 * 3] > 120 && table[64 * 3] < 135)
        #expect(GradientDirection.diagonalAsc.position(x: 0, y: 1) == 0 && GradientDirection.diagonalAsc.position(x: 1, y: 0) == 1)
    }
}
