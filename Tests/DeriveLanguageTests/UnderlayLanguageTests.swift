@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `u_` underlays (issue 16, item 3): the same layers as `l_`, drawn beneath the image; their
/// string and JSON forms and canonical round trip.
@Suite struct UnderlayLanguageTests {
    @Test(arguments: [
        ("u_site_bg/c_scale,h_200,w_200/e_brightness:100/fl_layer_apply",
         #"{"overlay": {"image": "site_bg", "underlay": true, "chain": [{"resize": {"width": 200, "height": 200}}, {"brightness": 100}]}}"#,
         Overlay(source: .image("site_bg"), chain: [.resize(Resize(width: .pixels(200), height: .pixels(200))), .effect(.named("brightness", 100))], underlay: true)),
        ("u_brand:bg,g_north,y_10", #"{"overlay": {"image": "brand/bg", "underlay": true, "gravity": "north", "y": 10}}"#,
         Overlay(source: .image("brand/bg"), gravity: .compass(.north), y: .pixels(10), underlay: true)),
        ("u_text:Arial_40:Behind/fl_layer_apply", #"{"overlay": {"text": {"text": "Behind", "font": "Arial", "size": 40}, "underlay": true}}"#,
         Overlay(source: .text(TextLayer(text: "Behind", font: "Arial", size: 40)), underlay: true)),
    ])
    func stringAndJSONMeanTheSameUnderlay(text: String, json: String, underlay: Overlay) throws {
        #expect(try ToneEffectTests.step(text) == .overlay(underlay))
        #expect(try ToneEffectTests.step(json: json) == .overlay(underlay))
    }

    @Test(arguments: [
        ("u_site_bg/c_scale,h_200,w_200/e_brightness:100/fl_layer_apply", "u_site_bg/c_scale,w_200,h_200/e_brightness:100/fl_layer_apply"),
        ("u_bg,g_north,y_10", "u_bg/fl_layer_apply,g_north,y_10"),
        ("u_text:Arial_40_bold:Behind,co_white/fl_layer_apply", "u_text:Arial_40_bold:Behind,co_white/fl_layer_apply"),
        ("l_logo/u_bg/fl_layer_apply/fl_layer_apply", "l_logo/u_bg/fl_layer_apply/fl_layer_apply"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// An underlay is not the overlay of the same layer: the canonical JSON differs.
    @Test func anUnderlayIsNotItsOverlay() throws {
        let under = try ToneEffectTests.step("u_bg/fl_layer_apply"), over = try ToneEffectTests.step("l_bg/fl_layer_apply")
        #expect(under != over)
        #expect(ChainEncoder.json([under]) != ChainEncoder.json([over]))
    }

    /// Refusals name u_, not l_.
    @Test(arguments: [
        ("u_text:hello", "u_text:hello: unknown to Cloudinary (a text layer gives its font and size, then its text: l_text:<font>_<size>:<text>)"),
        ("u_bad%name", #"u_ expects a name such as u_logo or u_folder:logo, u_fetch:<base64url URL> or u_text:<font>_<size>:<text>, got "bad%name""#),
    ])
    func refusalsNameTheUnderlay(text: String, reason: String?) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        if let reason { #expect(issues == [reason]) } else { #expect(issues.isEmpty, "\(issues)") }
    }
}
