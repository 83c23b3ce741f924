@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Issue 30: strings Cloudinary's SDKs print and Cloudinary serves, read as Cloudinary does
/// (Docs/language.md, "Lenient readings"): each means the plain string beside it, and the notes
/// say what was read differently or left out.
@Suite struct LenientReadingTests {
    /// The string, the plain string it means, and a phrase of its one note ("" for none).
    @Test(arguments: [
        ("ar_1.5,c_fill,w_300,h_200", "c_fill,w_300,h_200", "ar_1.5 beside both w_ and h_"),
        ("q_auto,f_auto,dpr_2", "q_auto/f_auto", "dpr_2 without a w_ or h_ in the chain"),
        ("bo_1px_solid_black,q_auto,dpr_2,f_auto", "bo_1px_solid_black/q_auto/f_auto", "the image keeps its size"),
        ("c_scale,w_100/q_auto,dpr_2.0", "c_scale,w_100,dpr_2.0/q_auto", ""),
        ("q_auto,f_auto,dpr_auto", "q_auto/f_auto", "dpr_auto without a w_ or h_"),
        ("c_scale,fl_relative,w_100", "c_scale,w_100", "fl_relative outside a layer"),
        ("c_scale,fl_region_relative,w_100", "c_scale,w_100", "fl_region_relative outside a layer"),
        ("w_100/fl_cutter", "w_100", "fl_cutter outside a layer"),
        ("if_end/e_sepia", "e_sepia", "if_end with no if_ block open"),
        ("if_w_gt_100/e_sepia", "if_w_gt_100/e_sepia/if_end", "if_ block without if_end"),
        ("a_auto_left", "", "a_auto_left without a resize"),
        ("c_crop,g_xy_center,w_100", "c_crop,g_xy_center,w_100,x_0,y_0", "g_xy_center without x_ and y_"),
        ("e_pixelate_region,w_100", "e_pixelate_region,w_100,h_1.0", "e_pixelate_region without h_"),
        ("e_pixelate_region:25,y_0.75", "e_pixelate_region:25,y_0.75,w_1.0,h_0.25", "without w_ and h_"),
        ("l_sample,fl_cutter", "l_sample/fl_cutter,fl_layer_apply", ""),
        ("e_multiply,l_icon", "l_icon/e_multiply,fl_layer_apply", ""),
        ("if_w_gt_400,l_badge,g_north_east", "if_w_gt_400/l_badge/fl_layer_apply,g_north_east/if_end", ""),
        ("f_jpg,u_some", "u_some", "output settings inside a layer"),
        ("q_80/q_70", "q_70", "q_ given again: the later value replaces the earlier one"),
        ("e_sepia,co_red", "e_sepia", "co_red is ignored"),
        ("q_70:qmax_20", "q_70", "qmax_ caps a video encoder's quantizer"),
        ("e_shear:20.0:0.0", "e_shear:20:0", ""),
        ("e_contrast:level_50;type_linear", "e_contrast:50", ""),
        ("e_contrast:level_-20", "e_contrast:-20", ""),
        ("e_shear:20.4", "e_shear:20", "the nearest whole degree"),
        ("fl_attachment:pretty_flower", "", "fl_attachment:pretty_flower: asks the browser to download"),
        ("fl_progressive:semi", "fl_progressive", "semi and steep are written as fl_progressive"),
        ("c_pad,b_auto", "", "c_pad: Cloudinary ignores a crop mode"),
        ("z_1.2", "", "z_1.2: Cloudinary ignores an offset or zoom"),
        ("l_lut:warm.cube/fl_layer_apply", "l_lut:warm.cube", "fl_layer_apply after l_lut:"),
        ("c_scale,w_auto,dpr_auto", "c_scale,w_auto", "dpr_auto beside w_auto"),
        ("g_center,p_a,q_80,r_3,x_1,y_2", "g_center,q_80,r_3,x_1,y_2", "p_a: a CSS sprite's class prefix"),
        ("$a_!12.5x!_to_f/c_scale,w_$a_mul_10", "$a_12.5/c_scale,w_$a_mul_10", ""),
        ("$a_!bbb!_to_f", "$a_0", ""),
        ("$a_30_to_i", "$a_30", ""),
        ("$a_iw_add_100_div_3_to_f", "$a_iw_add_100_div_3", ""),
        ("c_scale,w_10,fl_text_no_trim", "c_scale,w_10", "fl_text_no_trim outside a layer"),
        ("e_trim:white", "e_trim:10:white", "a colour with no tolerance before it is the colour to trim"),
        ("e_cartoonify:bw", "e_cartoonify:50:bw", "bw with no line strength before it is black and white"),
        ("f_auto,fl_animated", "f_auto", "fl_animated: delivers an animated source animated"),
        ("fl_mono", "", "fl_mono: mixes a video's or audio file's sound down to one channel"),
        ("fl_draco", "", "fl_draco: compresses the meshes of a 3D model"),
        ("l_text:Arial_18_hinting_medium:Hi/fl_layer_apply", "l_text:Arial_18:Hi/fl_layer_apply", "hinting_medium is not set"),
        ("f_auto,fl_preserve_transparency", "f_auto", "Derive's f_auto only ever chooses among formats with alpha"),
        ("fl_preserve_transparency", "", "fl_preserve_transparency: keeps the transparency"),
        ("$a_30.9_to_i", "$a_30", ""),
        ("e_sepia:10/bo_0px_solid_transparent,r_50", "e_sepia:10/r_50", "a border 0 pixels wide draws nothing"),
        ("bo_5.5px_solid_rgb:fff", "bo_6px_solid_rgb:fff", "Derive draws the nearest, 6px"),
        // A blend mode with no layer anywhere in the chain: nothing to combine.
        ("e_anti_removal:95", "", "e_anti_removal:95 with no layer in the chain"),
        ("e_mask/c_scale,w_100", "c_scale,w_100", "e_mask with no layer in the chain"),
        // A format Derive does not write, replaced by a later component's f_.
        ("f_flif/f_auto", "f_auto", "f_flif is replaced by the f_ of component 1"),
        ("f_eps,w_100/e_sepia/f_webp", "w_100/e_sepia/f_webp", "f_eps is replaced by the f_ of component 2"),
        // An asset reference nothing uses (Cloudinary's SDKs print it alone).
        ("$bestpic_ref:!file.png!", "$bestpic_ref:!file.png!", "no later component uses $bestpic"),
    ])
    func readAsCloudinaryDoes(text: String, meaning: String, note: String) throws {
        let parsed = CloudinaryParser().parse(text)
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        if note.isEmpty {
            #expect(parsed.notes.isEmpty, "\(parsed.notes)")
        } else {
            #expect(parsed.notes.contains { $0.contains(note) }, "\(parsed.notes)")
        }
        let model = try canonical(string: text)
        let plain = try canonical(string: meaning)
        #expect(model == plain)
        #expect(model.identity == plain.identity)
    }

