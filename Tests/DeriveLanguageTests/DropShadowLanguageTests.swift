@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// `e_dropshadow[:azimuth_<0-360>][;elevation_<0-90>][;spread_<0-100>]` (issue 16, item 2): its
/// string and JSON forms, round trips, refusals, the light's mapping to an offset and a blur,
/// and the canvas the planner gives it.
@Suite struct DropShadowLanguageTests {
    @Test(arguments: [
        ("e_dropshadow", #"{"dropshadow": true}"#, Effect.declared(DeclaredEffect(name: "dropshadow", values: [.number(215), .number(45), .number(50)]))),
        // The SDKs' string (js-url-gen's DropShadow writes the settings given, in this order).
        ("e_dropshadow:azimuth_220;elevation_60;spread_20", #"{"dropshadow": {"azimuth": 220, "elevation": 60, "spread": 20}}"#,
         .declared(DeclaredEffect(name: "dropshadow", values: [.number(220), .number(60), .number(20)]))),
        ("e_dropshadow:spread_5", #"{"dropshadow": {"spread": 5}}"#, .declared(DeclaredEffect(name: "dropshadow", values: [.number(215), .number(45), .number(5)]))),
        ("e_dropshadow:elevation_90;azimuth_0", #"{"dropshadow": {"azimuth": 0, "elevation": 90}}"#, .declared(DeclaredEffect(name: "dropshadow", values: [.number(0), .number(90), .number(50)]))),
        ("e_dropshadow:azimuth_360;elevation_0;spread_100", #"{"dropshadow": {"azimuth": 360, "elevation": 0, "spread": 100}}"#,
         .declared(DeclaredEffect(name: "dropshadow", values: [.number(360), .number(0), .number(100)]))),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    /// Printed with only what differs from Cloudinary's defaults, in the SDKs' order.
    @Test(arguments: [
        ("e_dropshadow", "e_dropshadow"), ("e_dropshadow:azimuth_215;elevation_45;spread_50", "e_dropshadow"),
        ("e_dropshadow:azimuth_220;elevation_60;spread_20", "e_dropshadow:azimuth_220;elevation_60;spread_20"),
        ("e_dropshadow:spread_0;azimuth_90", "e_dropshadow:azimuth_90;spread_0"),
        ("c_scale,w_300/e_dropshadow:elevation_10", "c_scale,w_300/e_dropshadow:elevation_10"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_dropshadow:azimuth_361", "e_dropshadow:azimuth_361: out of Cloudinary's range (e_dropshadow azimuth must be between 0 and 360, got 361)"),
        ("e_dropshadow:elevation_-5", "e_dropshadow:elevation_-5: out of Cloudinary's range (e_dropshadow elevation must be between 0 and 90, got -5)"),
        ("e_dropshadow:elevation_91", "e_dropshadow:elevation_91: out of Cloudinary's range (e_dropshadow elevation must be between 0 and 90, got 91)"),
        ("e_dropshadow:spread_101", "e_dropshadow:spread_101: out of Cloudinary's range (e_dropshadow spread must be between 0 and 100, got 101)"),
        ("e_dropshadow:azimut_200", #"e_dropshadow:azimut_200: unknown to Cloudinary (no e_dropshadow setting "azimut"); did you mean "azimuth"?"#),
        ("e_dropshadow:azimuth_22.5", #"e_dropshadow's azimuth is a whole number, got "22.5""#),
        ("e_dropshadow:spread_10;spread_20", "e_dropshadow gives spread twice"),
        ("e_dropshadow:220:60:20", #"e_dropshadow takes azimuth_<0-360>, elevation_<0-90> and spread_<0-100>, separated by semicolons (e_dropshadow:azimuth_215;elevation_45;spread_50), got "220:60:20""#),
        ("e_dropshadow:220", #"e_dropshadow takes azimuth_<0-360>, elevation_<0-90> and spread_<0-100>, separated by semicolons (e_dropshadow:azimuth_215;elevation_45;spread_50), got "220""#),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues == [reason], "\(issues)")
    }

    /// Cloudinary's DropShadow has no colour: co_ beside it is refused, not ignored.
    @Test func colourIsRefused() {
        let issues = CloudinaryParser().parse("e_dropshadow,co_red").issues.map(\.reason)
        #expect(issues.count == 1 && issues[0].contains("e_dropshadow takes no colour"), "\(issues)")
    }

    @Test(arguments: [
        (#"{"dropshadow": {"azimuth": 400}}"#, "outputs[0].chain[0].dropshadow.azimuth: must be between 0 and 360, got 400"),
        (#"{"dropshadow": {"spread": -1}}"#, "outputs[0].chain[0].dropshadow.spread: must be between 0 and 100, got -1"),
        (#"{"dropshadow": {"height": 3}}"#, "outputs[0].chain[0].dropshadow.height: unknown key; expected one of azimuth, elevation, spread"),
    ])
    func jsonRefusals(step: String, message: String) {
        expectStepRefused(step, message: message)
    }

    /// The shadow falls away from the light (azimuth clockwise from the top): light from
    /// behind (0) casts it down, from the right (90) to the left, from the front (180) up,
    /// from the left (270) to the right; Cloudinary's default (215) up and to the right. On a
    /// 400x300 image the object stands 30 px tall, so at 45° the shadow moves 30 px.
    @Test(arguments: [
        (0, 0, 30), (90, -30, 0), (180, 0, -30), (270, 30, 0), (360, 0, 30), (215, 17, -25), (45, -21, 21),
    ])
    func theShadowFallsAwayFromTheLight(azimuth: Int, x: Int, y: Int) {
        let cast = EffectGeometry.dropShadow(azimuth: azimuth, elevation: 45, spread: 50, on: Size(400, 300))
        #expect(cast.x == x && cast.y == y, "\(cast)")
    }

    /// A lower light casts a longer shadow: 30 × cot(elevation), held to 150 (half the shorter
    /// side) at the horizon, and none straight overhead.
    @Test(arguments: [(0, 150), (10, 148), (20, 82), (30, 52), (45, 30), (60, 17), (75, 8), (90, 0)])
    func aLowerLightCastsALongerShadow(elevation: Int, length: Int) {
        let cast = EffectGeometry.dropShadow(azimuth: 0, elevation: elevation, spread: 50, on: Size(400, 300))
        #expect(cast.x == 0 && cast.y == length, "\(cast)")
    }

    /// The spread is the light's size: a point (0) draws a sharp edge, an area (100) a blur of
    /// 5 % of the shorter side, with a margin of two sigmas for it.
    @Test(arguments: [(0, 0.0, 0), (50, 7.5, 15), (100, 15.0, 30)])
    func theSpreadSoftensTheEdge(spread: Int, sigma: Double, margin: Int) {
        let cast = EffectGeometry.dropShadow(azimuth: 0, elevation: 45, spread: spread, on: Size(400, 300))
        #expect(abs(cast.sigma - sigma) < 1e-9 && cast.margin == margin, "\(cast)")
    }

    /// The planner knows the grown canvas: the offset and the margin on every side.
    @Test(arguments: [
        // 200 px shorter side: (11, -16) at the defaults, sigma 5, margin 10.
        ("c_scale,w_300,h_200/e_dropshadow", Size(331, 236)),
        ("c_scale,w_300,h_200/e_dropshadow:elevation_90;spread_0", Size(300, 200)),
        ("c_scale,w_300,h_200/e_dropshadow:azimuth_90;spread_100", Size(360, 240)),
    ])
    func plannedSize(chain: String, size: Size) throws {
        let plan = try Planner().plan(JobResolver().resolve(TransformationInput.parse(chain)), source: SourceFacts(format: .jpeg, width: 4000, height: 3000))
        #expect(plan.outputs[0].size == size)
    }

    /// e_shadow keeps its geometry through the shared path: offset as given, sigma 4, margin 8.
    @Test func eShadowCastsAsBefore() {
        let cast = EffectGeometry.castShadow(of: .shadow(40, color: .gray, x: .pixels(-5), y: .fraction(0.5)), on: Size(100, 50))
        #expect(cast == CastShadow(x: -5, y: 25, sigma: 4, margin: 8))
    }
}
