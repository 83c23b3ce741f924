@testable import DeriveCore
import Testing

/// `e_outline[:<mode>][:<width>][:<blur>]` with co_ (issue 16, item 2).
@Suite struct OutlineLanguageTests {
    @Test(arguments: [
        ("e_outline", #"{"outline": true}"#, Effect.outline(.outer, width: 5, blur: 0, color: .black)),
        ("e_outline:inner:8,co_red", #"{"outline": {"mode": "inner", "width": 8, "color": "red"}}"#, .outline(.inner, width: 8, blur: 0, color: Color(red: 255, green: 0, blue: 0))),
        ("e_outline:outer:10:200,co_white", #"{"outline": {"width": 10, "blur": 200, "color": "white"}}"#, .outline(.outer, width: 10, blur: 200, color: .white)),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    @Test(arguments: [
        ("e_outline", "e_outline"), ("e_outline:outer:5:0,co_black", "e_outline"), ("e_outline:inner", "e_outline:inner"),
        ("e_outline:outer:12,co_red", "e_outline:outer:12,co_red"), ("e_outline:inner:5:300", "e_outline:inner:5:300"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_outline:fill", "e_outline:fill: known to Cloudinary, not supported by Derive: the fill outline modes fill the image's transparent areas, which Derive does not; it draws outer and inner"),
        ("e_outline:inner_fill:5", "e_outline:inner_fill:5: known to Cloudinary, not supported by Derive: the inner_fill outline modes fill the image's transparent areas, which Derive does not; it draws outer and inner"),
        ("e_outline:middle", #"e_outline:middle: unknown to Cloudinary (no e_outline mode "middle"); modes: outer, inner, inner_fill, fill"#),
        ("e_outline:outer:101", "e_outline:outer:101: unknown to Cloudinary (e_outline width must be between 1 and 100, got 101)"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues == [reason], "\(issues)")
    }
}
