@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_gradient_fade[:symmetric][:<strength>]` with x_ or y_ (issue 16, item 2): string and
/// JSON forms, round trips, refusals and the mask.
@Suite struct GradientFadeLanguageTests {
    @Test(arguments: [
        ("e_gradient_fade", #"{"gradient_fade": true}"#, Effect.gradientFade(20, edges: .one, x: nil, y: nil)),
        ("e_gradient_fade:60,y_-0.4", #"{"gradient_fade": {"strength": 60, "y": -0.4}}"#, .gradientFade(60, edges: .one, x: nil, y: .fraction(-0.4))),
        ("e_gradient_fade:symmetric,x_30", #"{"gradient_fade": {"symmetric": true, "x": 30}}"#, .gradientFade(20, edges: .symmetric, x: .pixels(30), y: nil)),
        ("e_gradient_fade:symmetric:50,x_0.2", #"{"gradient_fade": {"strength": 50, "symmetric": true, "x": 0.2}}"#, .gradientFade(50, edges: .symmetric, x: .fraction(0.2), y: nil)),
        ("e_gradient_fade:symmetric_pad,x_0.5", #"{"gradient_fade": {"type": "symmetric_pad", "x": 0.5}}"#, .gradientFade(20, edges: .symmetricPad, x: .fraction(0.5), y: nil)),
        ("e_gradient_fade:symmetric:40", #"{"gradient_fade": {"type": "symmetric", "strength": 40}}"#, .gradientFade(40, edges: .symmetric, x: nil, y: nil)),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    @Test(arguments: [
        ("e_gradient_fade", "e_gradient_fade"), ("e_gradient_fade:20,y_0.5", "e_gradient_fade,y_0.5"),
        ("e_gradient_fade:symmetric:50,x_0.2", "e_gradient_fade:symmetric:50,x_0.2"), ("e_gradient_fade:80,y_-40", "e_gradient_fade:80,y_-40"),
        ("e_gradient_fade:symmetric_pad:20,x_0.5", "e_gradient_fade:symmetric_pad,x_0.5"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        // Cloudinary's reference: "Only one direction can be specified".
        ("e_gradient_fade,x_0.2,y_0.2", "e_gradient_fade: unknown to Cloudinary (e_gradient_fade y fades from one edge: give x or y, not both (chain two fades for two edges))"),
        ("e_gradient_fade:one", #"e_gradient_fade:one: unknown to Cloudinary (no e_gradient_fade type "one"); types: symmetric, symmetric_pad"#),
        ("e_gradient_fade:radial", #"e_gradient_fade:radial: unknown to Cloudinary (no e_gradient_fade type "radial"); types: symmetric, symmetric_pad"#),
        ("e_gradient_fade:101", "e_gradient_fade:101: out of Cloudinary's range (e_gradient_fade strength must be between 0 and 100, got 101)"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.contains { $0.hasSuffix(reason) || $0 == reason }, "\(issues)")
    }

    /// The mask: 0 at the faded edge, 255 past the band, linear at strength 20 and fainter at
    /// a higher one; symmetric fades both ends.
    @Test func theMaskRampsOverTheBand() {
        let linear = Masks.gradientFade(width: 1, height: 10, band: 5, vertical: true, fromEnd: false, symmetric: false, strength: 20)
        #expect(linear[0] < 30 && linear[4] > 220 && linear[5...].allSatisfy { $0 == 255 })
        #expect(zip(linear.dropLast(), linear.dropFirst()).allSatisfy { $0 <= $1 })
        let strong = Masks.gradientFade(width: 1, height: 10, band: 5, vertical: true, fromEnd: false, symmetric: false, strength: 60)
        #expect(strong[2] < linear[2])
        let fromBottom = Masks.gradientFade(width: 1, height: 10, band: 5, vertical: true, fromEnd: true, symmetric: false, strength: 20)
        #expect(fromBottom == linear.reversed())
        let both = Masks.gradientFade(width: 10, height: 1, band: 3, vertical: false, fromEnd: false, symmetric: true, strength: 20)
        #expect(both[0] < 60 && both[9] < 60 && both[5] == 255)
        #expect(Masks.gradientFade(width: 4, height: 4, band: 4, vertical: true, fromEnd: false, symmetric: false, strength: 0).allSatisfy { $0 == 255 })
    }

    /// symmetric_pad after a pad crop: the fade goes before the padding (symmetric, on the
    /// image), and a colour pad is flattened onto beneath it; without a pad before it, it stays
    /// as written. The symmetric form keeps the identity it had before symmetric_pad existed.
    @Test func symmetricPadFadesTheImageBeforeItIsPadded() throws {
        let facts = SourceFacts(format: .jpeg, width: 300, height: 300)
        let fade = Effect.gradientFade(20, edges: .symmetric, x: .fraction(0.3), y: nil)
        let colour = try plan(["c_pad,w_400,h_100,b_black/e_gradient_fade:symmetric_pad,x_0.3"], facts).outputs[0].operations
        #expect(Array(colour.suffix(3)) == [.effect(fade), .embed(at: Rect(x: 150, y: 0, width: 100, height: 100), canvas: Size(400, 100), background: .black), .flatten(.black)], "\(colour)")
        let fill = try plan(["c_pad,w_400,h_100,b_auto:border_gradient,e_gradient_fade:symmetric_pad,x_0.3"], facts).outputs[0].operations
        #expect(Array(fill.suffix(2)) == [.effect(fade), .padFill(at: Rect(x: 150, y: 0, width: 100, height: 100), canvas: Size(400, 100), fill: .gradient(AutoGradient(source: .border)))], "\(fill)")
        let alone = try plan(["c_scale,w_100/e_gradient_fade:symmetric_pad,x_0.3"], facts).outputs[0].operations
        #expect(alone.last == .effect(.gradientFade(20, edges: .symmetricPad, x: .fraction(0.3), y: nil)))
        #expect(JSONWriter.canonical(try canonical(string: "e_gradient_fade:symmetric,x_0.3").json).contains(#""symmetric":true"#))
    }
}
