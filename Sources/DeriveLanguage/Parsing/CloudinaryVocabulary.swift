/// Cloudinary's transformation vocabulary as far as Derive knows it: every parameter Cloudinary
/// has, and the one list of what Derive does not support, with why or which issue will add it.
/// Refusals of strings are worded from here, and Docs/language.md's list mirrors `unsupported`.
public enum CloudinaryVocabulary {
    /// Every parameter prefix of Cloudinary's transformation reference (images and video).
    static let cloudinaryParameters = [
        "a", "ac", "af", "ar", "b", "bl", "bo", "br", "c", "co", "cs", "d", "dl", "dn", "dpr", "du", "e", "eo",
        "f", "fl", "fn", "fps", "g", "h", "if", "ki", "l", "o", "p", "pg", "q", "r", "so", "sp", "t", "u", "vc",
        "vs", "w", "x", "y", "z",
    ]

    /// Cloudinary's flags (`fl_<name>`).
    static let cloudinaryFlags = [
        "alternate", "animated", "any_format", "apng", "attachment", "awebp", "c2pa", "clip", "clip_evenodd", "cutter",
        "draco", "force_icc", "force_strip", "getinfo", "group4", "hlsv3", "ignore_aspect_ratio", "ignore_mask_channels",
        "immutable_cache", "keep_attribution", "keep_dar", "keep_iptc", "keep_metadata", "layer_apply", "lossless", "lossy",
        "mono", "no_overflow", "no_stream", "png8", "png24", "png32", "preserve_transparency", "progressive",
        "rasterize", "region_relative", "relative", "replace_image", "sanitize", "splice", "streaming_attachment",
        "strip_profile", "text_disallow_overflow", "text_no_trim", "tiff8_lzw", "tiled", "truncate_ts", "waveform",
    ]

    /// Cloudinary's image and video effects (`e_<name>`).
    static let cloudinaryEffects = [
        "accelerate", "adv_redeye", "anti_removal", "art", "assist_colorblind", "auto_brightness", "auto_color",
        "auto_contrast", "auto_enhance", "background_removal", "bgremoval", "blackwhite", "blue", "blur", "blur_faces",
        "blur_region", "boomerang", "brightness", "brightness_hsb", "camera", "cartoonify", "colorize", "contrast",
        "cut_out", "deshake", "displace", "distort", "dropshadow", "enhance", "extract", "fade", "fill_light", "gamma",
        "gradient_fade", "grayscale", "green", "hue", "improve", "light", "lightroom", "loop", "make_transparent", "mask",
        "morphology", "multiply", "negate", "noise", "oil_paint", "opacity_threshold", "ordered_dither", "outline",
        "overlay", "pixelate", "pixelate_faces", "pixelate_region", "preview", "progressbar", "recolor", "red",
        "redeye", "remove_background", "replace_color", "reverse", "saturation", "screen", "sepia", "shadow",
        "sharpen", "shear", "simulate_colorblind", "style_transfer", "swap_image", "theme", "tint", "transition",
        "trim", "unsharp_mask", "upscale", "vectorize", "vibrance", "viesus_correct", "vignette", "volume", "zoompan",
    ]

    /// Cloudinary's crop and resize modes (`c_<mode>`).
    static let cloudinaryCropModes = [
        "auto", "auto_pad", "crop", "fill", "fill_pad", "fit", "imagga_crop", "imagga_scale", "lfill", "limit", "lpad",
        "mfit", "mpad", "pad", "scale", "thumb",
    ]

    /// Objects Cloudinary's object-aware cropping finds (`g_dog`, `g_cat:dog`; the COCO
    /// categories of its detection add-on), so that they are called known to Cloudinary, not
    /// unknown.
    static let objectGravities: Set<String> = [
        "person", "bicycle", "car", "motorcycle", "airplane", "bus", "train", "truck", "boat", "traffic_light",
        "fire_hydrant", "stop_sign", "parking_meter", "bench", "bird", "cat", "dog", "horse", "sheep", "cow",
        "elephant", "bear", "zebra", "giraffe", "backpack", "umbrella", "handbag", "tie", "suitcase", "frisbee",
        "skis", "snowboard", "sports_ball", "kite", "baseball_bat", "baseball_glove", "skateboard", "surfboard",
        "tennis_racket", "bottle", "wine_glass", "cup", "fork", "knife", "spoon", "bowl", "banana", "apple",
        "sandwich", "orange", "broccoli", "carrot", "hot_dog", "pizza", "donut", "cake", "chair", "couch",
        "potted_plant", "bed", "dining_table", "toilet", "tv", "laptop", "mouse", "remote", "keyboard",
        "cell_phone", "microwave", "oven", "toaster", "sink", "refrigerator", "book", "clock", "vase",
        "scissors", "teddy_bear", "hair_drier", "toothbrush",
    ]