    /// `q_auto:<level>:444` is the automatic level with full chroma, as `q_80:444` is.
    @Test func automaticQualityWithChroma() throws {
        let parsed = CloudinaryParser().parse("q_auto:low:444")
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        #expect(parsed.settings.quality == QualityText.parse("auto:low"))
        #expect(parsed.settings.chromaSubsampling == .full)
    }

    /// Percent-encoded names are looked up decoded, spaces and all.
    @Test func namedTransformationWithSpaces() throws {
        let parsed = CloudinaryParser().parse("t_named%20with%20spaces")
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        #expect(parsed.steps == [.preset("named with spaces")])
    }

    /// Refusals name the parameter and say whether Cloudinary has it.
    @Test(arguments: [
        ("fl_layer_apply", "fl_layer_apply: unknown to Cloudinary (no l_ or u_ layer is open"),
        ("pg_embedded:0", "pg_embedded:0: unknown to Cloudinary (pg_name:<layer>"),
        ("pg_name:a;;b", "pg_name:a;;b: unknown to Cloudinary (pg_name:<layer>"),
        ("f_mp4", "f_mp4: known to Cloudinary, not supported by Derive: format mp4 is a video or audio format"),
        // Only a later top-level f_ replaces it: not an earlier one, nor one inside a layer.
        ("f_auto/f_flif", "f_flif: known to Cloudinary, not supported by Derive: format flif has no encoder"),
        ("f_flif/l_badge/f_png/fl_layer_apply", "f_flif: known to Cloudinary, not supported by Derive: format flif has no encoder"),
        ("if_else", "if_else: unknown to Cloudinary (an if_else follows"),
        ("q_0.4", "q_0.4: unknown to Cloudinary ("),
        ("e_fade:100", "e_fade:100: known to Cloudinary, not supported by Derive: Derive does not have it"),
    ])
    func refusalsSpeakOfCloudinary(text: String, refusal: String) {
        let parsed = CloudinaryParser().parse(text)
        #expect(parsed.issues.first?.reason.contains(refusal) == true, "\(parsed.issues)")
        #expect(!parsed.issues.contains { $0.reason.contains("planned") }, "\(parsed.issues)")
    }
}

