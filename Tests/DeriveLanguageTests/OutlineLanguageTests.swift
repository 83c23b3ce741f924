@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_outline[:<mode>][:<width>][:<blur>]` with co_ (issue 16, item 2).
@Suite struct OutlineLanguageTests {
    static func outline(_ mode: String, width: WholeNumber, blur: WholeNumber, color: Color) -> Effect {
        .declared(DeclaredEffect(name: "outline", values: [.choice(mode), .number(width), .number(blur), .color(color)]))
    }

    @Test(arguments: [
        ("e_outline", #"{"outline": true}"#, OutlineLanguageTests.outline("outer", width: 5, blur: 0, color: .black)),
        ("e_outline:inner:8,co_red", #"{"outline": {"mode": "inner", "width": 8, "color": "red"}}"#, OutlineLanguageTests.outline("inner", width: 8, blur: 0, color: Color(red: 255, green: 0, blue: 0))),
        ("e_outline:outer:10:200,co_white", #"{"outline": {"width": 10, "blur": 200, "color": "white"}}"#, OutlineLanguageTests.outline("outer", width: 10, blur: 200, color: .white)),
        // TeePublic's sticker chains: a white outline, then the design's holes filled white.
        ("e_outline:inner_fill:1,co_white", #"{"outline": {"mode": "inner_fill", "width": 1, "color": "white"}}"#, OutlineLanguageTests.outline("inner_fill", width: 1, blur: 0, color: .white)),
        ("e_outline:fill", #"{"outline": {"mode": "fill"}}"#, OutlineLanguageTests.outline("fill", width: 5, blur: 0, color: .black)),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    @Test(arguments: [
        ("e_outline", "e_outline"), ("e_outline:outer:5:0,co_black", "e_outline"), ("e_outline:inner", "e_outline:inner"),
        ("e_outline:outer:12,co_red", "e_outline:outer:12,co_red"), ("e_outline:inner:5:300", "e_outline:inner:5:300"),
        ("e_outline:inner_fill:1,co_white", "e_outline:inner_fill:1,co_white"), ("e_outline:fill", "e_outline:fill"), ("e_outline:fill:5:100", "e_outline:fill:5:100"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_outline:inner_fil", #"e_outline:inner_fil: unknown to Cloudinary (no e_outline mode "inner_fil"); did you mean "inner_fill"?"#),
        ("e_outline:middle", #"e_outline:middle: unknown to Cloudinary (no e_outline mode "middle"); modes: outer, inner, inner_fill, fill"#),
        ("e_outline:outer:101", "e_outline:outer:101: out of Cloudinary's range (e_outline width must be between 1 and 100, got 101)"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues == [reason], "\(issues)")
    }

    @Test func jsonRefusesAnUnknownMode() {
        #expect { try ToneEffectTests.step(json: #"{"outline": {"mode": "middle"}}"#) } throws: {
            "\($0)".contains(#"expected one of "outer", "inner", "inner_fill", "fill", got "middle""#)
        }
    }

    /// The holes a shape encloses, and not the transparency that reaches the edge.
    @Test func enclosedHolesAreThoseTheEdgeCannotReach() {
        // 7x5: a ring of opaque pixels around a 3x1 hole, a transparent column at the left edge,
        // and a gap in the ring at the bottom right that lets the outside in below it.
        let rows = ["0111110",
                    "0100010",
                    "0111110",
                    "0100100",
                    "0111100"]
        let alpha = rows.flatMap { $0.map { $0 == "1" ? UInt8(255) : 0 } }
        let holes = Masks.enclosedHoles(alpha: alpha, width: 7, height: 5)
        let expected = ["0000000",
                        "0011100",
                        "0000000",
                        "0011000",
                        "0000000"].flatMap { $0.map { $0 == "1" ? UInt8(255) : 0 } }
        #expect(holes == expected)
    }
}
