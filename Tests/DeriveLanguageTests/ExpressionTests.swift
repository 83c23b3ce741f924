@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Arithmetic expressions where a length goes (issue 15, item 1): what each predefined value
/// and operator evaluates to in a plan, how they are spelled and hashed, and how a bad one is
/// refused.
@Suite struct ExpressionTests {
    /// A 1200x800 source of five pages, so every predefined value has a distinct number.
    static let source = SourceFacts(format: .tiff, width: 1200, height: 800, pages: 5)

    /// Every predefined value and operator, with the size of the planned output and the value
    /// each expression came to, on `source`.
    @Test(arguments: [
        // The source's values.
        ("w_iw_div_2", Size(600, 400), [600]),
        ("h_ih_sub_200", Size(900, 600), [600]),
        ("w_iar_mul_300", Size(450, 300), [450]),
        ("w_pc_mul_100", Size(500, 333), [500]),
        ("w_cp_mul_100,pg_3", Size(300, 200), [300]),
        ("w_cp_mul_100", Size(100, 67), [100]),
        // The current image's values: the image this component receives.
        ("c_scale,w_100/w_w_add_50", Size(150, 101), [150]),
        ("c_scale,w_300/w_h_mul_2", Size(400, 267), [400]),
        ("c_scale,h_100/w_ar_mul_100", Size(150, 100), [150]),
        ("c_scale,w_100/w_iw", Size(1200, 804), [1200]),
        // Long, camel-case and current_ names are the same values.
        ("w_initial_width_div_4", Size(300, 200), [300]),
        ("w_initialWidth_div_4", Size(300, 200), [300]),
        ("h_initial_height_div_4", Size(300, 200), [200]),
        ("w_initial_aspect_ratio_mul_100", Size(150, 100), [150]),
        ("c_scale,w_100/w_current_width_mul_2", Size(200, 134), [200]),
        ("c_scale,w_100/w_width_mul_2", Size(200, 134), [200]),
        ("c_scale,w_300/w_height_mul_2", Size(400, 267), [400]),
        ("c_scale,h_100/w_aspect_ratio_mul_100", Size(150, 100), [150]),
        ("w_page_count_mul_10", Size(50, 33), [50]),
        ("w_current_page_mul_10,pg_2", Size(20, 13), [20]),
        // Every operator.
        ("w_iw_add_100", Size(1300, 867), [1300]),
        ("w_iw_sub_100", Size(1100, 733), [1100]),
        ("w_iw_mul_0.25", Size(300, 200), [300]),
        ("w_iw_div_3", Size(400, 267), [400]),
        ("w_iw_mod_700", Size(500, 333), [500]),
        ("w_2_pow_9", Size(512, 341), [512]),
        // Precedence: mul, div and mod before add and sub; pow first and to the right.
        ("w_iw_add_100_mul_2", Size(1400, 933), [1400]),
        ("w_100_add_iw_div_4", Size(400, 267), [400]),
        ("w_iw_sub_100_sub_100", Size(1000, 667), [1000]),
        ("w_iw_div_2_div_2", Size(300, 200), [300]),
        ("w_2_mul_3_pow_2_mul_10", Size(180, 120), [180]),
        ("w_2_pow_3_pow_2", Size(512, 341), [512]),
        ("w_iw_mul_2_add_ih_mul_2", Size(4000, 2667), [4000]),
        // Values round to the nearest pixel.
        ("w_iw_div_7", Size(171, 114), [171]),
        // Both dimensions, offsets and a focal point.
        ("c_fill,w_iw_div_2,h_ih_div_4", Size(600, 200), [600, 200]),
        ("c_crop,w_100,h_100,x_iw_div_4,y_ih_div_4", Size(100, 100), [300, 200]),
        ("c_crop,w_100,h_100,g_xy_center,x_iw_div_3,y_ih_div_2", Size(100, 100), [400, 400]),
        ("c_crop,w_100,h_100,g_south_east,x_w_div_10,y_-10", Size(100, 100), [120]),
        ("c_pad,w_iw_add_200,h_ih,b_black", Size(1400, 800), [1400, 800]),
    ] as [(String, Size, [Int])])
    func evaluatesOnTheSource(text: String, size: Size, values: [Int]) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.size == size)
        #expect(planned.expressions.map(\.value) == values)
    }

    /// The operations carry the numbers: a crop at offsets given by expressions is a crop
    /// rectangle in pixels, and a region effect's rectangle likewise.
    @Test func theOperationsAreInPixels() throws {
        let crop = try plan(["c_crop,w_iw_div_2,h_ih_div_2,x_iw_div_4,y_ih_div_4"], Self.source).outputs[0]
        #expect(crop.operations == [.crop(Rect(x: 300, y: 200, width: 600, height: 400))])
        let region = try plan(["e_blur_region:300,x_w_div_4,y_0,w_w_div_2,h_h_div_2"], Self.source).outputs[0]
        #expect(region.operations == [.effect(.blurRegion(300, Region(x: .pixels(300), y: .pixels(0), width: .pixels(600), height: .pixels(400))))])
        let overlay = try plan(["l_logo/fl_layer_apply,g_north_east,x_w_div_50,y_h_mul_0.02"], Self.source).outputs[0]
        guard case .overlay(let o)? = overlay.operations.first else {
            Issue.record("no overlay in \(overlay.operations)")
            return
        }
        #expect(o.x == .pixels(24) && o.y == .pixels(16))
    }

    /// `explain` lists each expression with its value, beside the canonical string.
    @Test func explainShowsTheNumbers() throws {
        let json = try plan(["c_fill,w_iw_div_2,h_ih_div_4"], Self.source).json
        guard case .array(let outputs)? = json["outputs"], case .array(let expressions)? = outputs[0]["expressions"] else {
            Issue.record("no expressions in \(JSONWriter.pretty(json))")
            return
        }
        #expect(outputs[0]["transformation"] == .string("c_fill,w_iw_div_2,h_ih_div_4"))
        #expect(expressions[0]["parameter"] == .string("w") && expressions[0]["expression"] == .string("iw_div_2")
            && expressions[0]["value"] == .int(600) && expressions[0]["step"] == .int(0))
        #expect(expressions[1]["parameter"] == .string("h") && expressions[1]["value"] == .int(200))
    }

    /// Steps after a trim are planned by the engine once the trimmed size is known: the
    /// source's values are written in when planning, the current ones at run time.
    @Test func stepsAfterATrimKeepTheSourcesValues() throws {
        let planned = try plan(["e_trim/c_crop,w_iw_div_2,h_h_div_2"], Self.source).outputs[0]
        guard case .deferred(let steps)? = planned.operations.last, case .resize(let r)? = steps.first else {
            Issue.record("no deferred resize in \(planned.operations)")
            return
        }
        #expect(r.width == .expression(.operation(.div, .number(1200), .number(2))))
        #expect(r.height == .expression(.operation(.div, .value(.height), .number(2))))
        let atRunTime = try Planner().operations(for: steps, input: Size(1000, 500))
        #expect(atRunTime.size == Size(600, 250))
    }

    /// Different spellings of one expression are one canonical text and one identity; another
    /// expression is another identity even where it comes to the same number.
    @Test func spellingsHashTheSameAndExpressionsDoNot() throws {
        let reference = try canonical(string: "c_scale,w_iw_div_2")
        for spelling in ["w_iw_div_2", "w_initial_width_div_2", "w_initialWidth_div_2", "c_scale,w_iw_div_2.0", "w_iw_div_2.000"] {
            #expect(try canonical(string: spelling).identity == reference.identity, "\(spelling)")
        }
        for json in [#"[{"resize": {"width": "iw / 2"}}]"#, #"[{"resize": {"width": "initial_width div 2"}}]"#,
                     #"[{"resize": {"width": "iw_div_2"}}]"#, #"[{"resize": {"width": " iw  /  2 "}}]"#] {
            #expect(try canonical(json: json).identity == reference.identity, "\(json)")
        }
        for other in ["w_iw_mul_0.5", "w_600", "w_0.5", "w_iw_div_2_add_0", "w_ih_div_2"] {
            #expect(try canonical(string: other).identity != reference.identity, "\(other)")
        }
        #expect(try canonical(string: "w_iw_add_ih_mul_2").identity != canonical(string: "w_ih_mul_2_add_iw").identity)
        #expect(try canonical(json: #"[{"resize": {"width": "iw + ih * 2"}}]"#).identity == canonical(string: "w_iw_add_ih_mul_2").identity)
        #expect(try canonical(json: #"[{"resize": {"width": "2 ^ 3 % 5"}}]"#).identity == canonical(string: "w_2_pow_3_mod_5").identity)
        #expect(try canonical(json: #"[{"resize": {"width": "iw - 2"}}]"#).identity == canonical(string: "w_iw_sub_2").identity)
    }

    /// string → model → string → model: the printed string is the canonical spelling and
    /// means the same.
    @Test(arguments: [
        ("w_initial_width_div_2", "c_scale,w_iw_div_2"),
        ("c_fill,w_iw_mul_0.50,h_ih_sub_100,g_north", "c_fill,w_iw_mul_0.5,h_ih_sub_100,g_north"),
        ("c_crop,w_100,h_100,x_iw_div_4,y_-10", "c_crop,w_100,h_100,g_north_west,x_iw_div_4,y_-10"),
        ("c_crop,w_100,h_100,g_xy_center,x_w_div_3,y_h_div_2", "c_crop,w_100,h_100,g_xy_center,x_w_div_3,y_h_div_2"),
        ("l_logo/fl_layer_apply,g_south,y_h_mul_0.05", "l_logo/fl_layer_apply,g_south,y_h_mul_0.05"),
        ("e_pixelate_region:20,x_w_div_4,y_0,w_w_div_2,h_50", "e_pixelate_region:20,x_w_div_4,y_0,w_w_div_2,h_50"),
        ("w_2_pow_3_pow_2_mul_cp_add_pc_mod_7_sub_iar", "c_scale,w_2_pow_3_pow_2_mul_cp_add_pc_mod_7_sub_iar"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// Every refusal names the parameter as written and says whether Cloudinary has it.
    @Test(arguments: [
        ("h_tar_mul_100", "h_tar_mul_100: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"),
        ("w_du", "w_du: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; du is a duration, which Derive does not read from a source's header"),
        ("w_idu_mul_10", "w_idu_mul_10: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; idu is a duration, which Derive does not read from a source's header"),
        ("w_tar_mul_100", "w_tar_mul_100: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"),
        ("x_px", "x_px: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; px is the offset of a layer in a PSD file, which Derive does not read"),
        ("c_crop,w_100,h_100,x_ctx:!x!_mul_w", "x_ctx:!x!_mul_w: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; ctx:!x! is a text of the asset (its tags or context), which Derive compares in conditions (if_!sale!_in_tags, if_ctx:!key!_eq_!text!) and assigns to variables ($x_ctx:!key!_to_f), not inside arithmetic; assign it to a variable first and use $x"),
        ("w_iw_div", #"w_iw_div: unknown to Cloudinary (an expression ends with a value, not the operator "div"); w_ takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("w_div_2", #"w_div_2: unknown to Cloudinary (an expression starts with a value, not the operator "div"); w_ takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("w_iw_ih", #"w_iw_ih: unknown to Cloudinary (two values in a row, "iw" and "ih"; values and operators alternate); w_ takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("w_iw_div_mul_2", #"w_iw_div_mul_2: unknown to Cloudinary (two operators in a row, "div" and "mul"; values and operators alternate); w_ takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("w_iw__div_2", #"w_iw__div_2: unknown to Cloudinary (values and operators are separated by one '_'); w_ takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("w_iww_div_2", #"w_iww_div_2: unknown to Cloudinary (no value "iww"); did you mean "iw"?"#),
        ("w_wide", #"w_wide: unknown to Cloudinary (no value "wide"); w_ takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("o_w_div", #"o_w_div: unknown to Cloudinary (an expression ends with a value, not the operator "div"); o_ takes an integer 0–100 or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("o_tar_mul_10", "o_tar_mul_10: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"),
        ("o_wide", #"o_wide: unknown to Cloudinary (no value "wide"); o_ takes an integer 0–100 or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("r_10:w_div", #"r_10:w_div: unknown to Cloudinary (an expression ends with a value, not the operator "div"); r_ takes max, or 1–4 radii joined by ':', each pixels (20) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("r_w_div_2:tar", "r_w_div_2:tar: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"),
    ])
    func refusesWithAClassifiedReason(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues
        #expect(issues.map(\.reason) == [reason], "\(issues)")
    }

    /// What only the source decides is refused when planning, naming the expression and its
    /// value there.
    @Test(arguments: [
        ("w_iw_div_0", "w_iw_div_0: unknown to Cloudinary (iw_div_0 divides by zero on this source)"),
        ("w_iw_mod_0", "w_iw_mod_0: unknown to Cloudinary (iw_mod_0 divides by zero on this source)"),
        ("w_10_pow_400", "w_10_pow_400: unknown to Cloudinary (10_pow_400 has no finite value on this source)"),
        ("w_iw_sub_2000", "w_iw_sub_2000: out of Cloudinary's range (width must be between 1 and 16384, got -800 (on this source w_iw_sub_2000 is -800))"),
        ("w_iw_mul_100", "w_iw_mul_100: known to Cloudinary, not supported by Derive: beyond Derive's limits: width must be between 1 and 16384, got 120000 (on this source w_iw_mul_100 is 120000)"),
        ("c_crop,w_10,h_10,x_iw_mul_100", "x_iw_mul_100: known to Cloudinary, not supported by Derive: beyond Derive's limits: x must be between -16384 and 16384, got 120000 (on this source x_iw_mul_100 is 120000)"),
    ])
    func refusesWhatTheSourceDecides(text: String, reason: String) {
        let issues = planRefusal(text, Self.source)
        #expect(issues.map(\.reason) == [reason])
        #expect(issues.allSatisfy { $0.location == #"outputs[0] ("o0") step 0 (resize)"# })
    }

    /// JSON takes the SDKs' spelling, and says what is wrong the same way.
    @Test func jsonTakesTheSDKSpelling() throws {
        let planned = try plan([#"[{"resize": {"mode": "crop", "width": "iw / 2", "height": "ih * 0.5", "x": "w / 4", "y": 0}}]"#], Self.source)
        #expect(planned.outputs[0].operations == [.crop(Rect(x: 300, y: 0, width: 600, height: 400))])
        #expect(throws: ValidationError.self) { try TransformationInput.parse(#"[{"resize": {"width": "tar * 2"}}]"#) }
        do {
            _ = try TransformationInput.parse(#"[{"resize": {"width": "iw /"}}]"#)
        } catch {
            #expect(error.issues.first?.description == #"[0].resize.width: expression "iw /": unknown to Cloudinary (an expression ends with a value, not the operator "/"); a length takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#)
        }
    }

    /// Random sequences of the grammar's words, and of junk, in lengths, the opacity, the radii
    /// and an effect's amount, never crash: each parses (and then plans or fails with a validation error, and
    /// prints back to the same identity) or is refused with a classified first line that names
    /// the parameter.
    @Test func randomTokenSequencesParseOrAreClassified() throws {
        var random = SeededRandom(seed: 15)
        let words = PredefinedValue.allCases.map(\.rawValue) + PredefinedValue.allCases.flatMap(\.longNames)
            // '/' would end the component: the SDKs' "iw / 2" is for JSON.
            + ArithmeticOperator.allCases.map(\.rawValue) + ArithmeticOperator.allCases.map(\.symbol).filter { $0 != "/" }
            + ["0", "1", "2", "-3", "0.5", "10.25", "999999999999", "fc", "ils", "du", "ctx:!a!", "tags", "$v", "x", "abc",
               "iww", ".5", "5.", "1e9", "inf", "nan", "-", "--1", "😀", "%20", ":", "!s!"]
        var parsed = 0
        for _ in 0..<4000 {
            let count = Int.random(in: 1...9, using: &random)
            let separator = random.chance(0.8) ? "_" : " "
            let text = (0..<count).map { _ in random.pick(words) }.joined(separator: separator)
            let param = random.pick(["w", "h", "x", "y", "o", "r", "e"])
            let string = param == "e" ? "c_crop,w_10,h_10/e_blur:\(text)"
                : ["o", "r"].contains(param) ? "c_crop,w_10,h_10/\(param)_\(text)"
                : "c_crop,\(param == "w" ? "h_10" : "w_10"),\(param)_\(text)"
            let result = CloudinaryParser().parse(string)
            if let first = result.issues.first {
                // Classified: about this parameter, and for anything but a plain number out
                // of range or malformed (`e_blur takes a whole-number amount`), saying whether
                // Cloudinary has it.
                let field = ["o": "percent ", "r": "radius", "e": "strength "][param]
                #expect(first.reason.hasPrefix(param + "_") || first.reason.hasPrefix(param + " ")
                        || field.map(first.reason.hasPrefix) == true, "\(string): \(first)")
                if first.reason.hasPrefix(param + "_") && !first.reason.hasPrefix("e_blur takes") {
                    #expect(first.reason.contains(" Cloudinary") || first.reason.contains("an expression has at most"), "\(string): \(first)")
                }
                continue
            }
            parsed += 1
            let model: CanonicalOutput
            do {
                model = try canonical([OutputSpec(name: "f", chain: result.steps, settings: result.settings)])[0]
            } catch {
                continue
            }
            if let printed = try? CloudinaryPrinter.string(for: model) {
                #expect(try canonical(string: printed).identity == model.identity, "\(string) → \(printed)")
            }
            let facts = SourceFacts(format: .png, width: Int.random(in: 1...5000, using: &random),
                                    height: Int.random(in: 1...5000, using: &random), pages: Int.random(in: 1...4, using: &random))
            do {
                _ = try Planner().plan(ResolvedJob(source: nil, outputs: [model]), source: facts)
            } catch {
                #expect(!error.issues.isEmpty)
            }
        }
        #expect(parsed > 200, "too few random expressions parsed (\(parsed)) to test anything")
    }
}
