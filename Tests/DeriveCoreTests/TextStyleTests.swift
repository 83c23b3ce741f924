@testable import DeriveCore
import Testing

/// Text decorations and letter spacing in text layers (issue 16, item 3): string and JSON
/// forms, canonical round trip, and what is still refused.
@Suite struct TextStyleTests {
    static func styled(underline: Bool = false, strikethrough: Bool = false, letterSpacing: Int? = nil) -> Step {
        var t = TextLayer(text: "Style", font: "Verdana", size: 50, bold: true)
        t.underline = underline
        t.strikethrough = strikethrough
        t.letterSpacing = letterSpacing
        return .overlay(Overlay(source: .text(t)))
    }

    @Test(arguments: [
        ("l_text:Verdana_50_bold_underline_letter_spacing_14:Style/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Style", "font": "Verdana", "size": 50, "bold": true, "underline": true, "letterSpacing": 14}}}"#,
         styled(underline: true, letterSpacing: 14)),
        ("l_text:Verdana_50_bold_strikethrough:Style/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Style", "font": "Verdana", "size": 50, "bold": true, "strikethrough": true}}}"#, styled(strikethrough: true)),
        ("l_text:Verdana_50_bold_letter_spacing_-3:Style/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Style", "font": "Verdana", "size": 50, "bold": true, "letterSpacing": -3}}}"#, styled(letterSpacing: -3)),
    ])
    func stringAndJSONMeanTheSameText(text: String, json: String, step: Step) throws {
        #expect(try ToneEffectTests.step(text) == step)
        #expect(try ToneEffectTests.step(json: json) == step)
    }

    @Test(arguments: [
        ("l_text:Verdana_50_bold_underline_letter_spacing_14:Style/fl_layer_apply", "l_text:Verdana_50_bold_underline_letter_spacing_14:Style/fl_layer_apply"),
        ("l_text:Verdana_50_letter_spacing_2_strikethrough_underline:Style/fl_layer_apply", "l_text:Verdana_50_underline_strikethrough_letter_spacing_2:Style/fl_layer_apply"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// A plain text keeps the canonical JSON it always had (no new keys).
    @Test func plainTextKeepsItsIdentity() throws {
        let json = ChainEncoder.json([try ToneEffectTests.step("l_text:Verdana_50:Style/fl_layer_apply")])
        #expect(!"\(json)".contains("underline") && !"\(json)".contains("letterSpacing"))
    }

    @Test func spacingTakesWholePixels() {
        #expect(CloudinaryParser().parse("l_text:Verdana_50_letter_spacing_wide:Style").issues.map(\.reason)
            == ["l_text:Verdana_50_letter_spacing_wide: unknown to Cloudinary (letter_spacing takes whole pixels: letter_spacing_<n>)"])
    }
}
