@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// `e_theme` in strings and JSON: the forms Cloudinary's SDKs write (color_ as a name or bare
/// hex, photosensitivity_ in either order), one model for both, and refusals that name the
/// parameter. Its pixels are ThemeTests'.
@Suite struct ThemeLanguageTests {
    static let red = Color(red: 255, green: 0, blue: 0)

    @Test(arguments: [
        // js-url-gen's theme(...) strings and the transformation reference's forms.
        ("e_theme:color_black:photosensitivity_50", #"{"theme": {"color": "black", "photosensitivity": 50}}"#, Effect.theme(50, color: .black)),
        ("e_theme:color_fff", ##"{"theme": "#ffffff"}"##, .theme(100, color: .white)),
        ("e_theme:color_red", #"{"theme": {"color": "red"}}"#, .theme(100, color: red)),
        ("e_theme:photosensitivity_0:color_f0ebe6", ##"{"theme": {"color": "#f0ebe6", "photosensitivity": 0}}"##,
         .theme(0, color: Color(red: 0xf0, green: 0xeb, blue: 0xe6))),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    @Test(arguments: [
        ("e_theme:color_black:photosensitivity_50", "e_theme:color_black:photosensitivity_50"),
        ("e_theme:color_fff", "e_theme:color_white"),
        ("e_theme:color_rgb:102030", "e_theme:color_102030"),
        ("e_theme:color_f0ebe6:photosensitivity_100", "e_theme:color_f0ebe6"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_theme", "e_theme: unknown to Cloudinary (e_theme needs the new background colour: e_theme:color_<colour>[:photosensitivity_<0-200>])"),
        ("e_theme:black", #"e_theme:black: unknown to Cloudinary (e_theme takes color_<colour> and photosensitivity_<0-200>, got "black")"#),
        ("e_theme:color_blak", #"e_theme:color_blak: unknown to Cloudinary (no colour "blak"); did you mean "black"?"#),
        ("e_theme:color_rgb:00000080", "e_theme:color_rgb:00000080: unknown to Cloudinary (e_theme's colour is the new background, an opaque colour)"),
        ("e_theme:color_black:photosensitivity_high", #"e_theme:color_black:photosensitivity_high: unknown to Cloudinary (photosensitivity takes a whole number from 0 to 200, got "high")"#),
        ("e_theme:color_black:photosensitivity_300", "e_theme:color_black:photosensitivity_300: out of Cloudinary's range (e_theme photosensitivity must be between 0 and 200, got 300)"),
    ])
    func refusals(text: String, reason: String) {
        expectRefusal(text, reason: reason)
    }

    @Test(arguments: [
        (#"{"theme": {"photosensitivity": 10}}"#, "[0].theme.color: is required: the new background colour"),
        (##"{"theme": "#00000080"}"##, "[0].theme.color: is the new background, an opaque colour"),
        (#"{"theme": {"color": "black", "photosensitivity": 201}}"#, "[0].theme.photosensitivity"),
    ])
    func jsonRefusals(json: String, reason: String) {
        let error = #expect(throws: ValidationError.self) { try TransformationInput.parse(#"[\#(json)]"#) }
        #expect(error?.issues.map(\.description).contains { $0.hasPrefix(reason) } == true, "\(error?.issues.map(\.description) ?? [])")
    }
}
