@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_shear` and `e_shadow` (issue 16, item 2): effects that grow the canvas. Their string and
/// JSON forms, round trips, refusals, and the sizes the planner gives them.
@Suite struct ShapeEffectLanguageTests {
    static func shear(_ x: WholeNumber, _ y: WholeNumber) -> Effect { .declared(DeclaredEffect(name: "shear", values: [.number(x), .number(y)])) }

    @Test(arguments: [
        ("e_shear:20:0", #"{"shear": {"x": 20}}"#, ShapeEffectLanguageTests.shear(20, 0)),
        ("e_shear:0:-15", #"{"shear": {"x": 0, "y": -15}}"#, ShapeEffectLanguageTests.shear(0, -15)),
        ("e_shear", #"{"shear": true}"#, ShapeEffectLanguageTests.shear(0, 0)),
        ("e_shadow", #"{"shadow": true}"#, .shadow(40, color: .gray, x: .pixels(8), y: .pixels(8))),
        ("e_shadow:70", #"{"shadow": 70}"#, .shadow(70, color: .gray, x: .pixels(8), y: .pixels(8))),
        ("e_shadow:50,co_black,x_-10,y_20", #"{"shadow": {"strength": 50, "color": "black", "x": -10, "y": 20}}"#,
         .shadow(50, color: .black, x: .pixels(-10), y: .pixels(20))),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    /// The corpus's shadow: offsets as expressions, x_ and y_ belong to the shadow (c_fill
    /// without a size is left out, as Cloudinary ignores it).
    @Test func offsetsMayBeExpressions() throws {
        let step = try ToneEffectTests.step("e_shadow,x_w_div_50,y_w_div_50")
        #expect(step == (try ToneEffectTests.step(json: #"{"shadow": {"x": "w / 50", "y": "w / 50"}}"#)))
        guard case .effect(.shadow(40, .gray, .expression, .expression)) = step else {
            Issue.record("\(step)")
            return
        }
    }

    @Test(arguments: [
        ("e_shear:20:0", "e_shear:20:0"), ("e_shear", "e_shear:0:0"),
        ("e_shadow", "e_shadow,co_gray,x_8,y_8"), ("e_shadow:60,co_black,x_10,y_10", "e_shadow:60,co_black,x_10,y_10"),
        ("e_shadow,x_w_div_50,y_0.1", "e_shadow,co_gray,x_w_div_50,y_0.1"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_shear:90:0", "e_shear:90:0: known to Cloudinary, not supported by Derive: beyond Derive's limits: e_shear x must be between -89 and 89, got 90"),
        ("e_shear:1:2:3", "e_shear:1:2:3: unknown to Cloudinary (e_shear takes an x and a y)"),
        ("e_shadow:101", "e_shadow:101: out of Cloudinary's range (e_shadow strength must be between 0 and 100, got 101)"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.contains { $0.hasPrefix(reason) }, "\(issues)")
    }

    /// The planner knows the grown canvas: a shear by 45° along x widens by the height, a shadow
    /// adds its offset and a margin of 8 px on each side; the corpus's shadow is w/50 = 6 px.
    @Test(arguments: [
        ("c_scale,w_300,h_200/e_shear:45:0", Size(500, 200)),
        ("c_scale,w_300,h_200/e_shear:0:-45", Size(300, 500)),
        ("c_scale,w_300,h_200/e_shadow", Size(324, 224)),
        ("c_scale,w_300,h_200/e_shadow,x_-20,y_0", Size(336, 216)),
        ("c_scale,w_300/c_fill,e_shadow,x_w_div_50,y_w_div_50", Size(322, 247)),
    ])
    func plannedSize(chain: String, size: Size) throws {
        let plan = try Planner().plan(JobResolver().resolve(TransformationInput.parse(chain)), source: SourceFacts(format: .jpeg, width: 4000, height: 3000))
        #expect(plan.outputs[0].size == size)
    }

    @Test func geometryPlacesTheImageAndItsShadow() {
        let g = CastShadow(x: -5, y: 12, sigma: EffectGeometry.shadowSigma, margin: EffectGeometry.shadowMargin).placement(on: Size(100, 50))
        #expect(g.canvas == Size(121, 78))
        #expect(g.image.x == 13 && g.image.y == 8 && g.shadow.x == 8 && g.shadow.y == 20)
    }
}

/// `e_oil_paint[:<strength>]` (issue 16, item 2).
@Suite struct OilPaintLanguageTests {
    @Test(arguments: [("e_oil_paint", #"{"oil_paint": true}"#, Effect.named("oil_paint", 30)), ("e_oil_paint:70", #"{"oil_paint": {"strength": 70}}"#, .named("oil_paint", 70))])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    @Test func roundTripsAndRange() throws {
        try expectRoundTrip("e_oil_paint:30", printed: "e_oil_paint")
        try expectRoundTrip("e_oil_paint:80", printed: "e_oil_paint:80")
        #expect(CloudinaryParser().parse("e_oil_paint:101").issues.map(\.reason) == ["e_oil_paint:101: out of Cloudinary's range (e_oil_paint strength must be between 0 and 100, got 101)"])
    }
}
