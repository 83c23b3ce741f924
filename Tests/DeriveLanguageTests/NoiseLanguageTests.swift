@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_noise[:<level>]`, the first effect the step catalogue alone describes: its string and
/// JSON forms, its printing and its range all come from its declaration.
@Suite struct NoiseLanguageTests {
    static func noise(_ level: Int) -> Effect { .declared(DeclaredEffect(name: "noise", values: [.number(.value(level))])) }

    @Test(arguments: [
        ("e_noise", #"{"noise": true}"#, 0), ("e_noise:30", #"{"noise": 30}"#, 30),
        ("e_noise:100", #"{"noise": {"level": 100}}"#, 100),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, level: Int) throws {
        #expect(try ToneEffectTests.step(text) == .effect(Self.noise(level)))
        #expect(try ToneEffectTests.step(json: json) == .effect(Self.noise(level)))
    }

    @Test(arguments: [("e_noise", "e_noise"), ("e_noise:0", "e_noise"), ("e_noise:45", "e_noise:45")])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// The canonical JSON writes every value, so `e_noise` and `e_noise:0` are one output.
    @Test func theCanonicalFormWritesTheDefault() throws {
        #expect(JSONWriter.canonical(ChainEncoder.json(.effect(Self.noise(0)))) == #"{"noise":{"level":0}}"#)
        #expect(try canonical(string: "e_noise").identity == canonical(string: "e_noise:0").identity)
    }

    @Test(arguments: [
        ("e_noise:101", "e_noise:101: out of Cloudinary's range (e_noise level must be between 0 and 100, got 101)"),
        // An amount is read as every effect's is (a word, an expression), with the same reasons.
        ("e_noise:lots", #"e_noise:lots: unknown to Cloudinary (no value "lots"); e_noise: takes a whole-number amount or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("e_noise:1:2", "e_noise takes one amount"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues == [reason], "\(issues)")
    }

    @Test func jsonRefusesALevelOutOfRange() {
        #expect { try ToneEffectTests.step(json: #"{"noise": {"level": 200}}"#) } throws: {
            "\($0)".contains("noise.level: must be between 0 and 100, got 200")
        }
    }
}
