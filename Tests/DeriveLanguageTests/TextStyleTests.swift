@testable import DeriveLanguage
import DeriveTestSupport
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

/// Alignment, line spacing, strokes, antialiasing and fl_text_no_trim (issue 16, item 3).
@Suite struct TextLayoutStyleTests {
    static func styled(_ change: (inout TextLayer) -> Void) -> Step {
        var t = TextLayer(text: "Two\nlines", font: "Verdana", size: 50)
        change(&t)
        return .overlay(Overlay(source: .text(t)))
    }

    @Test(arguments: [
        ("l_text:Verdana_50_center:Two%0Alines/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "alignment": "center"}}}"#, styled { $0.alignment = .center }),
        ("l_text:Verdana_50_end:Two%0Alines/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "alignment": "right"}}}"#, styled { $0.alignment = .right }),
        ("l_text:Verdana_50_justify_line_spacing_-18:Two%0Alines/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "alignment": "justify", "lineSpacing": -18}}}"#,
         styled { $0.alignment = .justify; $0.lineSpacing = -18 }),
        ("l_text:Verdana_50_stroke:Two%0Alines,co_white,bo_3px_solid_black/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "color": "white", "stroke": {"width": 3, "color": "black"}}}}"#,
         styled { $0.color = Color(red: 255, green: 255, blue: 255); $0.stroke = TextStroke(width: 3, color: .black) }),
        ("l_text:Verdana_50_antialias_none:Two%0Alines/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "antialias": false}}}"#, styled { $0.antialias = false }),
        ("l_text:Verdana_50:Two%0Alines,fl_text_no_trim/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "noTrim": true}}}"#, styled { $0.noTrim = true }),
        ("l_text:Verdana_50:Two%0Alines/fl_text_no_trim/fl_layer_apply",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "noTrim": true}}}"#, styled { $0.noTrim = true }),
        ("l_text:Verdana_50:Two%0Alines/fl_layer_apply,fl_text_no_trim",
         #"{"overlay": {"text": {"text": "Two\nlines", "font": "Verdana", "size": 50, "noTrim": true}}}"#, styled { $0.noTrim = true }),
    ])
    func stringAndJSONMeanTheSameText(text: String, json: String, step: Step) throws {
        #expect(try ToneEffectTests.step(text) == step)
        #expect(try ToneEffectTests.step(json: json) == step)
    }

    @Test(arguments: [
        ("l_text:Verdana_50_start_line_spacing_5:Hi/fl_layer_apply", "l_text:Verdana_50_line_spacing_5_left:Hi/fl_layer_apply"),
        ("l_text:Arial_40_bold_stroke:Hi,bo_2px_solid_red,co_yellow/fl_layer_apply,g_south",
         "l_text:Arial_40_bold_stroke:Hi,co_yellow,bo_2px_solid_red/fl_layer_apply,g_south"),
        ("l_text:Arial_40_antialias_none_right:Hi,fl_text_no_trim,g_north", "l_text:Arial_40_right_antialias_none:Hi,fl_text_no_trim/fl_layer_apply,g_north"),
        // The documentation's example of a real URL: fl_text_no_trim and the style beside co_ and c_fit.
        ("c_fit,co_white,fl_text_no_trim,l_text:Arial_80_center_line_spacing_-18:Code%20Splitting,w_1100/fl_layer_apply,y_-30",
         "l_text:Arial_80_line_spacing_-18_center:Code%20Splitting,co_white,c_fit,w_1100,fl_text_no_trim/fl_layer_apply,y_-30"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// The grey antialias modes are how libvips renders already: accepted, the same identity,
    /// and the notes say so.
    @Test(arguments: ["gray", "fast", "good", "best", "default"])
    func greyAntialiasingChangesNothingAndSaysSo(mode: String) throws {
        let result = CloudinaryParser().parse("l_text:Arial_40_antialias_\(mode):Hi/fl_layer_apply")
        #expect(result.issues.isEmpty)
        #expect(result.notes.contains { $0.contains("antialias_\(mode) is grey antialiasing") && $0.contains("it changes nothing") })
        #expect(try canonical(string: "l_text:Arial_40_antialias_\(mode):Hi/fl_layer_apply").identity
            == (try canonical(string: "l_text:Arial_40:Hi/fl_layer_apply").identity))
    }

    /// A text without the new styles keeps the canonical JSON it always had.
    @Test func plainTextKeepsItsIdentity() throws {
        let json = "\(ChainEncoder.json([try ToneEffectTests.step("l_text:Verdana_50:Style/fl_layer_apply")]))"
        for key in ["lineSpacing", "alignment", "stroke", "antialias", "noTrim"] { #expect(!json.contains(key), "\(key) in \(json)") }
    }

    @Test(arguments: [
        ("l_text:Arial_40_antialias_subpixel:Hi", "l_text:Arial_40_antialias_subpixel: known to Cloudinary, not supported by Derive: subpixel antialiasing"),
        ("l_text:Arial_40_antialias_sharp:Hi", #"l_text:Arial_40_antialias_sharp: unknown to Cloudinary (no antialias mode "sharp"); Cloudinary's are none, gray, subpixel, fast, good and best"#),
        ("l_text:Arial_40_hinting_strong:Hi", "l_text:Arial_40_hinting_strong: unknown to Cloudinary (hinting takes a mode: hinting_<none|slight|medium|full>)"),
        ("l_text:Arial_40_line_spacing_wide:Hi", "l_text:Arial_40_line_spacing_wide: unknown to Cloudinary (line_spacing takes whole pixels: line_spacing_<n>)"),
        ("l_text:Arial_40_stroke:Hi", "l_text:Arial_40_stroke_stroke: the stroke's width and colour are given by bo_<width>px_solid_<colour> beside l_text"),
        ("l_text:Arial_40_stroke:Hi,bo_200px_solid_black", "text.stroke.width must be between 1 and 50, got 200"),
        ("l_text:Arial_40_line_spacing_-60:Hi", "text.lineSpacing must be between -39 and 1000, got -60"),
        ("l_logo,fl_text_no_trim", "fl_text_no_trim applies to a text layer (l_text:…), not an image layer"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.contains { $0.contains(reason) }, "\(issues)")
    }

    @Test(arguments: [
        (#"{"overlay": {"text": {"text": "a", "alignment": "middle"}}}"#, "[0].overlay.text.alignment: unknown alignment"),
        (#"{"overlay": {"text": {"text": "a", "stroke": {"width": 2}}}}"#, "[0].overlay.text.stroke.color: is required"),
    ])
    func jsonRefusals(json: String, message: String) {
        do {
            _ = try TransformationInput.parse(#"[\#(json)]"#)
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.issues.map(\.description).contains { $0.hasPrefix(message) }, "\(error.issues.map(\.description))")
        }
    }
}