    /// Cloudinary's text style keywords beyond bold, italic and normal, and whether a value
    /// follows (`letter_spacing_14`): the font weights, decorations, alignments and rendering
    /// options of its text layers.
    static let cloudinaryTextStyles: [String: Bool] = [
        "thin": false, "light": false, "underline": false, "strikethrough": false, "left": false, "center": false, "right": false, "end": false,
        "start": false, "justify": false, "stroke": false, "letter_spacing": true, "line_spacing": true,
        "antialias": true, "hinting": true,
    ]

    /// Predefined values of Cloudinary's expressions that Derive cannot compute when it plans,
    /// by every name they have, with why.
    static let uncomputableValues: [(names: [String], reason: String)] = [
        (["idu", "initial_duration", "initialDuration", "du", "duration"], "a duration, which Derive does not read from a source's header"),
        (["tar", "trimmed_aspect_ratio", "trimmedAspectRatio"], "the aspect ratio after a trim, which depends on the pixels"),
        (["px", "page_x", "pageX", "py", "page_y", "pageY"], "the offset of a layer in a PSD file, which Derive does not read"),
        (["ctx", "context", "tags", "md", "metadata"], "a text of the asset (its tags or context), which Derive compares in conditions (if_!sale!_in_tags, if_ctx:!key!_eq_!text!) and assigns to variables ($x_ctx:!key!_to_f), not inside arithmetic; assign it to a variable first and use $x"),
        (["dpr"], "the browser's device pixel ratio, which a batch job has no browser to ask"),
    ]

    /// One Cloudinary feature Derive refuses, found by where it appears in a string.
    public struct Unsupported: Sendable, Hashable {
        public enum Match: Sendable, Hashable {
            /// The whole parameter (`if_...`, `u_...`).
            case parameter(String)
            /// A parameter with exactly this value (`dpr_auto`).
            case value(String, String)
            /// A parameter whose value starts with this (`e_gen_`, `w_auto:`).
            case valuePrefix(String, String)
            /// A user-defined variable (`$name_...` or `$name` in a value).
            case variable
            /// A predefined value Derive cannot compute when planning (`fc`, `ils`, `du`).
            case uncomputableValue
            /// A gravity that needs a detector Derive does not have (`g_ocr_text`, `g_auto:subject`).
            case detectorGravity
            /// `dpr_auto` where its density variants cannot be made (with a layer, no size).
            case automaticDensity
            /// `w_auto` where its width variants cannot be the output's breakpoints.
            case automaticWidth
            /// A text style Derive does not render (`l_text:Arial_20_underline:Hi`).
            case textStyle
            /// A text style saved as an asset of the account (`l_text:headline:Hi`).
            case savedTextStyle
            /// A parameter beside `fl_layer_apply` other than the layer's placement (`e_sepia,fl_layer_apply`).
            case besideLayerApply
        }

        public var match: Match
        /// How the README and messages write it: `if_<condition>`.
        public var spelling: String
        /// What it is and why Derive refuses it, or which issue will add it.
        public var reason: String
    }

    static let plannedEffects = "Derive does not have it"
    static let generative = "generative AI, which Derive does not run"
    static let addOn = "a Cloudinary add-on or AI feature that Derive does not have"
    static let cmykRefusal = "Derive embeds no profile of an account (cs_icc:) nor a larger sRGB one; it writes sRGB (cs_srgb, cs_no_cmyk, cs_tinysrgb) or CMYK through libvips' built-in profile (cs_cmyk, cs_keep_cmyk; JPEG and TIFF)"
    static let video = "video and audio only; Derive makes images"