/// Issue 30's output settings in strings and JSON: one model, printed back the same.
@Suite struct OutputFlagLanguageTests {
    @Test(arguments: [
        ("f_png,fl_png8", "f_png,fl_png8"), ("f_png,fl_png24", "f_png,fl_png24"), ("fl_png32", "fl_png32"),
        ("f_png,fl_lossy", "f_png,fl_lossy"), ("f_gif,e_loop", "f_gif,e_loop"), ("f_gif,e_loop:2", "f_gif,e_loop:2"),
        ("w_100/e_loop:0,f_webp", "c_scale,w_100/f_webp,e_loop:0"),
        ("dl_200,e_loop:3", "e_loop:3,dl_200"), ("f_tiff,fl_tiff8_lzw", "f_tiff,fl_tiff8_lzw"),
        ("f_jpg,fl_keep_attribution", "f_jpeg,fl_keep_attribution"),
        ("fl_ignore_mask_channels", "fl_ignore_mask_channels"), ("f_tiff,fl_ignore_mask_channels", "f_tiff,fl_ignore_mask_channels"),
        // Keeping every field keeps the attribution too: the flag says nothing more.
        ("f_jpg,fl_keep_attribution,fl_keep_iptc", "f_jpeg,fl_keep_iptc"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func jsonSaysTheSame() throws {
        let json = try canonical(json: #"{"source": "https://x/a.jpg", "outputs": [{"name": "default", "format": "png", "pngType": "png8", "lossy": true, "loop": 3, "chain": []}]}"#)
        let string = try canonical(string: "f_png,fl_png8.lossy,e_loop:2")
        #expect(json.identity == string.identity)
        #expect(json.encoding.pngType == .png8 && json.encoding.lossy && json.encoding.loop == 3)
        let credited = try canonical(json: #"{"source": "https://x/a.jpg", "outputs": [{"name": "default", "format": "jpeg", "keepAttribution": true, "chain": []}]}"#)
        #expect(credited.identity == (try canonical(string: "f_jpg,fl_keep_attribution")).identity && credited.encoding.keepAttribution)
        #expect(credited.identity != (try canonical(string: "f_jpg")).identity)
    }

    @Test(arguments: [
        ("e_loop:-1", "e_loop:-1: unknown to Cloudinary (e_loop takes the additional plays"),
        ("fl_png8.png24", "fl_png8 and fl_png24 together: unknown to Cloudinary"),
        ("dl_fast", "dl_fast: unknown to Cloudinary (dl takes each frame's time"),
    ])
    func refusals(text: String, refusal: String) {
        let parsed = CloudinaryParser().parse(text)
        #expect(parsed.issues.first?.reason.contains(refusal) == true, "\(parsed.issues)")
    }
}

/// A Photoshop document's layers and embedded files (`pg_name:`, `pg_embedded:`, issue 30): the
/// corpus's forms read, printed back, and the same as JSON's `psd`.
@Suite struct PhotoshopSelectionLanguageTests {
    @Test(arguments: [
        ("pg_name:record_cover", "pg_name:record_cover"),
        ("pg_name:record_cover;Shadow", "pg_name:record_cover;Shadow"),
        ("pg_name:record_cover;Shadow/w_300", "c_scale,w_300/pg_name:record_cover;Shadow"),
        ("pg_embedded:2", "pg_embedded:2"),
        ("pg_embedded:name:skyline.jpg;bg.jpg", "pg_embedded:name:skyline.jpg;bg.jpg"),
        ("pg_embedded:name:myLayer;myLayer2", "pg_embedded:name:myLayer;myLayer2"),
        ("pg_name:Layer%201", "pg_name:Layer%201"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func readsTheSelection() throws {
        #expect(try canonical(string: "pg_name:record_cover;Shadow").encoding.psd == .layers(["record_cover", "Shadow"]))
        #expect(try canonical(string: "pg_embedded:2").encoding.psd == .embedded(2))
        #expect(try canonical(string: "pg_embedded:name:Layer%201").encoding.psd == .embeddedNamed(["Layer 1"]))
        // Beside fl_clip, pg_name: still names the clipping path, not a layer.
        let clip = try canonical(string: "fl_clip,pg_name:Panda")
        #expect(clip.encoding.clip?.name == "Panda" && clip.encoding.psd == nil)
    }

    @Test func jsonSaysTheSame() throws {
        let layers = try canonical(json: #"{"source": "https://x/a.psd", "outputs": [{"name": "default", "psd": {"layers": ["record_cover", "Shadow"]}, "chain": []}]}"#)
        #expect(layers.identity == (try canonical(string: "pg_name:record_cover;Shadow")).identity)
        let embedded = try canonical(json: #"{"source": "https://x/a.psd", "outputs": [{"name": "default", "psd": {"embedded": 2}, "chain": []}]}"#)
        #expect(embedded.identity == (try canonical(string: "pg_embedded:2")).identity)
        let named = try canonical(json: #"{"source": "https://x/a.psd", "outputs": [{"name": "default", "psd": {"embedded": ["bg.jpg"]}, "chain": []}]}"#)
        #expect(named.identity == (try canonical(string: "pg_embedded:name:bg.jpg")).identity)
        // Different selections are different outputs.
        let shadow = try canonical(string: "pg_name:Shadow")
        #expect(layers.identity != embedded.identity && layers.identity != shadow.identity)
    }
}

/// b_auto's palette in strings and JSON (issue 30).
@Suite struct AutoPaletteLanguageTests {
    @Test(arguments: [
        ("c_pad,w_100,h_100,b_auto:border:palette_red_00ff00", "c_pad,w_100,h_100,b_auto:border:palette_ff0000_00ff00"),
        ("c_pad,w_100,h_100,b_auto:predominant_gradient:4:palette_f00_green_blue_orange", "c_pad,w_100,h_100,b_auto:predominant_gradient:4:palette_ff0000_008000_0000ff_ffa500"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func jsonSaysTheSame() throws {
        let json = try canonical(json: ##"[{"resize": {"mode": "pad", "width": 100, "height": 100, "padFill": {"auto": "border_contrast", "palette": ["red", "#00ff00"]}}}]"##)
        #expect(json.identity == (try canonical(string: "c_pad,w_100,h_100,b_auto:border_contrast:palette_red_00ff00").identity))
    }

    @Test func nearestOrFarthest() {
        let palette = [Color.parse("red")!, Color.parse("blue")!]
        let pink = Color(red: 250, green: 40, blue: 60)
        #expect(AutoPalette.pick(pink, palette: palette, contrast: false) == palette[0])
        #expect(AutoPalette.pick(pink, palette: palette, contrast: true) == palette[1])
        #expect(AutoPalette.pick(pink, palette: [], contrast: false) == pink)
    }

    @Test func aBadPaletteIsRefused() {
        let parsed = CloudinaryParser().parse("c_pad,w_100,h_100,b_auto:border:palette_red_nocolour")
        #expect(parsed.issues.first?.reason.contains("unknown to Cloudinary (a b_auto palette is") == true, "\(parsed.issues)")
    }
}

/// `ils`, the illustration score (issue 30): defined on pixels, deferred to the engine.
@Suite struct IllustrationScoreTests {
    /// Flat colours score 1; every pixel a colour of its own scores near 0.
    @Test func flatColoursScoreHighAndNoiseLow() {
        var flat: [UInt8] = []
        for i in 0..<(64 * 64) { flat += i % 64 < 32 ? [200, 30, 30, 255] : [20, 20, 200, 255] }
        #expect(IllustrationScore.of(PixelBuffer(width: 64, height: 64, bands: 4, pixels: flat)) == 1)
        var random = SystemRandomNumberGenerator()
        let noise = (0..<(64 * 64)).flatMap { _ in [UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random), UInt8.random(in: 0...255, using: &random), 255] }
        #expect(IllustrationScore.of(PixelBuffer(width: 64, height: 64, bands: 4, pixels: noise)) < 0.1)
    }

    /// A string naming ils is read; its steps are planned by the engine, which measures it.
    @Test func conditionsOnItAreDeferredToTheEngine() throws {
        let parsed = CloudinaryParser().parse("if_ils_gt_0.5/e_grayscale/if_end")
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        let planned = try plan(["if_illustration_score_gt_0.5,e_grayscale"], SourceFacts(format: .png, width: 400, height: 300))
        #expect(planned.outputs[0].operations.contains { if case .deferred = $0 { true } else { false } })
        #expect(planned.needsIllustrationScore)
        #expect(!(try plan(["e_grayscale"], SourceFacts(format: .png, width: 400, height: 300))).needsIllustrationScore)
    }
}
