@testable import DeriveLanguage
import DeriveTestSupport
import Testing

@Suite struct CloudinaryParserTests {
    func steps(_ text: String) throws -> [Step] {
        let result = CloudinaryParser().parse(text)
        if !result.issues.isEmpty { throw ValidationError(result.issues) }
        return result.steps
    }

    @Test func parsesTheIssueExample() throws {
        let parsed = try steps("c_fill,w_250,h_250,g_auto/r_max/e_sepia")
        #expect(parsed == [
            .resize(Resize(mode: .fill, width: .pixels(250), height: .pixels(250), gravity: .smart(.auto))),
            .round(RoundCorners(radius: .max)),
            .effect(.named("sepia", 80)),
        ])
    }

    /// Every parameter TRANSFORMS.md lists, one row each.
    @Test(arguments: [
        ("w_200", Step.resize(Resize(width: .pixels(200)))),
        ("c_scale,h_0.5", .resize(Resize(mode: .scale, height: .fraction(0.5)))),
        ("c_fit,w_1.0,h_300", .resize(Resize(mode: .fit, width: .fraction(1), height: .pixels(300)))),
        ("c_limit,w_2048,h_2048", .resize(Resize(mode: .limit, width: .pixels(2048), height: .pixels(2048)))),
        ("c_mfit,w_100", .resize(Resize(mode: .mfit, width: .pixels(100)))),
        ("c_lfill,w_100,h_50,g_north_east", .resize(Resize(mode: .lfill, width: .pixels(100), height: .pixels(50), gravity: .compass(.northEast)))),
        ("c_pad,w_100,h_100,b_white", .resize(Resize(mode: .pad, width: .pixels(100), height: .pixels(100), background: .white))),
        ("c_lpad,w_100,h_100,g_west", .resize(Resize(mode: .lpad, width: .pixels(100), height: .pixels(100), gravity: .compass(.west)))),
        ("c_mpad,ar_16:9,w_400", .resize(Resize(mode: .mpad, width: .pixels(400), aspectRatio: 1.777778))),
        ("c_crop,w_100,h_100,x_10,y_-20", .resize(Resize(mode: .crop, width: .pixels(100), height: .pixels(100), x: .pixels(10), y: .pixels(-20)))),
        ("c_thumb,w_64,h_64", .resize(Resize(mode: .thumb, width: .pixels(64), height: .pixels(64)))),
        ("c_auto,w_64,h_64,g_entropy", .resize(Resize(mode: .auto, width: .pixels(64), height: .pixels(64), gravity: .smart(.entropy)))),
        ("c_fill,w_300,h_200,g_xy_center,x_0.3,y_0.6", .resize(Resize(mode: .fill, width: .pixels(300), height: .pixels(200), gravity: .focus(x: .fraction(0.3), y: .fraction(0.6))))),
        ("c_fill,ar_1.5,w_300,dpr_2.0", .resize(Resize(mode: .fill, width: .pixels(300), aspectRatio: 1.5, dpr: 2))),
        ("a_90", .rotate(Rotate(angle: 90))),
        ("a_-17,b_black", .rotate(Rotate(angle: -17, background: .black))),
        ("a_hflip", .rotate(Rotate(horizontalFlip: true))),
        ("a_vflip.45", .rotate(Rotate(angle: 45, verticalFlip: true))),
        ("r_20", .round(RoundCorners(radius: .corners([20])))),
        ("r_10:20:30:40,b_rgb:ff000080", .round(RoundCorners(radius: .corners([10, 20, 30, 40]), background: Color(red: 255, green: 0, blue: 0, alpha: 128)))),
        ("e_blur:300", .effect(.named("blur", 300))),
        ("e_pixelate", .effect(.named("pixelate", 10))),
        ("e_sharpen:80", .effect(.named("sharpen", 80))),
        ("e_grayscale", .effect(.named("grayscale"))),
        ("e_sepia:50", .effect(.named("sepia", 50))),
        ("e_negate", .effect(.named("negate"))),
        ("e_brightness:-30", .effect(.named("brightness", -30))),
        ("e_contrast:40", .effect(.named("contrast", 40))),
        ("e_saturation:-100", .effect(.named("saturation", -100))),
        ("e_tint:40:rgb:00ff00", .effect(.tint(amount: 40, color: Color(red: 0, green: 255, blue: 0)))),
        ("e_colorize:60,co_red", .effect(Effect.colorizeForTests(60, Color(red: 255, green: 0, blue: 0)))),
        ("e_vignette:30", .effect(.named("vignette", 30))),
        ("e_trim", .trim(Trim())),
        ("e_trim:25:white", .trim(Trim(tolerance: 25, color: .white))),
        ("b_rgb:336699", .background(Color(red: 0x33, green: 0x66, blue: 0x99))),
        ("bo_4px_solid_black", .border(Border(width: 4, color: .black))),
        ("o_50", .opacity(50)),
        ("t_thumbnail", .preset("thumbnail")),
    ])
    func parsesEachParameter(text: String, expected: Step) throws {
        #expect(try steps(text) == [expected])
    }

    @Test func parsesOverlaysInBothForms() throws {
        let long = try steps("w_800/l_brand:logo/c_scale,w_100/o_60/fl_layer_apply,g_south_east,x_10,y_10")
        #expect(long == [
            .resize(Resize(width: .pixels(800))),
            .overlay(Overlay(source: .image("brand/logo"), chain: [.resize(Resize(width: .pixels(100))), .opacity(60)],
                             gravity: .compass(.southEast), x: .pixels(10), y: .pixels(10))),
        ])
        let short = try steps("l_logo,w_50,g_north,y_5")
        #expect(short == [.overlay(Overlay(source: .image("logo"), chain: [.resize(Resize(width: .pixels(50)))], gravity: .compass(.north), y: .pixels(5)))])

        let text = try steps("l_text:Open%20Sans_40_bold:Hello%2C%20World%2F%21,co_white/fl_layer_apply,g_south")
        #expect(text == [.overlay(Overlay(source: .text(TextLayer(text: "Hello, World/!", font: "Open Sans", size: 40, bold: true, color: .white)), gravity: .compass(.south)))])

        let url = "https://cdn.example.com/logo.png?v=2"
        let fetched = try steps("l_fetch:\(Base64URL.encode(url))/fl_layer_apply")
        #expect(fetched == [.overlay(Overlay(source: .image(url)))])

        let nested = try steps("l_a/l_b/fl_layer_apply,g_east/fl_layer_apply,g_west")
        #expect(nested == [.overlay(Overlay(source: .image("a"), chain: [.overlay(Overlay(source: .image("b"), gravity: .compass(.east)))], gravity: .compass(.west)))])
    }

    @Test func collectsOutputSettings() {
        let result = CloudinaryParser().parse("c_fill,w_100,h_100/f_webp,q_auto:eco/fl_progressive.keep_iptc,pg_2,a_ignore")
        #expect(result.issues.isEmpty)
        #expect(result.settings == OutputSettings(format: .webp, quality: .auto(.eco), strip: false, progressive: true, autoOrient: false, frame: 2))
        let chroma = CloudinaryParser().parse("f_jpg,q_90:444")
        #expect(chroma.settings == OutputSettings(format: .jpeg, quality: .value(90), chromaSubsampling: .full))
    }

    @Test func appliesParametersInsideOneComponentInAFixedOrder() throws {
        // resize, rotate, effect, round corners, border, opacity; b_ goes to the rotation.
        let red = Color(red: 255, green: 0, blue: 0)
        #expect(try steps("o_50,bo_2px_solid_red,r_5,e_blur,a_10,w_100,b_red") == [
            .resize(Resize(width: .pixels(100))),
            .rotate(Rotate(angle: 10, background: red)),
            .effect(.named("blur", 100)),
            .round(RoundCorners(radius: .corners([5]))),
            .border(Border(width: 2, color: red)),
            .opacity(50),
        ])
        #expect(try steps("e_trim:5,c_fit,w_10,h_10") == [.trim(Trim(tolerance: 5)), .resize(Resize(mode: .fit, width: .pixels(10), height: .pixels(10)))])
    }

    /// Every rejected string says which component and why, in words a user can act on.
    @Test(arguments: [
        ("c_fill,w_250,h_250,g_auto/r_max/e_sepai", #"chain component 2 ("e_sepai"): e_sepai: unknown to Cloudinary (no effect "sepai"); did you mean "sepia"?"#),
        ("c_fill,w_0,h_10", #"chain component 0 ("c_fill,w_0,h_10"): w_0: out of Cloudinary's range (w must be between 1 and 16384, got 0)"#),
        ("c_fill,w_20000,h_10", #"chain component 0 ("c_fill,w_20000,h_10"): w_20000: known to Cloudinary, not supported by Derive: beyond Derive's limits: w must be between 1 and 16384, got 20000"#),
        ("c_fil,w_10", #"chain component 0 ("c_fil,w_10"): c_fil: unknown to Cloudinary (no crop mode "fil"); did you mean "fill"?"#),
        ("c_fill,w_10,h_10,g_ocr_text", #"chain component 0 ("c_fill,w_10,h_10,g_ocr_text"): g_ocr_text: known to Cloudinary, not supported by Derive: object, text and body gravities: a Cloudinary add-on or AI feature that Derive does not have; supported: center, north, north_east, east, south_east, south, south_west, west, north_west, auto, entropy, face, faces, face:center, faces:center, face:auto, faces:auto and a focal point"#),
        ("c_fill,w_10,h_10,g_auto:subject", #"chain component 0 ("c_fill,w_10,h_10,g_auto:subject"): g_auto:subject: known to Cloudinary, not supported by Derive: object, text and body gravities: a Cloudinary add-on or AI feature that Derive does not have; supported: center, north, north_east, east, south_east, south, south_west, west, north_west, auto, entropy, face, faces, face:center, faces:center, face:auto, faces:auto and a focal point"#),
        ("c_fill,w_10,h_10,g_faces,z_2", #"chain component 0 ("c_fill,w_10,h_10,g_faces,z_2"): z_2: unknown to Cloudinary (z applies to modes thumb and crop with a face gravity (face, faces and their :center and :auto forms))"#),
        ("c_fill,w_10,h_10,g_face,x_5", #"chain component 0 ("c_fill,w_10,h_10,g_face,x_5"): x_5: unknown to Cloudinary (x offsets move the centre of a face gravity only with modes thumb and crop)"#),
        ("c_pad,w_10,h_10,g_faces", #"chain component 0 ("c_pad,w_10,h_10,g_faces"): g_faces: unknown to Cloudinary (g faces chooses a crop; the pad modes take a compass gravity)"#),
        ("w_auto,ar_16:9", #"chain component 0 ("w_auto,ar_16:9"): w_auto with ar_16:9: known to Cloudinary, not supported by Derive: a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"#),
        ("w_tar_mul_100", #"chain component 0 ("w_tar_mul_100"): w_tar_mul_100: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"#),
        ("e_blur:5000", #"chain component 0 ("e_blur:5000"): e_blur:5000: out of Cloudinary's range (e_blur strength must be between 1 and 2000, got 5000)"#),
        ("e_sepia:-10", #"chain component 0 ("e_sepia:-10"): e_sepia:-10: out of Cloudinary's range (e_sepia strength must be between 1 and 100, got -10)"#),
        ("e_grayscale:50", #"chain component 0 ("e_grayscale:50"): e_grayscale takes no amount"#),
        ("e_sepia,e_blur", #"chain component 0 ("e_sepia,e_blur"): repeats e_; put each effect in its own component"#),
        ("w_100//h_100", #"chain component 1 (""): is empty; remove the extra '/'"#),
        ("wx_100", #"chain component 0 ("wx_100"): wx_100: unknown to Cloudinary (no parameter "wx_"); did you mean "w_"?"#),
        ("width", #"chain component 0 ("width"): "width" is not a parameter; parameters are key_value, such as w_200"#),
        ("b_reed", #"chain component 0 ("b_reed"): b_reed: unknown to Cloudinary (no colour "reed"); did you mean "red"?"#),
        ("b_frames", #"chain component 0 ("b_frames"): b_frames: unknown to Cloudinary (no colour "frames"); use a CSS name or rgb:rrggbb[aa]"#),
        ("fl_layer_apply", #"chain component 0 ("fl_layer_apply"): fl_layer_apply: unknown to Cloudinary (no l_ or u_ layer is open for it to apply)"#),
        ("f_wepb", #"chain component 0 ("f_wepb"): f_wepb: unknown to Cloudinary (no format "wepb"); did you mean "webp"?"#),
        // Formats Cloudinary's f_ accepts that Derive does not write say why.
        ("f_eps", #"chain component 0 ("f_eps"): f_eps: known to Cloudinary, not supported by Derive: format eps is a vector or page format; Derive writes jpg, png, webp, avif, gif, jxl, tiff, jp2, jpc, bmp, ico, heic and pdf and ai (the image in a PDF page), and svg from e_vectorize"#),
        ("f_psd", #"chain component 0 ("f_psd"): f_psd: known to Cloudinary, not supported by Derive: format psd is read as a source but not written (it is an editing and interchange format, not one to deliver); Derive writes jpg, png, webp, avif, gif, jxl, tiff, jp2, jpc, bmp, ico, heic and pdf and ai (the image in a PDF page), and svg from e_vectorize"#),
        ("f_jxr", #"chain component 0 ("f_jxr"): f_jxr: known to Cloudinary, not supported by Derive: format jxr has no encoder in this libvips (camera raw formats are never written); Derive writes jpg, png, webp, avif, gif, jxl, tiff, jp2, jpc, bmp, ico, heic and pdf and ai (the image in a PDF page), and svg from e_vectorize"#),
        ("f_glb", #"chain component 0 ("f_glb"): f_glb: known to Cloudinary, not supported by Derive: format glb is a 3D model format; Derive writes jpg, png, webp, avif, gif, jxl, tiff, jp2, jpc, bmp, ico, heic and pdf and ai (the image in a PDF page), and svg from e_vectorize"#),
        ("q_best", #"chain component 0 ("q_best"): q_best: unknown to Cloudinary (q must be 1–100, auto or auto:best|good|eco|low (optionally with :444 or :420), got "best")"#),
        ("r_1:2:3:4:5", #"chain component 0 ("r_1:2:3:4:5"): r_1:2:3:4:5: unknown to Cloudinary (r must be max or 1–4 radii in pixels joined by ':', got "1:2:3:4:5")"#),
        ("bo_4_solid_black", #"chain component 0 ("bo_4_solid_black"): bo_4_solid_black: unknown to Cloudinary (bo must be <width>px_solid_<color>, such as bo_4px_solid_black, got "4_solid_black")"#),
        ("a_auto,c_scale,w_10,h_10", #"chain component 0 ("a_auto,c_scale,w_10,h_10"): a_auto: known to Cloudinary, not supported by Derive: not among Cloudinary's documented rotation modes; a_auto_right and a_auto_left turn by the requested aspect ratio, and EXIF orientation is applied automatically"#),
        ("c_pad,w_10,h_10,g_auto", #"chain component 0 ("c_pad,w_10,h_10,g_auto"): g_auto: unknown to Cloudinary (g auto chooses a crop; the pad modes take a compass gravity)"#),
        ("c_auto,w_10,h_10,g_north", #"chain component 0 ("c_auto,w_10,h_10,g_north"): g_north: unknown to Cloudinary (g mode auto is always content-aware; use gravity auto or entropy, or mode fill)"#),
        ("c_fill,w_10,h_10,g_auto,x_5", #"chain component 0 ("c_fill,w_10,h_10,g_auto,x_5"): x_5: unknown to Cloudinary (x offsets cannot be combined with content-aware gravity auto)"#),
        ("e_colorize:50,co_nope", #"chain component 0 ("e_colorize:50,co_nope"): co_nope: unknown to Cloudinary (no colour "nope"); use a CSS name or rgb:rrggbb[aa]"#),
        ("fl_progresive", #"chain component 0 ("fl_progresive"): fl_progresive: unknown to Cloudinary (no flag "progresive"); did you mean "progressive"?"#),
        ("l_text:hello", #"chain component 0 ("l_text:hello"): l_text:hello: unknown to Cloudinary (a text layer gives its font and size, then its text: l_text:<font>_<size>:<text>)"#),
        ("l_text:Arial_big_bold:Hi", #"chain component 0 ("l_text:Arial_big_bold:Hi"): l_text:Arial_big_bold: unknown to Cloudinary (a text style is <font>_<size>[_<style>...], such as Arial_40_bold)"#),
        ("l_text:headline:Hi", #"chain component 0 ("l_text:headline:Hi"): l_text:headline: known to Cloudinary, not supported by Derive: text styles saved as assets of a Cloudinary account; give the style in the string: l_text:<font>_<size>[_bold][_italic]:<text>"#),
        ("l_text:Verdana_50_bold_center_antialias_subpixel:Style", #"chain component 0 ("l_text:Verdana_50_bold_center_antialias_subpixel:Style"): l_text:Verdana_50_bold_center_antialias_subpixel: known to Cloudinary, not supported by Derive: subpixel antialiasing and weights other than bold: libvips' text operation takes no subpixel setting (glyphs are drawn as a grey coverage mask), and the light and thin weights are not rendered; Derive's text styles are bold, italic, normal, underline, strikethrough, letter_spacing_<n>, line_spacing_<n>, left, center, right, justify (start, end), stroke, antialias_<mode> (none, or grey: default, gray, fast, good, best) and hinting_<mode> (noted: fontconfig's hinting is used) (here antialias_subpixel)"#),
        ("l_text:Arial_20_bolt:Hi", #"chain component 0 ("l_text:Arial_20_bolt:Hi"): l_text:Arial_20_bolt: unknown to Cloudinary (no text style "bolt"); did you mean "bold"?"#),
        ("l_text:Arial_20_fancy:Hi", #"chain component 0 ("l_text:Arial_20_fancy:Hi"): l_text:Arial_20_fancy: unknown to Cloudinary (no text style "fancy"); Derive reads bold, italic, normal, underline, strikethrough, letter_spacing, line_spacing, left, center, right, justify, start, end, stroke, antialias, hinting"#),
        ("l_bike/o_50,fl_layer_apply", #"chain component 1 ("o_50,fl_layer_apply"): o_50 beside fl_layer_apply: known to Cloudinary, not supported by Derive: parameters other than the layer's placement (g_, x_, y_, fl_region_relative), a blend mode or an effect (e_) in the component that applies it; put what changes the layer in a component before fl_layer_apply, and what changes the result in one after it"#),
        ("l_badge/fl_layer_apply/e_multiply", #"chain component 2 ("e_multiply"): e_multiply: known to Cloudinary, not supported by Derive outside fl_layer_apply: a blend mode says how a layer combines with the image; write it beside the flag (l_<layer>/e_multiply,fl_layer_apply)"#),
    ])
    func rejectsWithAnExactReason(text: String, message: String) {
        let result = CloudinaryParser().parse(text)
        #expect(result.issues.map(\.description).contains(message), "got: \(result.issues.map(\.description))")
    }

    @Test func limitsTheLengthOfStringsAndChains() {
        let limits = ChainLimits(maxChainLength: 3, maxTransformationLength: 50)
        let long = CloudinaryParser(limits: limits).parse(String(repeating: "w_1/", count: 20))
        #expect(long.issues.first?.reason == "is 80 bytes; the limit is 50")
        let many = CloudinaryParser(limits: limits).parse("w_1/w_2/w_3/w_4")
        #expect(many.issues.map(\.description) == ["chain: has 4 steps; the limit is 3"])
    }
}