    /// The one list of Cloudinary features Derive does not support.
    public static let unsupported: [Unsupported] = [
        Unsupported(match: .variable, spelling: "$<name> in f_, pg_, t_, fl_, or beside an image layer applied with fl_layer_apply", reason: "user-defined variables in output settings, flags and named transformations, which are fixed before the chain runs, and in a name beside an image layer's l_ in the long form (l_logo,c_$mode/…/fl_layer_apply); they work in numbers (w_$w), names (c_$mode, e_$effect, l_$logo, l_text:$style:..., a text layer's style in either form) and as $(name) in l_text"),
        Unsupported(match: .uncomputableValue, spelling: "idu, du, tar, px, py, dpr in an expression; ctx, tags, md inside arithmetic", reason: "predefined values Derive cannot compute when it plans"),
        Unsupported(match: .automaticDensity, spelling: "dpr_auto inside a layer or an if_ block, with a layer, w_auto, another density, or no w_ or h_ in the chain", reason: "a batch job makes the output at densities 1, 2 and 3, every size of the chain multiplied by each; Cloudinary also scales layers and their text by the density, which Derive does not, and a density needs a size to multiply"),
        Unsupported(match: .automaticWidth, spelling: "w_auto[:<step>], w_auto:breakpoints... inside a layer or an if_ block, with h_, ar_, dpr_ or c_crop, twice, or before other steps", reason: "a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"),
        Unsupported(match: .value("h", "auto"), spelling: "h_auto", reason: "needs the browser's client hints"),
        Unsupported(match: .textStyle, spelling: "l_text:<font>_<size>_antialias_subpixel (light, thin)", reason: "subpixel antialiasing and weights other than bold: libvips' text operation takes no subpixel setting (glyphs are drawn as a grey coverage mask), and the light and thin weights are not rendered; Derive's text styles are bold, italic, normal, underline, strikethrough, letter_spacing_<n>, line_spacing_<n>, left, center, right, justify (start, end), stroke, antialias_<mode> (none, or grey: default, gray, fast, good, best) and hinting_<mode> (noted: fontconfig's hinting is used)"),
        Unsupported(match: .savedTextStyle, spelling: "l_text:<saved style>:<text>", reason: "text styles saved as assets of a Cloudinary account; give the style in the string: l_text:<font>_<size>[_bold][_italic]:<text>"),
        Unsupported(match: .besideLayerApply, spelling: "parameters other than g_, x_, y_, e_ and fl_region_relative beside fl_layer_apply", reason: "parameters other than the layer's placement (g_, x_, y_, fl_region_relative), a blend mode or an effect (e_) in the component that applies it; put what changes the layer in a component before fl_layer_apply, and what changes the result in one after it"),
        Unsupported(match: .valuePrefix("l", "private:"), spelling: "l_private:<id>, l_authenticated:<id>", reason: "Cloudinary's access-controlled assets; a Derive layer is a name, a URL (l_fetch:) or text"),
        Unsupported(match: .valuePrefix("l", "authenticated:"), spelling: "", reason: "Cloudinary's access-controlled assets; a Derive layer is a name, a URL (l_fetch:) or text"),
        Unsupported(match: .parameter("fn"), spelling: "fn_<function>", reason: "custom functions run user code (WebAssembly or a remote call), which Derive does not"),
        Unsupported(match: .parameter("bl"), spelling: "bl_<name>", reason: "baseline transformations; \(plannedEffects)"),
        Unsupported(match: .valuePrefix("cs", "icc:"), spelling: "cs_icc:<profile>, cs_srgb:truecolor", reason: cmykRefusal),
        Unsupported(match: .value("cs", "srgb:truecolor"), spelling: "", reason: cmykRefusal),
        Unsupported(match: .valuePrefix("e", "gen_"), spelling: "e_gen_*", reason: generative),
        Unsupported(match: .valuePrefix("b", "gen_fill"), spelling: "b_gen_fill", reason: generative),
        Unsupported(match: .valuePrefix("e", "background_removal"), spelling: "e_background_removal, e_bgremoval, e_remove_background", reason: addOn),
        Unsupported(match: .valuePrefix("e", "bgremoval"), spelling: "", reason: addOn),
        Unsupported(match: .valuePrefix("e", "remove_background"), spelling: "", reason: addOn),
        Unsupported(match: .valuePrefix("e", "style_transfer"), spelling: "e_style_transfer", reason: addOn),
        Unsupported(match: .valuePrefix("e", "upscale"), spelling: "e_upscale, e_enhance", reason: addOn),
        Unsupported(match: .valuePrefix("e", "enhance"), spelling: "", reason: addOn),
        Unsupported(match: .valuePrefix("e", "viesus_correct"), spelling: "e_viesus_correct", reason: addOn),
        // Cloudinary's PHP transformation builder files it under Effect/Addon ("Applies Adobe
        // Lightroom filter"; src/Transformation/Effect/Addon/AddonEffectTrait.php).
        Unsupported(match: .valuePrefix("e", "lightroom"), spelling: "e_lightroom", reason: addOn),
        Unsupported(match: .valuePrefix("c", "imagga_"), spelling: "c_imagga_crop, c_imagga_scale", reason: addOn),
        Unsupported(match: .detectorGravity, spelling: "g_auto:subject, g_<object> (g_dog, g_bottle:cup), g_ocr_text, g_body, g_adv_*, g_custom", reason: "object, text and body gravities: \(addOn)"),
        Unsupported(match: .value("a", "auto"), spelling: "a_auto", reason: "not among Cloudinary's documented rotation modes; a_auto_right and a_auto_left turn by the requested aspect ratio, and EXIF orientation is applied automatically"),
        Unsupported(match: .value("a", "exif"), spelling: "", reason: "EXIF orientation is applied automatically; a_ignore turns it off"),
    ] + ["ac", "af", "br", "du", "eo", "so", "sp", "vc", "vs", "fps", "ki"].map {
        Unsupported(match: .parameter($0), spelling: $0 == "ac" ? "ac_, af_, br_, du_, eo_, so_, sp_, vc_, vs_, fps_, ki_" : "", reason: video)
    } + ["video:", "subtitles:", "audio:"].map {
        Unsupported(match: .valuePrefix("l", $0), spelling: $0 == "video:" ? "l_video:, l_subtitles:, l_audio:" : "", reason: video)
    }

