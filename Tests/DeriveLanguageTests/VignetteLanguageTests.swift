@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_vignette[:<strength>]` (issue 16, item 2, "e_vignette variants"): Cloudinary documents a
/// strength of 0 to 100 (default 20) and its SDKs write nothing else (Vignette(strength)); every
/// form of it is read, as a number, an expression or a variable, in strings and JSON.
@Suite struct VignetteLanguageTests {
    @Test(arguments: [
        ("e_vignette", #"{"vignette": true}"#, Effect.named("vignette", 20)),
        ("e_vignette:0", #"{"vignette": 0}"#, .named("vignette", 0)),
        ("e_vignette:100", #"{"vignette": {"strength": 100}}"#, .named("vignette", 100)),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    /// Strength 0 changes nothing, so the canonical form leaves it out.
    @Test(arguments: [("e_vignette:20", "e_vignette"), ("e_vignette:60", "e_vignette:60"), ("e_vignette:0", ""),
                      ("$v_60/e_vignette:$v", "$v_60/e_vignette:$v")])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_vignette:101", "e_vignette:101: out of Cloudinary's range (e_vignette strength must be between 0 and 100, got 101)"),
        ("e_vignette:-1", "e_vignette:-1: out of Cloudinary's range (e_vignette strength must be between 0 and 100, got -1)"),
        ("e_vignette:20:30", "e_vignette takes one amount"),
        ("e_vignette:2.5", #"e_vignette takes a whole-number amount, got "2.5""#),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues == [reason], "\(issues)")
    }
}
