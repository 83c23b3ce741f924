@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// Cloudinary's colour and tone effects (issue 16, item 1): each in its string and JSON forms,
/// with Cloudinary's ranges and defaults, and its canonical round trip.
@Suite struct ToneEffectTests {
    static func step(_ text: String) throws -> Step {
        let result = CloudinaryParser().parse(text)
        if !result.issues.isEmpty { throw ValidationError(result.issues) }
        return try #require(result.steps.first)
    }

    static func step(json: String) throws -> Step {
        let job = try TransformationInput.parse(#"[\#(json)]"#)
        return try #require(job.outputs.first?.chain.first)
    }

    @Test(arguments: [
        ("e_gamma", #"{"gamma": true}"#, Effect.named("gamma", 0)),
        ("e_gamma:50", #"{"gamma": 50}"#, .named("gamma", 50)),
        ("e_gamma:-50", #"{"gamma": {"level": -50}}"#, .named("gamma", -50)),
        ("e_gamma:150", #"{"gamma": {"level": 150}}"#, .named("gamma", 150)),
        ("e_hue", #"{"hue": true}"#, .named("hue", 80)),
        ("e_hue:-100", #"{"hue": -100}"#, .named("hue", -100)),
        ("e_hue:40", #"{"hue": {"level": 40}}"#, .named("hue", 40)),
        ("e_brightness_hsb", #"{"brightness_hsb": true}"#, .named("brightness_hsb", 80)),
        ("e_brightness_hsb:-99", #"{"brightness_hsb": {"level": -99}}"#, .named("brightness_hsb", -99)),
        ("e_red", #"{"red": true}"#, .named("red", 0)),
        ("e_red:50", #"{"red": 50}"#, .named("red", 50)),
        ("e_green:-100", #"{"green": {"level": -100}}"#, .named("green", -100)),
        ("e_blue:100", #"{"blue": 100}"#, .named("blue", 100)),
        ("e_blackwhite", #"{"blackwhite": true}"#, .named("blackwhite", 50)),
        ("e_blackwhite:0", #"{"blackwhite": {"threshold": 0}}"#, .named("blackwhite", 0)),
        ("e_blackwhite:70", #"{"blackwhite": 70}"#, .named("blackwhite", 70)),
        ("e_vibrance", #"{"vibrance": true}"#, .named("vibrance", 20)),
        ("e_vibrance:-100", #"{"vibrance": {"strength": -100}}"#, .named("vibrance", -100)),
        ("e_vibrance:60", #"{"vibrance": 60}"#, .named("vibrance", 60)),
        ("e_unsharp_mask", #"{"unsharp_mask": true}"#, .named("unsharp_mask", 100)),
        ("e_unsharp_mask:1", #"{"unsharp_mask": {"strength": 1}}"#, .named("unsharp_mask", 1)),
        ("e_unsharp_mask:2000", #"{"unsharp_mask": 2000}"#, .named("unsharp_mask", 2000)),
        ("e_auto_contrast", #"{"auto_contrast": true}"#, .named("auto_contrast", 100)),
        ("e_auto_contrast:40", #"{"auto_contrast": {"blend": 40}}"#, .named("auto_contrast", 40)),
        ("e_auto_contrast:0", #"{"auto_contrast": 0}"#, .named("auto_contrast", 0)),
        ("e_auto_brightness", #"{"auto_brightness": true}"#, .named("auto_brightness", 100)),
        ("e_auto_brightness:30", #"{"auto_brightness": {"blend": 30}}"#, .named("auto_brightness", 30)),
        ("e_auto_brightness:100", #"{"auto_brightness": 100}"#, .named("auto_brightness", 100)),
        ("e_auto_color", #"{"auto_color": true}"#, .named("auto_color", 100)),
        ("e_auto_color:60", #"{"auto_color": {"blend": 60}}"#, .named("auto_color", 60)),
        ("e_auto_color:0", #"{"auto_color": 0}"#, .named("auto_color", 0)),
        ("e_improve", #"{"improve": true}"#, .declared(DeclaredEffect(name: "improve", values: [.choice("outdoor"), .number(100)]))),
        ("e_improve:outdoor", #"{"improve": {"mode": "outdoor"}}"#, .declared(DeclaredEffect(name: "improve", values: [.choice("outdoor"), .number(100)]))),
        ("e_improve:indoor", #"{"improve": {"mode": "indoor"}}"#, .declared(DeclaredEffect(name: "improve", values: [.choice("indoor"), .number(100)]))),
        ("e_improve:indoor:50", #"{"improve": {"mode": "indoor", "blend": 50}}"#, .declared(DeclaredEffect(name: "improve", values: [.choice("indoor"), .number(50)]))),
        ("e_improve:40", #"{"improve": 40}"#, .declared(DeclaredEffect(name: "improve", values: [.choice("outdoor"), .number(40)]))),
        ("e_improve:outdoor:0", #"{"improve": {"blend": 0}}"#, .declared(DeclaredEffect(name: "improve", values: [.choice("outdoor"), .number(0)]))),
        ("e_fill_light", #"{"fill_light": true}"#, .declared(DeclaredEffect(name: "fill_light", values: [.number(100), .number(0)]))),
        ("e_fill_light:70", #"{"fill_light": 70}"#, .declared(DeclaredEffect(name: "fill_light", values: [.number(70), .number(0)]))),
        ("e_fill_light:70:-30", #"{"fill_light": {"blend": 70, "bias": -30}}"#, .declared(DeclaredEffect(name: "fill_light", values: [.number(70), .number(-30)]))),
        ("e_fill_light:100:100", #"{"fill_light": {"bias": 100}}"#, .declared(DeclaredEffect(name: "fill_light", values: [.number(100), .number(100)]))),
        ("e_replace_color:orange", #"{"replace_color": "orange"}"#, .replaceColor(50, to: Color.parse("orange")!, from: nil)),
        ("e_replace_color:aa7812:60", ##"{"replace_color": {"to": "#aa7812", "tolerance": 60}}"##, .replaceColor(60, to: Color(red: 0xAA, green: 0x78, blue: 0x12), from: nil)),
        ("e_replace_color:orange:50:green", #"{"replace_color": {"to": "orange", "from": "green"}}"#, .replaceColor(50, to: Color.parse("orange")!, from: Color.parse("green")!)),
        ("e_replace_color:rgb:ff0000:20:rgb:00f", #"{"replace_color": {"to": "red", "tolerance": 20, "from": "blue"}}"#, .replaceColor(20, to: Color.parse("red")!, from: .blue)),
        ("e_replace_color:blue:300:0f0", ##"{"replace_color": {"to": "blue", "tolerance": 300, "from": "#00ff00"}}"##, .replaceColor(300, to: .blue, from: Color.parse("lime")!)),
        ("e_make_transparent", #"{"make_transparent": true}"#, .makeTransparent(10, color: nil)),
        ("e_make_transparent:30", #"{"make_transparent": 30}"#, .makeTransparent(30, color: nil)),
        ("e_make_transparent:0,co_white", #"{"make_transparent": {"tolerance": 0, "color": "white"}}"#, .makeTransparent(0, color: .white)),
        ("e_make_transparent,co_rgb:336699", ##"{"make_transparent": {"color": "#336699"}}"##, .makeTransparent(10, color: Color(red: 0x33, green: 0x66, blue: 0x99))),
        ("e_opacity_threshold", #"{"opacity_threshold": true}"#, .named("opacity_threshold", 50)),
        ("e_opacity_threshold:0", #"{"opacity_threshold": {"level": 0}}"#, .named("opacity_threshold", 0)),
        ("e_opacity_threshold:100", #"{"opacity_threshold": 100}"#, .named("opacity_threshold", 100)),
        ("e_simulate_colorblind", #"{"simulate_colorblind": true}"#, .declared(DeclaredEffect(name: "simulate_colorblind", values: [.choice("deuteranopia")]))),
        ("e_simulate_colorblind:protanopia", #"{"simulate_colorblind": "protanopia"}"#, .declared(DeclaredEffect(name: "simulate_colorblind", values: [.choice("protanopia")]))),
        ("e_simulate_colorblind:rod_monochromacy", #"{"simulate_colorblind": {"condition": "rod_monochromacy"}}"#, .declared(DeclaredEffect(name: "simulate_colorblind", values: [.choice("rod_monochromacy")]))),
        ("e_recolor:0.3:0.6:0.1:0.3:0.6:0.1:0.3:0.6:0.1", #"{"recolor": [0.3, 0.6, 0.1, 0.3, 0.6, 0.1, 0.3, 0.6, 0.1]}"#, .recolor([0.3, 0.6, 0.1, 0.3, 0.6, 0.1, 0.3, 0.6, 0.1])),
        ("e_assist_colorblind", #"{"assist_colorblind": true}"#, .assistColorblind(10, xray: false)),
        ("e_assist_colorblind:40", #"{"assist_colorblind": {"strength": 40}}"#, .assistColorblind(40, xray: false)),
        ("e_assist_colorblind:xray", #"{"assist_colorblind": {"xray": true}}"#, .assistColorblind(10, xray: true)),
        ("e_ordered_dither", #"{"ordered_dither": true}"#, .named("ordered_dither", 0)),
        ("e_ordered_dither:5", #"{"ordered_dither": {"level": 5}}"#, .named("ordered_dither", 5)),
        ("e_ordered_dither:2", #"{"ordered_dither": 2}"#, .named("ordered_dither", 2)),
        ("e_ordered_dither:12", #"{"ordered_dither": 12}"#, .named("ordered_dither", 12)),
        ("e_ordered_dither:18", #"{"ordered_dither": {"level": 18}}"#, .named("ordered_dither", 18)),
        ("e_recolor:1:0:0:0:0:1:0:0:0:0:1:0:0:0:0:0.5", #"{"recolor": {"matrix": [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.5]}}"#, .recolor([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.5])),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try Self.step(text) == .effect(effect))
        #expect(try Self.step(json: json) == .effect(effect))
    }

    /// The canonical spelling drops a default amount, and reads back to the same identity.
    @Test(arguments: [
        ("e_gamma:50", "e_gamma:50"), ("e_gamma:-20", "e_gamma:-20"), ("c_scale,w_100/e_gamma:150", "c_scale,w_100/e_gamma:150"),
        ("e_hue", "e_hue"), ("e_hue:80", "e_hue"), ("e_hue:-40", "e_hue:-40"), ("e_hue:100/e_gamma:10", "e_hue:100/e_gamma:10"),
        ("e_brightness_hsb", "e_brightness_hsb"), ("e_brightness_hsb:80", "e_brightness_hsb"), ("e_brightness_hsb:-30", "e_brightness_hsb:-30"),
        ("e_red:50", "e_red:50"), ("e_green:-20/e_blue:100", "e_green:-20/e_blue:100"),
        ("e_blackwhite", "e_blackwhite"), ("e_blackwhite:50", "e_blackwhite"), ("e_blackwhite:0", "e_blackwhite:0"), ("e_blackwhite:100", "e_blackwhite:100"),
        ("e_vibrance", "e_vibrance"), ("e_vibrance:20", "e_vibrance"), ("e_vibrance:-60", "e_vibrance:-60"),
        ("e_unsharp_mask", "e_unsharp_mask"), ("e_unsharp_mask:100", "e_unsharp_mask"), ("e_unsharp_mask:300", "e_unsharp_mask:300"),
        ("e_auto_contrast", "e_auto_contrast"), ("e_auto_contrast:100", "e_auto_contrast"), ("e_auto_contrast:40", "e_auto_contrast:40"),
        ("e_auto_brightness", "e_auto_brightness"), ("e_auto_brightness:100", "e_auto_brightness"), ("e_auto_brightness:30", "e_auto_brightness:30"),
        ("e_auto_color", "e_auto_color"), ("e_auto_color:100", "e_auto_color"), ("e_auto_color:45", "e_auto_color:45"),
        ("e_improve", "e_improve"), ("e_improve:outdoor", "e_improve"), ("e_improve:outdoor:100", "e_improve"),
        ("e_improve:indoor", "e_improve:indoor"), ("e_improve:indoor:100", "e_improve:indoor"), ("e_improve:indoor:30", "e_improve:indoor:30"),
        // A blend alone is written after the mode, so it cannot be read as one.
        ("e_improve:30", "e_improve:outdoor:30"),
        ("e_fill_light", "e_fill_light"), ("e_fill_light:100", "e_fill_light"), ("e_fill_light:100:0", "e_fill_light"),
        ("e_fill_light:60", "e_fill_light:60"), ("e_fill_light:60:-20", "e_fill_light:60:-20"), ("e_fill_light:100:40", "e_fill_light:100:40"),
        ("e_replace_color:orange", "e_replace_color:orange"), ("e_replace_color:orange:50", "e_replace_color:orange"),
        ("e_replace_color:aa7812:60", "e_replace_color:rgb:aa7812:60"), ("e_replace_color:orange:50:green", "e_replace_color:orange:50:green"),
        ("e_replace_color:rgb:ff0000:20:rgb:00f", "e_replace_color:red:20:blue"),
        ("e_make_transparent", "e_make_transparent"), ("e_make_transparent:10", "e_make_transparent"), ("e_make_transparent:30", "e_make_transparent:30"),
        ("e_make_transparent:30,co_white", "e_make_transparent:30,co_white"), ("e_make_transparent:10,co_rgb:336699", "e_make_transparent,co_rgb:336699"),
        ("e_opacity_threshold", "e_opacity_threshold"), ("e_opacity_threshold:50", "e_opacity_threshold"), ("e_opacity_threshold:0", "e_opacity_threshold:0"),
        ("e_simulate_colorblind", "e_simulate_colorblind"), ("e_simulate_colorblind:deuteranopia", "e_simulate_colorblind"),
        ("e_simulate_colorblind:tritanomaly", "e_simulate_colorblind:tritanomaly"), ("e_simulate_colorblind:cone_monochromacy", "e_simulate_colorblind:cone_monochromacy"),
        ("e_assist_colorblind", "e_assist_colorblind"), ("e_assist_colorblind:10", "e_assist_colorblind"), ("e_assist_colorblind:70", "e_assist_colorblind:70"),
        ("e_assist_colorblind:xray", "e_assist_colorblind:xray"),
        ("e_ordered_dither", "e_ordered_dither"), ("e_ordered_dither:0", "e_ordered_dither"), ("e_ordered_dither:4", "e_ordered_dither:4"),
        ("e_recolor:1:0:0:0:0:1:0:1:0", "e_recolor:1:0:0:0:0:1:0:1:0"), ("e_recolor:0.50:0.25:0.25:0:1:0:0:0:1.0", "e_recolor:0.5:0.25:0.25:0:1:0:0:0:1"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// Levels that change nothing (Cloudinary's gamma default, a hue turn of 0) are no step.
    @Test(arguments: ["e_gamma", "e_gamma:0", "e_hue:0", "e_brightness_hsb:0", "e_red", "e_green:0", "e_blue", "e_vibrance:0", "e_auto_contrast:0", "e_auto_brightness:0",
                      "e_auto_color:0", "e_improve:0", "e_improve:indoor:0", "e_fill_light:0", "e_fill_light:0:50"])
    func identityLevelsAreNoStep(text: String) throws {
        #expect(try canonical(string: "c_scale,w_100/\(text)").identity == canonical(string: "c_scale,w_100").identity)
    }

    @Test(arguments: [
        ("e_gamma:151", "e_gamma:151: out of Cloudinary's range (e_gamma level must be between -50 and 150, got 151)"),
        ("e_gamma:-51", "e_gamma:-51: out of Cloudinary's range (e_gamma level must be between -50 and 150, got -51)"),
        ("e_hue:101", "e_hue:101: out of Cloudinary's range (e_hue level must be between -100 and 100, got 101)"),
        ("e_hue:-101", "e_hue:-101: out of Cloudinary's range (e_hue level must be between -100 and 100, got -101)"),
        ("e_brightness_hsb:-100", "e_brightness_hsb:-100: out of Cloudinary's range (e_brightness_hsb level must be between -99 and 100, got -100)"),
        ("e_red:101", "e_red:101: out of Cloudinary's range (e_red level must be between -100 and 100, got 101)"),
        ("e_green:-101", "e_green:-101: out of Cloudinary's range (e_green level must be between -100 and 100, got -101)"),
        ("e_blue:200", "e_blue:200: out of Cloudinary's range (e_blue level must be between -100 and 100, got 200)"),
        ("e_blackwhite:-1", "e_blackwhite:-1: out of Cloudinary's range (e_blackwhite threshold must be between 0 and 100, got -1)"),
        ("e_blackwhite:101", "e_blackwhite:101: out of Cloudinary's range (e_blackwhite threshold must be between 0 and 100, got 101)"),
        ("e_vibrance:101", "e_vibrance:101: out of Cloudinary's range (e_vibrance strength must be between -100 and 100, got 101)"),
        ("e_unsharp_mask:0", "e_unsharp_mask:0: out of Cloudinary's range (e_unsharp_mask strength must be between 1 and 2000, got 0)"),
        ("e_unsharp_mask:2001", "e_unsharp_mask:2001: out of Cloudinary's range (e_unsharp_mask strength must be between 1 and 2000, got 2001)"),
        ("e_auto_contrast:101", "e_auto_contrast:101: out of Cloudinary's range (e_auto_contrast blend must be between 0 and 100, got 101)"),
        ("e_auto_contrast:-1", "e_auto_contrast:-1: out of Cloudinary's range (e_auto_contrast blend must be between 0 and 100, got -1)"),
        ("e_auto_brightness:101", "e_auto_brightness:101: out of Cloudinary's range (e_auto_brightness blend must be between 0 and 100, got 101)"),
        ("e_auto_color:101", "e_auto_color:101: out of Cloudinary's range (e_auto_color blend must be between 0 and 100, got 101)"),
        ("e_improve:indoor:101", "e_improve:indoor:101: out of Cloudinary's range (e_improve blend must be between 0 and 100, got 101)"),
        ("e_improve:-1", "e_improve:-1: out of Cloudinary's range (e_improve blend must be between 0 and 100, got -1)"),
        ("e_improve:sunny", #"e_improve:sunny: unknown to Cloudinary (no e_improve mode "sunny"); modes: outdoor, indoor"#),
        ("e_fill_light:101", "e_fill_light:101: out of Cloudinary's range (e_fill_light blend must be between 0 and 100, got 101)"),
        ("e_fill_light:50:101", "e_fill_light:50:101: out of Cloudinary's range (e_fill_light bias must be between -100 and 100, got 101)"),
        ("e_fill_light:50:-101", "e_fill_light:50:-101: out of Cloudinary's range (e_fill_light bias must be between -100 and 100, got -101)"),
        ("e_fill_light:50:dark", #"e_fill_light:50:dark: unknown to Cloudinary (e_fill_light takes a whole-number bias (-100 to 100), got "dark")"#),
        ("e_fill_light:50:10:10", "e_fill_light:50:10:10: unknown to Cloudinary (e_fill_light takes a blend and a bias)"),
        ("e_make_transparent:101", "e_make_transparent:101: out of Cloudinary's range (e_make_transparent tolerance must be between 0 and 100, got 101)"),
        ("e_make_transparent:-1,co_white", "e_make_transparent:-1: out of Cloudinary's range (e_make_transparent tolerance must be between 0 and 100, got -1)"),
        ("e_make_transparent:10:white", "e_make_transparent takes one amount; give the colour with co_"),
        ("e_opacity_threshold:101", "e_opacity_threshold:101: out of Cloudinary's range (e_opacity_threshold level must be between 0 and 100, got 101)"),
        // Cloudinary documents no range for this tolerance (a radius in Lab); 300 is Derive's.
        ("e_replace_color:orange:301", "e_replace_color:orange:301: known to Cloudinary, not supported by Derive: beyond Derive's limits: e_replace_color tolerance must be between 0 and 300, got 301"),
        ("e_replace_color:orange:-1", "e_replace_color:orange:-1: out of Cloudinary's range (e_replace_color tolerance must be between 0 and 300, got -1)"),
        ("e_replace_color", "e_replace_color needs a target colour: e_replace_color:<to>[:<tolerance>][:<from>]"),
        ("e_replace_color:orange:lots", #"e_replace_color takes a whole-number tolerance after the target colour, got "lots""#),
        ("e_replace_color:orangey", #"e_replace_color:orangey: unknown to Cloudinary (no colour "orangey"); did you mean "orange"?"#),
        ("e_replace_color:red:20:bleu", #"e_replace_color:red:20:bleu: unknown to Cloudinary (no colour "bleu"); did you mean "blue"?"#),
        ("e_simulate_colorblind:deuteranopy", #"e_simulate_colorblind:deuteranopy: unknown to Cloudinary (no colour-blind condition "deuteranopy"); did you mean "deuteranopia"?"#),
        ("e_assist_colorblind:0", "e_assist_colorblind:0: out of Cloudinary's range (e_assist_colorblind strength must be between 1 and 100, got 0)"),
        ("e_assist_colorblind:101", "e_assist_colorblind:101: out of Cloudinary's range (e_assist_colorblind strength must be between 1 and 100, got 101)"),
        ("e_assist_colorblind:xray:20", "e_assist_colorblind:xray takes no strength"),
        ("e_ordered_dither:19", "e_ordered_dither:19: out of Cloudinary's range (e_ordered_dither level must be between 0 and 18, got 19)"),
        ("e_recolor", "e_recolor needs a colour matrix: 9 numbers (3x3, RGB) or 16 (4x4, RGBA), row by row, such as e_recolor:0.3:0.6:0.1:0.3:0.6:0.1:0.3:0.6:0.1"),
        ("e_recolor:1:0:0", "e_recolor:1:0:0: unknown to Cloudinary (e_recolor matrix needs 9 numbers (3x3, RGB) or 16 (4x4, RGBA), got 3)"),
        ("e_recolor:1:0:0:0:1:0:0:0:abc", #"e_recolor takes numbers, got "abc""#),
        // Cloudinary documents no range for the numbers; ±100 is Derive's.
        ("e_recolor:101:0:0:0:1:0:0:0:1", "e_recolor:101:0:0:0:1:0:0:0:1: known to Cloudinary, not supported by Derive: beyond Derive's limits: e_recolor matrix numbers must be between -100 and 100, got 101"),
        ("e_replace_color:orange:50:green:red", #"e_replace_color takes a target colour, a tolerance and a source colour, got "replace_color:orange:50:green:red""#),
    ])
    func stringsOutsideCloudinarysRangeAreRefused(text: String, reason: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.reason) == [reason])
    }

    @Test(arguments: [
        (#"{"gamma": 200}"#, "outputs[0].chain[0].gamma.level: must be between -50 and 150, got 200"),
        (#"{"hue": {"level": -120}}"#, "outputs[0].chain[0].hue.level: must be between -100 and 100, got -120"),
        (#"{"brightness_hsb": 101}"#, "outputs[0].chain[0].brightness_hsb.level: must be between -99 and 100, got 101"),
        (#"{"blue": {"level": -101}}"#, "outputs[0].chain[0].blue.level: must be between -100 and 100, got -101"),
        (#"{"blackwhite": {"threshold": 150}}"#, "outputs[0].chain[0].blackwhite.threshold: must be between 0 and 100, got 150"),
        (#"{"vibrance": -101}"#, "outputs[0].chain[0].vibrance.strength: must be between -100 and 100, got -101"),
        (#"{"unsharp_mask": {"strength": 0}}"#, "outputs[0].chain[0].unsharp_mask.strength: must be between 1 and 2000, got 0"),
        (#"{"auto_contrast": {"blend": 101}}"#, "outputs[0].chain[0].auto_contrast.blend: must be between 0 and 100, got 101"),
        (#"{"auto_brightness": -5}"#, "outputs[0].chain[0].auto_brightness.blend: must be between 0 and 100, got -5"),
        (#"{"auto_color": 120}"#, "outputs[0].chain[0].auto_color.blend: must be between 0 and 100, got 120"),
        (#"{"improve": {"mode": "indoor", "blend": 101}}"#, "outputs[0].chain[0].improve.blend: must be between 0 and 100, got 101"),
        (#"{"improve": {"mode": "sunny"}}"#, #"outputs[0].chain[0].improve.mode: expected one of "outdoor", "indoor", got "sunny""#),
        (#"{"fill_light": {"bias": -120}}"#, "outputs[0].chain[0].fill_light.bias: must be between -100 and 100, got -120"),
        (#"{"fill_light": {"blend": 101, "bias": 0}}"#, "outputs[0].chain[0].fill_light.blend: must be between 0 and 100, got 101"),
        (#"{"auto_color": {"mode": "indoor"}}"#, "outputs[0].chain[0].auto_color.mode: unknown key; expected one of blend"),
        (#"{"make_transparent": {"tolerance": 101}}"#, "outputs[0].chain[0].make_transparent.tolerance: must be between 0 and 100, got 101"),
        (#"{"opacity_threshold": -1}"#, "outputs[0].chain[0].opacity_threshold.level: must be between 0 and 100, got -1"),
        (#"{"replace_color": {"tolerance": 20}}"#, "outputs[0].chain[0].replace_color.to: is required: the colour to replace with"),
        (#"{"replace_color": {"to": "red", "tolerance": 400}}"#, "outputs[0].chain[0].replace_color.tolerance: must be between 0 and 300, got 400"),
        (#"{"simulate_colorblind": "red"}"#, #"outputs[0].chain[0].simulate_colorblind.condition: expected one of "deuteranopia", "protanopia", "tritanopia", "deuteranomaly", "tritanomaly", "cone_monochromacy", "rod_monochromacy", got "red""#),
        (#"{"ordered_dither": 19}"#, "outputs[0].chain[0].ordered_dither.level: must be between 0 and 18, got 19"),
        (#"{"recolor": [1, 2]}"#, "outputs[0].chain[0].recolor.matrix: needs 9 numbers (3x3, RGB) or 16 (4x4, RGBA), got 2"),
        (#"{"recolor": true}"#, "outputs[0].chain[0].recolor: expected a list of 9 or 16 numbers, got boolean true"),
        (#"{"replace_color": true}"#, "outputs[0].chain[0].replace_color: expected an object, got boolean true"),
    ])
    func jsonOutsideCloudinarysRangeIsRefused(step: String, message: String) {
        expectStepRefused(step, message: message)
    }
}

/// The pure maths behind the effects: e_ordered_dither's maps (sizes and thresholds as
/// ImageMagick's thresholds.xml lists them) and e_assist_colorblind:xray's daltonisation.
@Suite struct EffectMathTests {
    @Test(arguments: [(0, 1, [128]), (1, 2, [85, 170, 170, 85]), (2, 2, [51, 153, 204, 102]),
                      (3, 3, [77, 179, 102, 153, 26, 230, 51, 204, 128])])
    func smallMaps(level: Int, size: Int, thresholds: [UInt8]) throws {
        let tile = try #require(DitherMaps.tile(level: level))
        #expect(tile.size == size && tile.thresholds == thresholds)
    }

    /// Daltonisation leaves greys grey (its rows sum to 1) and moves a pure red's difference
    /// into green and blue.
    @Test func daltonisationKeepsGreys() {
        let d = ColorblindCondition.deuteranopia.daltonisation
        for row in d { #expect(abs(row.reduce(0, +) - 1) < 1e-5, "\(d)") }
        #expect(d[0] == [1, 0, 0])
        #expect(d[2][0] != 0)
    }

    /// The Bayer maps hold every level once, 1 to n², and 4x4 is the textbook one.
    @Test func bayerMapsHoldEveryLevelOnce() throws {
        #expect(DitherMaps.bayer(order: 2) == [[0, 8, 2, 10], [12, 4, 14, 6], [3, 11, 1, 9], [15, 7, 13, 5]])
        let eight = DitherMaps.bayer(order: 3).flatMap { $0 }
        #expect(eight.sorted() == Array(0..<64))
        #expect(try #require(DitherMaps.tile(level: 5)).size == 8)
        #expect(DitherMaps.tile(level: 19) == nil)
    }

    /// The halftone and circle maps (6–18) have thresholds.xml's sizes, are square, and spread
    /// their thresholds over the whole range: the darkest cell turns on first, the lightest last,
    /// and the mean threshold sits near the middle (so a mid grey comes out half on).
    @Test func halftoneAndCircleMapsHaveTheirSizes() throws {
        let sizes = [4, 6, 8, 4, 6, 8, 16, 5, 5, 6, 6, 7, 7]
        for (level, size) in zip(6...18, sizes) {
            let tile = try #require(DitherMaps.tile(level: level), "level \(level)")
            #expect(tile.size == size && tile.thresholds.count == size * size, "level \(level)")
            let mean = tile.thresholds.map(Double.init).reduce(0, +) / Double(tile.thresholds.count)
            #expect(abs(mean - 127.5) < 8, "level \(level): mean threshold \(mean)")
            #expect(tile.thresholds.min()! < 30 && tile.thresholds.max()! > 225, "level \(level)")
        }
        // h4x4a's first row, 4 2 7 5 over 9 steps.
        #expect(Array(try #require(DitherMaps.tile(level: 6)).thresholds.prefix(4)) == [113, 57, 198, 142])
        // Black circles start at the corners, white ones in the middle.
        #expect(try #require(DitherMaps.tile(level: 13)).thresholds[0] == 10)
        #expect(try #require(DitherMaps.tile(level: 14)).thresholds[12] == 10)
    }
}

/// cs_ and fl_strip_profile (issue 16, item 1): what each means for the output's profile, in
/// strings and JSON, and the canonical identity.
@Suite struct ColourSpaceSettingParsingTests {
    /// Pairs that must be the same output.
    @Test(arguments: [
        ("c_scale,w_100/cs_srgb", "c_scale,w_100"), ("c_scale,w_100,cs_no_cmyk", "c_scale,w_100"),
        // Stripping everything removes the profile already.
        ("c_scale,w_100/fl_strip_profile", "c_scale,w_100"), ("c_scale,w_100/cs_tinysrgb", "c_scale,w_100"),
        ("c_scale,w_100/fl_keep_iptc,cs_tinysrgb", "c_scale,w_100/fl_keep_iptc.strip_profile"),
        ("c_scale,w_100/fl_strip_profile.keep_metadata", "c_scale,w_100/fl_keep_iptc.strip_profile"),
    ])
    func sameOutput(text: String, other: String) throws {
        #expect(try canonical(string: text).identity == canonical(string: other).identity)
    }

    @Test func keepingMetadataWithoutTheProfileIsAnotherOutput() throws {
        #expect(try canonical(string: "c_scale,w_100/fl_keep_iptc.strip_profile").identity != canonical(string: "c_scale,w_100/fl_keep_iptc").identity)
        let json = #"[{"resize": {"mode": "scale", "width": 100}}]"#
        let fromJSON = try canonical(json: #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": \#(json), "strip": false, "stripProfile": true}]}"#)
        #expect(fromJSON.identity == (try canonical(string: "c_scale,w_100/fl_keep_iptc.strip_profile")).identity)
        try expectRoundTrip("c_scale,w_100/fl_keep_iptc.strip_profile", printed: "c_scale,w_100/fl_keep_iptc.strip_profile")
    }

    @Test(arguments: [
        ("cs_icc:profile.icc", "cs_icc:profile.icc: known to Cloudinary, not supported by Derive: Derive embeds no profile of an account (cs_icc:) nor a larger sRGB one; it writes sRGB (cs_srgb, cs_no_cmyk, cs_tinysrgb) or CMYK through libvips' built-in profile (cs_cmyk, cs_keep_cmyk; JPEG and TIFF)"),
        ("cs_srgb:truecolor", "cs_srgb:truecolor: known to Cloudinary, not supported by Derive: Derive embeds no profile of an account (cs_icc:) nor a larger sRGB one; it writes sRGB (cs_srgb, cs_no_cmyk, cs_tinysrgb) or CMYK through libvips' built-in profile (cs_cmyk, cs_keep_cmyk; JPEG and TIFF)"),
        ("cs_srgbb", #"cs_srgbb: unknown to Cloudinary (no colour space "srgbb"); did you mean "srgb"?"#),
    ])
    func refusals(text: String, reason: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.reason) == [reason])
    }
}

/// A job whose one step is `step` (JSON) is refused with exactly `message`.
func expectStepRefused(_ step: String, message: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let json = #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [\#(step)]}]}"#
    #expect(throws: (any Error).self, sourceLocation: sourceLocation) { try JSONChainDecoder().decodeJob(json: json) }
    do {
        _ = try JSONChainDecoder().decodeJob(json: json)
    } catch {
        #expect(error.issues.map(\.description) == [message], sourceLocation: sourceLocation)
    }
}

extension Effect {
    /// `e_colorize:<amount>,co_<color>`, a declared effect, as the tests write it.
    static func colorizeForTests(_ amount: WholeNumber, _ color: Color) -> Effect {
        .declared(DeclaredEffect(name: "colorize", values: [.number(amount), .color(color)]))
    }
}
