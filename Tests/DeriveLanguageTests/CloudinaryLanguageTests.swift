@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// What a refused string says first, and the strings Derive used to misread (issue 15, items 6
/// and 7).
@Suite struct LanguageTests {
    /// The first line names the parameter and its value and says whether Cloudinary has it; it
    /// is the only line, because everything after it would follow from it.
    @Test(arguments: [
        ("if_du_gt_30,c_scale,w_100", #"chain component 0 ("if_du_gt_30,c_scale,w_100"): if_du_gt_30: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; du is a duration, which Derive does not read from a source's header"#),
        ("$f_!png!/f_$f", #"chain component 1 ("f_$f"): f_$f: known to Cloudinary, not supported by Derive: user-defined variables in output settings, flags and named transformations, which are fixed before the chain runs, and in a name beside an image layer's l_ in the long form (l_logo,c_$mode/…/fl_layer_apply); they work in numbers (w_$w), names (c_$mode, e_$effect, l_$logo, l_text:$style:..., a text layer's style in either form) and as $(name) in l_text"#),
        ("c_crop,w_100,h_100,x_tar_mul_10", #"chain component 0 ("c_crop,w_100,h_100,x_tar_mul_10"): x_tar_mul_10: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"#),
        ("c_limit,w_auto:100/e_sepia", #"chain component 1 ("e_sepia"): "e_sepia" after w_auto:100: known to Cloudinary, not supported by Derive: a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"#),
        ("l_video:dog/fl_layer_apply,g_north", #"chain component 0 ("l_video:dog"): l_video:dog: known to Cloudinary, not supported by Derive: video and audio only; Derive makes images"#),
        ("l_private:logo,g_north", #"chain component 0 ("l_private:logo,g_north"): l_private:logo: known to Cloudinary, not supported by Derive: Cloudinary's access-controlled assets; a Derive layer is a name, a URL (l_fetch:) or text"#),
        ("e_gen_remove:prompt_dog/e_gen_fill", #"chain component 0 ("e_gen_remove:prompt_dog"): e_gen_remove:prompt_dog: known to Cloudinary, not supported by Derive: generative AI, which Derive does not run"#),
        ("e_background_removal/b_lightblue,c_pad,w_1.0", #"chain component 0 ("e_background_removal"): e_background_removal: known to Cloudinary, not supported by Derive: a Cloudinary add-on or AI feature that Derive does not have"#),
        ("c_imagga_crop,w_100,h_100", #"chain component 0 ("c_imagga_crop,w_100,h_100"): c_imagga_crop: known to Cloudinary, not supported by Derive: a Cloudinary add-on or AI feature that Derive does not have"#),
        ("b_gen_fill,c_pad,w_100,h_100", #"chain component 0 ("b_gen_fill,c_pad,w_100,h_100"): b_gen_fill: known to Cloudinary, not supported by Derive: generative AI, which Derive does not run"#),
        ("bl_base", #"chain component 0 ("bl_base"): bl_base: known to Cloudinary, not supported by Derive: baseline transformations; Derive does not have it"#),
        ("c_scale,w_100/so_2.5", #"chain component 1 ("so_2.5"): so_2.5: known to Cloudinary, not supported by Derive: video and audio only; Derive makes images"#),
        ("d_a::b", #"chain component 0 ("d_a::b"): d_a::b: unknown to Cloudinary (a default image is a name such as d_avatar.png or d_folder:avatar)"#),
        // Cloudinary's gradient tint and sigmoidal contrast: named, and said to be Cloudinary's.
        ("e_tint:100:green:30p:red:10p", #"chain component 0 ("e_tint:100:green:30p:red:10p"): e_tint:100:green:30p:red:10p: known to Cloudinary, not supported by Derive: the colours' positions go back (30p, 10p); Cloudinary does not document what positions out of order mean, so Derive reads them only in order (red:20p:blue:60p)"#),
        ("e_contrast:level_50;type_sigmoidal", #"chain component 0 ("e_contrast:level_50;type_sigmoidal"): e_contrast:level_50;type_sigmoidal: known to Cloudinary, not supported by Derive: a sigmoidal contrast curve; Derive's e_contrast is linear (type_linear)"#),
        // Image variables are Cloudinary's (user-defined variables), not Derive's: not "unknown".
        ("l_map/fl_layer_apply/e_displace", #"chain component 2 ("e_displace"): e_displace: known to Cloudinary, not supported by Derive outside fl_layer_apply: a blend mode says how a layer combines with the image; write it beside the flag (l_<layer>/e_displace,fl_layer_apply)"#),
        ("wx_100", #"chain component 0 ("wx_100"): wx_100: unknown to Cloudinary (no parameter "wx_"); did you mean "w_"?"#),
        ("l_a,l_b", #"chain component 0 ("l_a,l_b"): repeats l_; put each layer in its own component"#),
        ("k_100", #"chain component 0 ("k_100"): k_100: unknown to Cloudinary (no parameter "k_"); supported: c_, w_, h_, ar_, g_, x_, y_, dpr_, z_, a_, r_, e_, co_, b_, bo_, o_, l_, u_, fl_, f_, q_, pg_, t_, cs_, dn_, d_, dl_"#),
        ("e_sepai:50", #"chain component 0 ("e_sepai:50"): e_sepai:50: unknown to Cloudinary (no effect "sepai"); did you mean "sepia"?"#),
        ("c_crop,w_100,h_100,g_bottle", #"chain component 0 ("c_crop,w_100,h_100,g_bottle"): g_bottle: known to Cloudinary, not supported by Derive: object, text and body gravities: a Cloudinary add-on or AI feature that Derive does not have; supported: center, north, north_east, east, south_east, south, south_west, west, north_west, auto, entropy, face, faces, face:center, faces:center, face:auto, faces:auto and a focal point"#),
        ("c_fill,w_10,h_10,g_nrth", #"chain component 0 ("c_fill,w_10,h_10,g_nrth"): g_nrth: unknown to Cloudinary (no gravity "nrth"); did you mean "north"?; supported: center, north, north_east, east, south_east, south, south_west, west, north_west, auto, entropy, face, faces, face:center, faces:center, face:auto, faces:auto and a focal point"#),
    ])
    func refusesWithOneLineThatSaysWhatIsMissing(text: String, message: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.description)
        #expect(issues == [message])
    }

    /// Parameters Cloudinary has get no "did you mean" guessing a one-letter parameter.
    @Test func noGuessesForParametersCloudinaryHas() {
        for text in ["if_du_gt_1,e_sepia", "f_$name", "ki_0.5", "fn_wasm:blur.wasm", "so_2"] {
            let issues = CloudinaryParser().parse(text).issues.map(\.description)
            #expect(issues.count == 1 && issues.allSatisfy { !$0.contains("did you mean") && $0.contains("known to Cloudinary, not supported by Derive") }, "\(text): \(issues)")
        }
    }

    /// Parameters are read for every component before steps are built; the first line is still
    /// about the earliest component at fault.
    @Test func theFirstLineIsAboutTheFirstComponentAtFault() {
        let issues = CloudinaryParser().parse("c_fill,w_0,h_10/if_tar_gt_1/e_sepai").issues.map(\.description)
        #expect(issues == [
            #"chain component 0 ("c_fill,w_0,h_10"): w_0: out of Cloudinary's range (w must be between 1 and 16384, got 0)"#,
            #"chain component 1 ("if_tar_gt_1"): if_tar_gt_1: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"#,
            #"chain component 2 ("e_sepai"): e_sepai: unknown to Cloudinary (no effect "sepai"); did you mean "sepia"?"#,
        ])
    }

    /// A literal dollar sign is written %24 and stays text.
    @Test func anEncodedDollarIsText() throws {
        let result = CloudinaryParser().parse("l_text:Arial_40:Only%2024%24/fl_layer_apply")
        #expect(result.issues.isEmpty)
        #expect(result.steps == [.overlay(Overlay(source: .text(TextLayer(text: "Only 24$", font: "Arial", size: 40))))])
    }

    /// Strings Derive used to misread, with the steps they mean.
    @Test(arguments: [
        // Angles joined by '.' are applied in turn (Cloudinary's SDKs write a list of angles so).
        ("a_12.13.14", [Step.rotate(Rotate(angle: 12)), .rotate(Rotate(angle: 13)), .rotate(Rotate(angle: 14))]),
        ("a_-17.5", [.rotate(Rotate(angle: -17)), .rotate(Rotate(angle: 5))]),
        ("a_hflip.12.13,b_red", [.rotate(Rotate(angle: 12, horizontalFlip: true, background: Color(red: 255, green: 0, blue: 0))),
                                 .rotate(Rotate(angle: 13, background: Color(red: 255, green: 0, blue: 0)))]),
        ("a_vflip.45", [.rotate(Rotate(angle: 45, verticalFlip: true))]),
        // c_fit,w_ beside l_text wraps the text; it does not shrink the rendered line.
        ("l_text:Arial_40:Hello%20World,c_fit,w_200/fl_layer_apply,g_north",
         [.overlay(Overlay(source: .text(TextLayer(text: "Hello World", font: "Arial", size: 40, width: 200)), gravity: .compass(.north)))]),
        ("w_800,c_fit,l_text:Arial_60_bold:Long%20title,co_white,g_north_east,x_30,y_40",
         [.overlay(Overlay(source: .text(TextLayer(text: "Long title", font: "Arial", size: 60, bold: true, color: .white, width: 800)),
                           gravity: .compass(.northEast), x: .pixels(30), y: .pixels(40)))]),
        // Elsewhere c_fit,w_ still resizes: after l_text, or beside an image layer.
        ("l_text:Arial_40:Hi/c_fit,w_200,h_50/fl_layer_apply",
         [.overlay(Overlay(source: .text(TextLayer(text: "Hi", font: "Arial", size: 40)), chain: [.resize(Resize(mode: .fit, width: .pixels(200), height: .pixels(50)))]))]),
        ("l_logo,c_fit,w_200", [.overlay(Overlay(source: .image("logo"), chain: [.resize(Resize(mode: .fit, width: .pixels(200)))]))]),
    ])
    func readsWhatCloudinaryMeans(text: String, expected: [Step]) {
        let result = CloudinaryParser().parse(text)
        #expect(result.issues.isEmpty, "\(result.issues)")
        #expect(result.steps == expected)
    }

    /// Cloudinary wraps only to a width in pixels; a fractional one resizes the rendered text.
    /// A height beside the wrap is refused.
    @Test func wrappingTakesWholePixelsAndNoHeight() {
        #expect(CloudinaryParser().parse("l_text:Arial_40:Hi,c_fit,w_0.5/fl_layer_apply").steps
            == [.overlay(Overlay(source: .text(TextLayer(text: "Hi", font: "Arial", size: 40)), chain: [.resize(Resize(mode: .fit, width: .fraction(0.5)))]))])
        #expect(CloudinaryParser().parse("l_text:Arial_40:Hi,c_fit,w_100,h_40/fl_layer_apply").issues.map(\.description)
            == [#"chain component 0 ("l_text:Arial_40:Hi,c_fit,w_100,h_40"): h_40 with c_fit beside l_text: known to Cloudinary, not supported by Derive: a height for the wrapped text; give c_fit,w_<pixels> alone to wrap"#])
    }

    /// `b_<colour>,c_pad,w_1.0` is Cloudinary's documented way to put a transparent image on a
    /// colour: the pad cannot pad with one dimension, but the colour is kept as a flatten.
    @Test func aPadThatCannotPadKeepsItsColour() throws {
        let blue = Color.parse("lightblue")!
        let padded = try canonical(string: "b_lightblue,c_pad,w_1.0")
        #expect(padded.chain == [.resize(Resize(mode: .fit, width: .fraction(1), dpr: 1)), .background(blue)])
        #expect(padded.identity == (try canonical(string: "c_fit,w_1.0/b_lightblue")).identity)
        #expect(try canonical(string: "c_lpad,w_300,b_red").chain == [.resize(Resize(mode: .limit, width: .pixels(300), dpr: 1)), .background(Color(red: 255, green: 0, blue: 0))])
        // Without a colour (or with a transparent one) it stays the plain scale it always was.
        #expect(try canonical(string: "c_pad,w_1.0").identity == (try canonical(string: "c_fit,w_1.0")).identity)
        #expect(try canonical(string: "c_pad,w_1.0,b_transparent").identity == (try canonical(string: "c_fit,w_1.0")).identity)
        // With both dimensions the colour is the pad's, as before.
        #expect(try canonical(string: "c_pad,w_100,h_100,b_white").chain.count == 1)
    }

    /// string → model → string → model: the same canonical output and hash.
    @Test(arguments: ["a_12.13.14", "a_hflip.12.13,b_red", "b_lightblue,c_pad,w_1.0", "c_mpad,h_40,b_black/e_sepia",
                      "l_text:Arial_40_italic:Hello%20wrapped%20world,co_red,c_fit,w_120/fl_layer_apply,g_south",
                      "w_800,c_fit,l_text:Arial_60:Long%20title,g_north_east,x_30,y_40"])
    func roundTripsKeepTheHash(text: String) throws {
        let model = try canonical(string: text)
        let printed = try CloudinaryPrinter.string(for: model)
        let again = try canonical(string: printed)
        #expect(again == model, "\(text) → \(printed)")
        #expect(again.identity == model.identity)
    }

    /// Wrapping is part of the meaning; text without it keeps the identity it always had.
    @Test func wrappingChangesTheHashOnlyWhenGiven() throws {
        let plain = try canonical(string: "l_text:Arial_40:Hi/fl_layer_apply")
        #expect(!plain.identityText.contains("width"))
        let wrapped = try canonical(string: "l_text:Arial_40:Hi,c_fit,w_100/fl_layer_apply")
        #expect(wrapped.identity != plain.identity)
        #expect(try canonical(json: #"[{"overlay": {"text": {"text": "Hi", "font": "Arial", "size": 40, "width": 100}}}]"#).identity == wrapped.identity)
    }

    /// Cloudinary's a_ takes whole degrees, so a fractional angle has no string.
    @Test func fractionalAnglesArePrintedOnlyAsJSON() throws {
        let model = try canonical(json: #"[{"rotate": 12.5}]"#)
        #expect(throws: CloudinaryPrinter.Unprintable.self) { try CloudinaryPrinter.string(for: model) }
    }

    /// The language reference's list of what Derive does not support is the list in the code.
    @Test func theLanguageReferenceListsEveryUnsupportedFeature() throws {
        let reference = try String(contentsOf: Paths.repository.appendingPathComponent("Docs/language.md"), encoding: .utf8)
        for line in CloudinaryVocabulary.readmeList {
            #expect(reference.contains(line), "Docs/language.md lacks: \(line)")
        }
    }
}

/// `fl_relative` (issue 15, item 5): a layer's fractional width and height are of the image it is
/// placed on, not of the layer; the planner turns them into that image's pixels.
@Suite struct RelativeLayerSizeTests {
    static let source = SourceFacts(format: .jpeg, width: 4000, height: 3000)

    /// The overlay's own chain as planned on `source`.
    static func overlayChain(_ text: String) throws -> [Step]? {
        switch try plan([text], source).outputs[0].operations.last {
        case .overlay(let o)?: o.chain
        default: nil
        }
    }

    /// Every spelling puts the flag on the layer's resize, and plans to the base image's pixels:
    /// a quarter of 2000 px is 500 px whatever the logo's own size.
    @Test(arguments: [
        "c_scale,w_2000/l_logo,c_scale,w_0.25,fl_relative",
        "c_scale,w_2000/l_logo,c_scale,w_0.25,fl_relative,g_north_east",
        "c_scale,w_2000/l_logo/c_scale,fl_relative,w_0.25/fl_layer_apply",
        "c_scale,w_2000/l_logo,c_scale,fl_relative,w_0.25/fl_layer_apply",
        "c_scale,w_2000/l_logo/c_scale,w_0.25/fl_layer_apply,fl_relative",
        #"[{"resize": {"width": 2000}}, {"overlay": {"image": "logo", "chain": [{"resize": {"width": 0.25, "relative": true}}]}}]"#,
    ])
    func fractionsAreOfTheBaseImage(text: String) throws {
        #expect(try Self.overlayChain(text) == [.resize(Normalizer.normalize(Resize(mode: .scale, width: .pixels(500))))])
    }

    /// Both sides, and only the fractional ones: pixels stay pixels.
    @Test func eachFractionIsOfItsOwnSide() throws {
        #expect(try Self.overlayChain("l_logo,c_fit,w_0.5,h_100,fl_relative")
            == [.resize(Normalizer.normalize(Resize(mode: .fit, width: .pixels(2000), height: .pixels(100))))])
        #expect(try Self.overlayChain("l_logo,c_fill,w_0.1,h_0.2,fl_relative")
            == [.resize(Normalizer.normalize(Resize(mode: .fill, width: .pixels(400), height: .pixels(600))))])
        // Without the flag a fraction is of the logo, resolved when the logo is loaded.
        #expect(try Self.overlayChain("l_logo,c_scale,w_0.25") == [.resize(Normalizer.normalize(Resize(mode: .scale, width: .fraction(0.25))))])
    }

    /// The flag is part of the identity, and prints where the SDKs write it.
    @Test func roundTripsAndIdentity() throws {
        try expectRoundTrip("l_logo,c_scale,w_0.25,fl_relative", printed: "l_logo/c_scale,w_0.25,fl_relative/fl_layer_apply")
        try expectRoundTrip("l_logo/c_scale,w_0.25/fl_layer_apply,fl_relative,g_south", printed: "l_logo/c_scale,w_0.25,fl_relative/fl_layer_apply,g_south")
        #expect(try canonical(string: "l_logo,c_scale,w_0.25,fl_relative").identity != canonical(string: "l_logo,c_scale,w_0.25").identity)
        #expect(try canonical(string: "l_logo,c_scale,w_0.25,fl_relative").identity
            == canonical(json: #"[{"overlay": {"image": "logo", "chain": [{"resize": {"width": 0.25, "relative": true}}]}}]"#).identity)
    }

    @Test(arguments: [
        ("l_logo,c_scale,w_100,fl_relative", #"chain component 0 ("l_logo,c_scale,w_100,fl_relative"): fl_relative with a whole-number width or height: known to Cloudinary, not supported by Derive: Derive reads fl_relative with a fractional one, relative to the image the overlay is placed on (w_0.25, or w_1.0 for its whole width)"#),
    ])
    func refusedWhereItMeansNothing(text: String, message: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.description) == [message])
    }
}
