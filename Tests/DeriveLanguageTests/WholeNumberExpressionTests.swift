@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Arithmetic expressions in the opacity `o_`, the corner radii of `r_` and effect amounts
/// (`e_blur:w_div_10`) (issue 15, item 1):
/// what they come to in a plan, how they are spelled, hashed and written in JSON, and how a bad
/// one is refused.
@Suite struct WholeNumberExpressionTests {
    /// A 1200x800 source of five pages, as in ExpressionTests.
    static let source = SourceFacts(format: .tiff, width: 1200, height: 800, pages: 5)

    /// The planned operation of each, and the values `explain` lists.
    @Test(arguments: [
        ("o_pc_mul_10", ImageOperation.opacity(50), [50]),
        ("o_100_sub_cp_mul_20,pg_2", .opacity(60), [60]),
        ("c_scale,w_300/o_w_div_10", .opacity(30), [30]),
        ("o_iar_mul_40", .opacity(60), [60]),
        ("o_50", .opacity(50), []),
        ("r_ih_div_8", .round(.corners([100, 100, 100, 100]), background: .transparent), [100]),
        ("r_w_div_12:0", .round(.corners([100, 0, 100, 0]), background: .transparent), [100]),
        ("r_10:h_div_40:30", .round(.corners([10, 20, 30, 20]), background: .transparent), [20]),
        ("r_iw_div_100:ih_div_100:20:cp", .round(.corners([12, 8, 20, 1]), background: .transparent), [12, 8, 1]),
        ("r_ih_div_10,b_black", .round(.corners([80, 80, 80, 80]), background: .black), [80]),
        ("r_h_div_3", .round(.corners([267, 267, 267, 267]), background: .transparent), [267]),
        ("e_pixelate:w_div_40", .effect(.named("pixelate", 30)), [30]),
        ("e_blur:iw_div_4", .effect(.named("blur", 300)), [300]),
        ("e_brightness:cp_mul_-10,pg_4", .effect(.named("brightness", -40)), [-40]),
        ("e_tint:pc_mul_10:red", .effect(.tint(amount: 50, color: Color(red: 255, green: 0, blue: 0))), [50]),
        ("e_colorize:iar_mul_20,co_black", .effect(Effect.colorizeForTests(30, .black)), [30]),
        ("e_blur_region:ih_div_2,x_0,y_0,w_100,h_100", .effect(.blurRegion(400, Region(x: .pixels(0), y: .pixels(0), width: .pixels(100), height: .pixels(100)))), [400]),
        ("e_blur_faces:w_div_4", .effect(.named("blur_faces", 300)), [300]),
        // The second setting stays as the blend is evaluated.
        ("e_fill_light:w_div_24:-40", .effect(.declared(DeclaredEffect(name: "fill_light", values: [.number(50), .number(-40)]))), [50]),
        ("e_improve:indoor:iar_mul_40", .effect(.declared(DeclaredEffect(name: "improve", values: [.choice("indoor"), .number(60)]))), [60]),
        ("e_improve:iar_mul_40", .effect(.declared(DeclaredEffect(name: "improve", values: [.choice("outdoor"), .number(60)]))), [60]),
        ("e_replace_color:red:pc_mul_10:blue", .effect(.replaceColor(50, to: Color(red: 255, green: 0, blue: 0), from: .blue)), [50]),
    ] as [(String, ImageOperation, [Int])])
    func evaluatesOnTheSource(text: String, operation: ImageOperation, values: [Int]) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.operations.last == operation)
        #expect(planned.expressions.map(\.value) == values)
    }

    /// The current image is the one the component receives.
    @Test func currentValuesAreTheImagesTheComponentReceives() throws {
        let planned = try plan(["c_fill,w_400,h_300/r_h_div_2"], Self.source).outputs[0]
        #expect(planned.operations.last == .round(.corners([150, 150, 150, 150]), background: .transparent))
        #expect(planned.expressions == [EvaluatedExpression(step: 1, parameter: "r", expression: "h_div_2", value: 150)])
    }

    /// After a trim the source's values are written in when planning, the current ones at run
    /// time, as for lengths.
    @Test func stepsAfterATrimKeepTheSourcesValues() throws {
        let planned = try plan(["e_trim/r_iw_div_100:h_div_10/o_pc_mul_10"], Self.source).outputs[0]
        guard case .deferred(let steps)? = planned.operations.last else {
            Issue.record("nothing deferred in \(planned.operations)")
            return
        }
        #expect(steps == [.round(RoundCorners(radius: .corners([.expression(.operation(.div, .number(1200), .number(100))),
                                                                 .expression(.operation(.div, .value(.height), .number(10))),
                                                                 .expression(.operation(.div, .number(1200), .number(100))),
                                                                 .expression(.operation(.div, .value(.height), .number(10)))]),
                                              background: .transparent)),
                          .opacity(.expression(.operation(.mul, .number(5), .number(10))))])
        let atRunTime = try Planner().operations(for: steps, input: Size(1000, 500))
        #expect(atRunTime.operations == [.round(.corners([12, 50, 12, 50]), background: .transparent), .opacity(50)])
    }

    /// Spellings of one expression are one identity; another expression, or its value, is another.
    @Test func spellingsHashTheSameAndExpressionsDoNot() throws {
        let reference = try canonical(string: "o_w_div_20")
        for spelling in ["o_width_div_20", "o_current_width_div_20", "o_w_div_20.0"] {
            #expect(try canonical(string: spelling).identity == reference.identity, "\(spelling)")
        }
        for json in [#"[{"opacity": "w / 20"}]"#, #"[{"opacity": {"percent": "w_div_20"}}]"#] {
            #expect(try canonical(json: json).identity == reference.identity, "\(json)")
        }
        for other in ["o_60", "o_w_mul_0.05", "o_iw_div_20"] {
            #expect(try canonical(string: other).identity != reference.identity, "\(other)")
        }
        let radius = try canonical(string: "r_h_div_2")
        #expect(try canonical(string: "r_h_div_2:h_div_2:h_div_2:h_div_2").identity == radius.identity)
        #expect(try canonical(json: #"[{"round": {"radius": "h / 2"}}]"#).identity == radius.identity)
        #expect(try canonical(json: #"[{"round": ["height_div_2"]}]"#).identity == radius.identity)
        #expect(try canonical(string: "r_h_div_2:0").identity != radius.identity)
    }

    /// string → model → string → model, and JSON → model.
    @Test(arguments: [
        ("o_w_div_20", "o_w_div_20"),
        ("o_initial_aspect_ratio_mul_50", "o_iar_mul_50"),
        ("r_h_div_2", "r_h_div_2"),
        ("r_h_div_2:0", "r_h_div_2:0:h_div_2:0"),
        ("r_10:iw_div_100:30", "r_10:iw_div_100:30:iw_div_100"),
        ("r_ih_div_10,b_black", "r_ih_div_10,b_black"),
        ("c_fill,w_400,h_300/r_h_div_2/o_cp_mul_50", "c_fill,w_400,h_300/r_h_div_2/o_cp_mul_50"),
        ("e_pixelate:width_div_40", "e_pixelate:w_div_40"),
        ("e_tint:pc_mul_10:blue", "e_tint:pc_mul_10:blue"),
        ("e_colorize:ar_mul_20,co_red", "e_colorize:ar_mul_20,co_red"),
        ("e_pixelate_region:h_div_20,x_w_div_4,y_0,w_w_div_2,h_50", "e_pixelate_region:h_div_20,x_w_div_4,y_0,w_w_div_2,h_50"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// What only the source decides is refused when planning, with the value there.
    @Test(arguments: [
        ("o_iw", "opacity", "o_iw: out of Cloudinary's range (percent must be between 0 and 100, got 1200 (on this source o_iw is 1200))"),
        ("o_50_sub_pc_mul_20", "opacity", "o_50_sub_pc_mul_20: out of Cloudinary's range (percent must be between 0 and 100, got -50 (on this source o_50_sub_pc_mul_20 is -50))"),
        ("o_iw_div_0", "opacity", "o_iw_div_0: unknown to Cloudinary (iw_div_0 divides by zero on this source)"),
        ("r_0_sub_iw", "round", "r_0_sub_iw: out of Cloudinary's range (radius must be between 0 and 16384, got -1200 (on this source r_0_sub_iw is -1200))"),
        ("r_10:ih_mod_0", "round", "r_ih_mod_0: unknown to Cloudinary (ih_mod_0 divides by zero on this source)"),
        ("e_blur:iw_mul_2", "blur", "e_blur:iw_mul_2: out of Cloudinary's range (strength must be between 1 and 2000, got 2400 (on this source e_blur:iw_mul_2 is 2400))"),
        ("e_pixelate:w_div_0", "pixelate", "e_pixelate:w_div_0: unknown to Cloudinary (w_div_0 divides by zero on this source)"),
    ])
    func refusesWhatTheSourceDecides(text: String, key: String, reason: String) {
        let issues = planRefusal(text, Self.source)
        #expect(issues.map(\.reason) == [reason])
        #expect(issues.allSatisfy { $0.location == #"outputs[0] ("o0") step 0 (\#(key))"# })
    }

    /// JSON takes expressions for the opacity, radii and amounts, and says what is wrong with
    /// one the way strings do.
    @Test func jsonRefusesABadExpression() throws {
        do {
            _ = try TransformationInput.parse(#"[{"opacity": "w /"}]"#)
            Issue.record("planned")
        } catch {
            #expect(error.issues.first?.description == #"[0].opacity.percent: expression "w /": unknown to Cloudinary (an expression ends with a value, not the operator "/"); it takes an integer or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#)
        }
        #expect(throws: ValidationError.self) { try TransformationInput.parse(#"[{"round": {"radius": ["tar", 10]}}]"#) }
        #expect(try canonical(json: #"[{"pixelate": "w / 40"}]"#).identity == canonical(string: "e_pixelate:w_div_40").identity)
        #expect(try canonical(json: #"[{"blur": {"strength": "iw_div_4"}}]"#).identity == canonical(string: "e_blur:iw_div_4").identity)
    }

    /// A bad amount is refused naming the effect as written.
    @Test(arguments: [
        ("e_blur:w_div", #"e_blur:w_div: unknown to Cloudinary (an expression ends with a value, not the operator "div"); e_blur: takes a whole-number amount or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("e_sepia:tar_mul_10", "e_sepia:tar_mul_10: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"),
        ("e_blur:$1b", #"e_blur:$1b: unknown to Cloudinary ("$1b" is not a variable: a name is a letter, then letters and digits)"#),
        ("e_blur:12.5", #"e_blur takes a whole-number amount, got "12.5""#),
    ])
    func refusesABadAmount(text: String, reason: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.reason) == [reason])
    }
}

/// A border's width takes an expression too (`bo_w_div_100px_solid_black`), evaluated when
/// planning like every other number.
@Suite struct BorderExpressionTests {
    static let source = SourceFacts(format: .jpeg, width: 4000, height: 3000)

    @Test(arguments: [
        ("c_scale,w_1000/bo_w_div_100px_solid_black", Size(1020, 770)),
        ("$b_7/bo_$b_mul_2px_solid_red", Size(4028, 3028)),
        ("bo_iw_div_400_add_2px_solid_rgb:ff0000", Size(4024, 3024)),
    ] as [(String, Size)])
    func evaluatesTheWidth(text: String, size: Size) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.size == size)
        #expect(planned.expressions.map(\.parameter).contains("bo"))
    }

    @Test func identityAndRoundTrip() throws {
        try expectRoundTrip("bo_width_div_100px_solid_red", printed: "bo_w_div_100px_solid_red")
        #expect(try canonical(string: "bo_w_div_100px_solid_black").identity
            == canonical(json: #"[{"border": {"width": "w / 100", "color": "black"}}]"#).identity)
        #expect(try canonical(string: "bo_w_div_100px_solid_black").identity != canonical(string: "bo_w_mul_0.01px_solid_black").identity)
    }

    @Test(arguments: [
        ("bo_iw_mul_2px_solid_black", "bo_iw_mul_2: known to Cloudinary, not supported by Derive: beyond Derive's limits: width must be between 1 and 1000, got 8000 (on this source bo_iw_mul_2 is 8000)"),
        ("bo_iw_sub_5000px_solid_black", "bo_iw_sub_5000: out of Cloudinary's range (width must be between 1 and 1000, got -1000 (on this source bo_iw_sub_5000 is -1000))"),
        ("bo_iw_div_0px_solid_black", "bo_iw_div_0: unknown to Cloudinary (iw_div_0 divides by zero on this source)"),
    ])
    func refusedWithItsValue(text: String, reason: String) {
        #expect(planRefusal(text, Self.source).map(\.reason) == [reason])
    }
}
