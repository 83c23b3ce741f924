@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_redeye`: declared in the catalogue, no parameters, needs faces.
@Suite struct RedeyeLanguageTests {
    @Test func stringAndJSONMeanTheSameEffect() throws {
        let effect = Effect.declared(DeclaredEffect(name: "redeye", values: []))
        #expect(try ToneEffectTests.step("e_redeye") == .effect(effect))
        #expect(try ToneEffectTests.step(json: #"{"redeye": true}"#) == .effect(effect))
        #expect(effect.needsFaces && !effect.isPointwise)
        try expectRoundTrip("e_redeye", printed: "e_redeye")
    }

    @Test func takesNoValue() {
        #expect(CloudinaryParser().parse("e_redeye:5").issues.map(\.reason) == ["e_redeye takes no amount"])
    }
}