    /// Parameters that take names, not numbers: a variable there is refused as such.
    static let variableKeys: Set<String> = ["f", "pg", "t", "fl"]

    /// The feature a parameter names, when Derive refuses it.
    static func unsupported(key: String, value: String) -> Unsupported? {
        if variableKeys.contains(key) && value.contains("$") { return unsupported.first { $0.match == .variable } }
        return unsupported.first { feature in
            switch feature.match {
            case .parameter(let k): return k == key
            case .value(let k, let v): return k == key && v == value
            case .valuePrefix(let k, let prefix):
                return k == key && value.hasPrefix(prefix)
            case .variable, .uncomputableValue, .detectorGravity, .textStyle, .savedTextStyle, .besideLayerApply, .automaticWidth, .automaticDensity: return false
            }
        }
    }

    /// The entry of `unsupported` for one of the matches without a key. Every such match has
    /// exactly one entry (`CloudinaryLanguageTests` reads them all), so the unwrap is an
    /// invariant of the table, not of any input.
    static func feature(_ match: Unsupported.Match) -> Unsupported {
        unsupported.first { $0.match == match }!
    }

    /// The first line of a refusal of something Cloudinary has and Derive does not.
    static func notSupported(_ written: String, _ feature: Unsupported) -> String {
        "\(written): known to Cloudinary, not supported by Derive: \(feature.reason)"
    }

    /// The first line of a refusal of something Cloudinary does not have either.
    static func unknown(_ written: String, what: String, hint: String) -> String {
        "\(written): unknown to Cloudinary (no \(what))\(hint)"
    }

    /// The first line of a refusal of something Cloudinary would refuse too, saying why.
    static func malformed(_ written: String, _ reason: String, hint: String) -> String {
        "\(written): unknown to Cloudinary (\(reason))\(hint)"
    }

    /// The first line of a refusal of a number out of range: outside what Cloudinary documents
    /// (`e_sepia:-10`, `w_0`), or within it and beyond a limit of Derive's (`w_20000`).
    static func outOfRange(_ written: String, _ reason: String, bound: FieldIssue.Bound) -> String {
        switch bound {
        // Cloudinary has the parameter and refuses the value, as Derive does.
        case .cloudinary: "\(written): out of Cloudinary's range (\(reason))"
        case .derive: "\(written): known to Cloudinary, not supported by Derive: beyond Derive's limits: \(reason)"
        }
    }

    /// Docs/language.md's list: one line per feature that has a spelling.
    public static var readmeList: [String] {
        unsupported.filter { !$0.spelling.isEmpty }.map { "- `\($0.spelling)`: \($0.reason)" }
    }
}
