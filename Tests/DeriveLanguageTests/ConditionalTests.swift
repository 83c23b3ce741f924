@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Conditionals (issue 15, item 3): each operator, joiner and block form with the branch it
/// takes on a source, their spellings and hashes, the same decision at plan and at run time,
/// and how a bad one is refused.
@Suite struct ConditionalTests {
    /// 1200x800, five pages.
    static let source = SourceFacts(format: .tiff, width: 1200, height: 800, pages: 5)

    /// Each form, with the planned size and whether each condition held, on `source`.
    @Test(arguments: [
        // Every comparison, in words and in symbols.
        ("if_w_gt_1000/c_scale,w_500/if_end", Size(500, 333), [true]),
        ("if_w_lt_1000/c_scale,w_500/if_end", Size(1200, 800), [false]),
        ("if_iw_eq_1200/c_scale,w_500/if_end", Size(500, 333), [true]),
        ("if_iw_ne_1200/c_scale,w_500/if_end", Size(1200, 800), [false]),
        ("if_ih_lte_800/c_scale,w_500/if_end", Size(500, 333), [true]),
        ("if_ih_gte_801/c_scale,w_500/if_end", Size(1200, 800), [false]),
        ("if_w_>_1000/c_scale,w_500/if_end", Size(500, 333), [true]),
        ("if_w_<=_1199/c_scale,w_500/if_end", Size(1200, 800), [false]),
        ("if_w_=_1200/c_scale,w_500/if_end", Size(500, 333), [true]),
        ("if_w_!=_1200/c_scale,w_500/if_end", Size(1200, 800), [false]),
        // if_else.
        ("if_ar_gt_1/c_scale,w_100/if_else/c_scale,h_100/if_end", Size(100, 67), [true]),
        ("if_ar_lt_1/c_scale,w_100/if_else/c_scale,h_100/if_end", Size(150, 100), [false]),
        // and binds tighter than or.
        ("if_iw_eq_1200_and_ih_eq_800/c_scale,w_10/if_end", Size(10, 7), [true]),
        ("if_iw_eq_1_or_ih_eq_800/c_scale,w_10/if_end", Size(10, 7), [true]),
        ("if_iw_eq_1_or_ih_eq_1_and_iw_eq_1200/c_scale,w_10/if_end", Size(1200, 800), [false]),
        ("if_iw_eq_1200_or_ih_eq_1_and_iw_eq_1/c_scale,w_10/if_end", Size(10, 7), [true]),
        // One component: the condition applies to its other parameters.
        ("if_pc_gte_5,c_scale,w_100", Size(100, 67), [true]),
        ("if_w_ne_1200,c_scale,w_100", Size(1200, 800), [false]),
        ("if_w_gt_100,$z_5,$foo_$z_mul_2,c_scale,w_$foo_mul_20", Size(200, 133), [true]),
        // The image the if_ receives, expressions and variables on either side.
        ("c_scale,w_500/if_w_lt_600/c_scale,w_100/if_end", Size(100, 67), [true]),
        ("if_iw_div_2_gt_ih_sub_100/c_scale,w_100/if_end", Size(1200, 800), [false]),
        ("$big_1000/if_w_gt_$big/c_scale,w_500/if_end", Size(500, 333), [true]),
        // Texts: eq and ne, in and nin a list.
        ("$tag_!sale!/if_$tag_in_!new:sale!/c_scale,w_100/if_end", Size(100, 67), [true]),
        ("$tag_!sale!/if_$tag_nin_!new:sale!/c_scale,w_100/if_end", Size(1200, 800), [false]),
        ("$tag_!sale!/if_$tag_eq_!sale!/c_scale,w_100/if_end", Size(100, 67), [true]),
        ("if_cp_in_!1:3:5!/c_scale,w_100/if_end", Size(100, 67), [true]),
        // Nested blocks, and an if_else whose component carries the branch's first parameters
        // (as the SDKs sort them).
        ("if_w_gt_100/if_h_gt_100/c_scale,w_50/if_end/if_end", Size(50, 33), [true, true]),
        ("if_w_gt_100/if_h_gt_1000/c_scale,w_50/if_else/c_scale,w_60/if_end/if_end", Size(60, 40), [true, false]),
        ("if_w_gt_5000/c_scale,w_10/c_fit,h_200,if_else,w_200/if_end", Size(200, 133), [false]),
        // An aspect ratio compared with a ratio.
        ("if_ar_gt_3:4/c_scale,w_100/if_end", Size(100, 67), [true]),
        ("if_ar_lt_3:4/c_scale,w_100/if_end", Size(1200, 800), [false]),
        // if_end beside parameters: its component is the block's last.
        ("if_w_gt_1000/c_scale,w_600,if_end", Size(600, 400), [true]),
        ("if_w_lt_1000/c_scale,w_600,if_end", Size(1200, 800), [false]),
        // Without an if_end, if_else ends the block; its own parameters are the other branch.
        ("if_iw_lte_400/c_fill,h_120,w_240/if_else,c_fill,h_240,w_400", Size(400, 240), [false]),
        ("if_iw_gt_400/c_fill,h_120,w_240/if_else,c_fill,h_240,w_400/e_sepia", Size(240, 120), [true]),
        // After a one-component conditional, an if_else component is its other branch.
        ("if_ar_gt_1,c_scale,w_100/if_else,c_scale,w_50", Size(100, 67), [true]),
        ("if_ar_lt_1,c_scale,w_100/if_else,c_scale,w_50/c_scale,w_2.0", Size(100, 66), [false]),
        // The branch not taken is not decided.
        ("if_w_lt_10/if_ih_div_0_gt_1/c_scale,w_1/if_end/if_end", Size(1200, 800), [false]),
    ] as [(String, Size, [Bool])])
    func takesTheBranchTheSourceDecides(text: String, size: Size, holds: [Bool]) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.size == size)
        #expect(planned.conditions.map(\.holds) == holds)
    }

    /// After a trim the engine decides, with the same evaluator, on the trimmed image; on an
    /// image of the source's size it decides as the plan did.
    @Test(arguments: ["if_w_gt_1000/c_scale,w_500/if_else/c_scale,w_50/if_end", "if_ar_lt_1,c_scale,h_10", "if_iw_eq_1200_and_h_gte_800/c_scale,w_5/if_end"])
    func planAndRunTimeAgree(text: String) throws {
        let planned = try plan([text], Self.source).outputs[0]
        let deferred = try plan(["e_trim/" + text], Self.source).outputs[0]
        guard case .deferred(let steps)? = deferred.operations.last else {
            Issue.record("no deferred steps in \(deferred.operations)")
            return
        }
        #expect(try Planner().operations(for: steps, input: Size(1200, 800)).size == planned.size)
        // On the trimmed image the current values are the trimmed image's.
        let small = try Planner().operations(for: steps, input: Size(600, 400)).size
        #expect(small != nil)
    }

    @Test func afterATrimTheConditionSeesTheTrimmedImage() throws {
        let deferred = try plan(["e_trim/if_w_gt_1000/c_scale,w_500/if_else/c_scale,w_50/if_end"], Self.source).outputs[0]
        guard case .deferred(let steps)? = deferred.operations.last else {
            Issue.record("no deferred steps")
            return
        }
        #expect(try Planner().operations(for: steps, input: Size(600, 400)).size == Size(50, 33))
    }

    /// The face count is the engine's: the plan defers the step that names it (asking for
    /// faces), and the engine decides with the same evaluator once it has found them.
    @Test(arguments: [
        ("if_fc_gt_0/c_scale,w_100/if_else/c_scale,w_50/if_end", 2, Size(100, 67)),
        ("if_fc_gt_0/c_scale,w_100/if_else/c_scale,w_50/if_end", 0, Size(50, 33)),
        ("if_fc_gt_2,$z_5,$foo_$z_mul_2,c_scale,w_$foo_mul_20", 3, Size(200, 133)),
        ("if_fc_gt_2,$z_5,$foo_$z_mul_2,c_scale,w_$foo_mul_20", 2, Size(1200, 800)),
        ("$foo_10/if_fc_gt_2/c_scale,w_$foo_mul_200_div_fc/if_end", 4, Size(500, 333)),
        ("c_scale,w_600/if_faces_gte_1/c_scale,w_w_div_2/if_end", 1, Size(300, 200)),
    ] as [(String, Int, Size)])
    func theFaceCountIsDecidedByTheEngine(text: String, faces: Int, size: Size) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.size == nil)
        #expect(planned.operations.contains { $0.needsFaces })
        guard case .deferred(let steps)? = planned.operations.last else {
            Issue.record("no deferred steps in \(planned.operations)")
            return
        }
        let input = planned.operations.contains { if case .resize = $0 { true } else { false } } ? Size(600, 400) : Size(1200, 800)
        #expect(try Planner().operations(for: steps, input: input, faceCount: faces).size == size)
        // Planned whole with the count known, it comes to the same.
        #expect(try Planner().operations(for: try canonical(string: text).chain, input: Size(1200, 800), faceCount: faces).size == size)
        // Without detection the engine says why.
        #expect(throws: ValidationError.self) { try Planner().operations(for: steps, input: input) }
    }

    /// string → model → string → model; the one-component form prints as a block.
    @Test(arguments: [
        ("if_w_gt_1000,c_scale,w_500", "if_w_gt_1000/c_scale,w_500/if_end"),
        ("if_w_>_1000/c_scale,w_500/if_end", "if_w_gt_1000/c_scale,w_500/if_end"),
        ("if_initial_width_gte_1000.0_and_ar_!=_1/e_sepia/if_end", "if_iw_gte_1000_and_ar_ne_1/e_sepia/if_end"),
        ("if_ar_gt_1/c_scale,w_100/if_else/c_scale,h_100/if_end", "if_ar_gt_1/c_scale,w_100/if_else/c_scale,h_100/if_end"),
        ("if_w_gt_5000/c_scale,w_10/c_fit,h_200,if_else,w_200/if_end", "if_w_gt_5000/c_scale,w_10/if_else/c_fit,w_200,h_200/if_end"),
        ("$t_!a!/if_$t_in_!a:b!/if_h_lt_10/e_grayscale/if_end/if_end", "$t_!a!/if_$t_in_!a:b!/if_h_lt_10/e_grayscale/if_end/if_end"),
        ("if_w_lt_10/if_else/e_negate/if_end", "if_w_lt_10/if_else/e_negate/if_end"),
        ("if_ar_gt_3:4/e_sepia/if_end", "if_ar_gt_0.75/e_sepia/if_end"),
        ("if_w_gt_1000/c_scale,w_600,if_end", "if_w_gt_1000/c_scale,w_600/if_end"),
        ("if_ar_gt_1,c_scale,w_100/if_else,c_scale,w_50", "if_ar_gt_1/c_scale,w_100/if_else/c_scale,w_50/if_end"),
        ("if_iw_lte_400/c_fill,h_120,w_240/if_else,c_fill,h_240,w_400/e_sepia", "if_iw_lte_400/c_fill,w_240,h_120/if_else/c_fill,w_400,h_240/if_end/e_sepia"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// JSON takes the SDKs' spelling of a condition and hashes as the string does.
    @Test func jsonHasTheSameIdentity() throws {
        let string = try canonical(string: "if_w_gt_1000_and_ar_lt_2/c_scale,w_500/if_else/e_sepia/if_end")
        for condition in ["w > 1000 && ar < 2", "w_gt_1000_and_ar_lt_2", "width gt 1000 and aspect_ratio lt 2"] {
            let json = try canonical(json: #"[{"if": {"condition": "\#(condition)", "then": [{"resize": {"width": 500}}], "else": [{"sepia": true}]}}]"#)
            #expect(json.identity == string.identity, "\(condition)")
        }
        #expect(try canonical(string: "if_w_gt_1000/c_scale,w_500/if_end").identity != canonical(string: "if_w_gte_1000/c_scale,w_500/if_end").identity)
        // A condition with nothing to apply changes nothing.
        #expect(try canonical(string: "if_w_gt_1000/if_end").chain.isEmpty)
    }

    /// `explain` lists each decision.
    @Test func explainShowsTheBranch() throws {
        let json = try plan(["if_w_gt_1000/c_scale,w_500/if_end"], Self.source).json
        guard case .array(let outputs)? = json["outputs"], case .array(let conditions)? = outputs[0]["conditions"] else {
            Issue.record("no conditions in \(JSONWriter.pretty(json))")
            return
        }
        #expect(conditions.first?["condition"] == .string("w_gt_1000") && conditions.first?["holds"] == .bool(true) && conditions.first?["step"] == .int(0))
    }

    /// Refused while reading, naming the parameter.
    @Test(arguments: [
        ("c_scale,w_50/if_else", #"chain component 1 ("if_else"): if_else: unknown to Cloudinary (an if_else follows an if_ component or block)"#),
        ("if_w_gt/e_sepia/if_end", #"chain component 0 ("if_w_gt"): if_w_gt: unknown to Cloudinary (gt needs a value on each side); if_ takes comparisons such as w_gt_200_and_ar_lt_1 or $tag_in_!a:b!"#),
        ("if_w_200,e_sepia", #"chain component 0 ("if_w_200,e_sepia"): if_w_200: unknown to Cloudinary ("w_200" has no comparison (eq, ne, lt, gt, lte, gte, in, nin or = != < > <= >=)); if_ takes comparisons such as w_gt_200_and_ar_lt_1 or $tag_in_!a:b!"#),
        ("if_w_gt_1_and/e_sepia/if_end", #"chain component 0 ("if_w_gt_1_and"): if_w_gt_1_and: unknown to Cloudinary (and/or joins two comparisons; one side is empty); if_ takes comparisons such as w_gt_200_and_ar_lt_1 or $tag_in_!a:b!"#),
        ("if_tar_gt_0.5,e_sepia", #"chain component 0 ("if_tar_gt_0.5,e_sepia"): if_tar_gt_0.5: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tar is the aspect ratio after a trim, which depends on the pixels"#),
        ("if_tags_mul_2_gt_1/e_sepia/if_end", #"chain component 0 ("if_tags_mul_2_gt_1"): if_tags_mul_2_gt_1: known to Cloudinary, not supported by Derive: predefined values Derive cannot compute when it plans; tags is a text of the asset (its tags or context), which Derive compares in conditions (if_!sale!_in_tags, if_ctx:!key!_eq_!text!) and assigns to variables ($x_ctx:!key!_to_f), not inside arithmetic; assign it to a variable first and use $x"#),
        ("if_w_gt_1,f_png", #"chain component 0 ("if_w_gt_1,f_png"): output settings other than q_ (f_, pg_, a_ignore, fl_progressive, fl_keep_iptc, fl_lossless) inside if_ … if_end: known to Cloudinary, not supported by Derive: Derive chooses a quality by condition (if_…,q_80/if_else,q_30), but the format and the other settings apply to the whole output, which Derive sets before the chain runs"#),
        ("if_w_gt_1,q_80:444", #"chain component 0 ("if_w_gt_1,q_80:444"): output settings other than q_ (f_, pg_, a_ignore, fl_progressive, fl_keep_iptc, fl_lossless) inside if_ … if_end: known to Cloudinary, not supported by Derive: Derive chooses a quality by condition (if_…,q_80/if_else,q_30), but the format and the other settings apply to the whole output, which Derive sets before the chain runs"#),
        ("if_w_gt_1,if_h_gt_1,e_sepia", #"chain component 0 ("if_w_gt_1,if_h_gt_1,e_sepia"): repeats if_; a component holds one condition (join conditions with _and_ or _or_)"#),
        ("if_w_gt_1/if_w_gt_1/if_w_gt_1/if_w_gt_1/if_w_gt_1/e_sepia/if_end/if_end/if_end/if_end/if_end", #"chain component 4 ("if_w_gt_1"): if_ blocks are nested more than 4 deep"#),
        ("if_w_gt_1/l_logo/if_end/fl_layer_apply", #"chain component 1 ("l_logo"): a layer opened inside if_ … if_end is applied (fl_layer_apply) before the block's if_else or if_end"#),
        ("if_w_gt_1,l_logo/fl_layer_apply", #"chain component 0 ("if_w_gt_1,l_logo"): if_ beside l_ or fl_layer_apply: put the if_ in a component of its own around the layer (if_…/l_…/fl_layer_apply/if_end)"#),
    ])
    func refusesWhatCannotBeRead(text: String, message: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.description)
        #expect(issues == [message])
    }

    /// The face count is the main image's: inside an overlay's own chain it is refused, and
    /// the condition goes around the layer instead.
    @Test func theFaceCountIsTheMainImages() throws {
        do {
            _ = try plan(["l_logo/if_fc_gt_0,e_grayscale/fl_layer_apply"], Self.source)
            Issue.record("planned")
        } catch let error as ValidationError {
            #expect(error.issues.first?.reason.hasPrefix("fc in an overlay's own chain: known to Cloudinary, not supported by Derive") == true)
        }
        #expect(try plan(["if_fc_gt_0/l_logo/e_grayscale/fl_layer_apply/if_end"], Self.source).outputs[0].operations.contains { $0.needsFaces })
    }

    /// A layer inside a block is fine when it is applied inside it.
    @Test func layersInsideBlocks() throws {
        let planned = try plan(["if_w_gt_1/l_logo/c_scale,w_10/fl_layer_apply,g_north/if_end"], Self.source).outputs[0]
        guard case .overlay(let o)? = planned.operations.first else {
            Issue.record("no overlay in \(planned.operations)")
            return
        }
        #expect(o.gravity == .compass(.north))
    }

    /// The README's examples of variables and conditionals plan (on a 4000x3000 photo; `fc`
    /// steps are deferred to the engine).
    @Test(arguments: [
        "$w_300/c_scale,w_$w", "$half_iw_div_2,c_crop,w_$half,h_$half", "$v_20,r_10:$v:30",
        "$m_w_div_50/l_logo/fl_layer_apply,g_south_east,x_$m,y_$m", "$name_!Ann!/l_text:Arial_40:Hello%20$(name)/fl_layer_apply",
        "$n_iw/l_text:Arial_20:$(n)%20px%20wide/fl_layer_apply",
        "if_w_gt_1000/c_scale,w_1000/if_end", "if_ar_gt_1/c_fill,w_400,h_300/if_else/c_fill,w_300,h_400/if_end",
        "if_iw_lt_400_or_ih_lt_400/e_blur:300/if_end", "if_pc_gt_1/l_text:Arial_20:more%20pages/fl_layer_apply,g_south/if_end",
        "if_fc_gte_1/c_thumb,g_face,w_200,h_200/if_else/c_fill,w_200,h_200/if_end",
        "c_fill,w_600,ar_iar", "a_pc_mul_90",
    ])
    func theReadmeExamplesPlan(text: String) throws {
        #expect(try !plan([text], SourceFacts(format: .jpeg, width: 4000, height: 3000)).outputs.isEmpty)
    }

    /// Random sequences of the conditions' and assignments' words, and of junk, never crash:
    /// each parses (and then plans or fails with a validation error) or is refused with a
    /// first line that names the parameter and says whether Cloudinary has it.
    @Test func randomConditionsAndAssignmentsParseOrAreClassified() throws {
        var random = SeededRandom(seed: 315)
        let words = ComparisonOperator.allCases.map(\.rawValue) + ["=", "!=", "<", ">", "<=", ">=", "==", "and", "or", "&&", "||"]
            + ["w", "h", "iw", "ar", "pc", "fc", "faces", "ils", "du", "tags", "ctx:!k!", "$v", "$w2", "$1x", "$", "!sale!", "!a:b!",
               "!x", "y!", "!", "!!", "1", "0.5", "-3", "1e9", "mul", "div", "add", "+", "*", "^", "abc", "", "else", "end", "😀"]
        var planned = 0
        for _ in 0..<3000 {
            let text = (0..<Int.random(in: 1...9, using: &random)).map { _ in random.pick(words) }.joined(separator: "_")
            let string = random.chance(0.5) ? "$v_3/if_\(text)/c_scale,w_100/if_end" : "$v_\(text)/c_scale,w_$v_add_100"
            let result = CloudinaryParser().parse(string)
            if let first = result.issues.first {
                let param = string.hasPrefix("$v_3/") ? "if_" : "$v_"
                #expect(first.reason.hasPrefix(param) || first.reason.hasPrefix("if_end has no if_") || first.reason.hasPrefix("if_else has no if_")
                        || first.reason.hasPrefix("repeats if_else"), "\(string): \(first)")
                // Unmatched blocks (`if_else`, `if_end` as the condition) are structural, and say so.
                if first.reason.hasPrefix(param) && !first.reason.contains("has no if_") && !first.reason.hasPrefix("repeats if_else") {
                    #expect(first.reason.contains(" Cloudinary") || first.reason.contains("an expression has at most"), "\(string): \(first)")
                }
                continue
            }
            do {
                _ = try plan([string], Self.source)
                planned += 1
            } catch is ValidationError {}
        }
        #expect(planned > 10)
    }

    /// Branches count toward the chain's length, so nesting cannot multiply the work.
    @Test func branchesCountTowardTheChainLength() throws {
        let limits = ChainLimits(maxChainLength: 4)
        let branch = Array(repeating: #"{"sepia": true}"#, count: 3).joined(separator: ",")
        let json = #"[{"if": {"condition": "w > 1", "then": [\#(branch)], "else": [\#(branch)]}}]"#
        #expect(throws: ValidationError.self) { try JSONChainDecoder(limits: limits).decodeDocument(JSONChainDecoder.parse(json)) }
        #expect(CloudinaryParser(limits: limits).parse("if_w_gt_1/e_sepia/e_sepia/if_else/e_sepia/e_sepia/if_end").issues.map(\.reason)
            == ["has 5 steps; the limit is 4"])
    }

    /// Refused when planning, naming the condition.
    @Test(arguments: [
        ("if_!a!_lt_!b!/e_sepia/if_end", "if_!a!_lt_!b!: unknown to Cloudinary (!a!_lt_!b!: lt compares numbers; texts take eq, ne, in and nin)"),
        ("if_w_in_100/e_sepia/if_end", "if_w_in_100: unknown to Cloudinary (w_in_100: in takes a list on its right, !a:b:c!, or tags)"),
        ("if_w_div_0_gt_1/e_sepia/if_end", "if_w_div_0_gt_1: unknown to Cloudinary (w_div_0 divides by zero on this source)"),
        ("if_$x_gt_1/e_sepia/if_end", "if_$x_gt_1: unknown to Cloudinary (no variable $x is set before it is used; assign it first: $x_<value>)"),
    ])
    func refusesWhatThePlanCannotDecide(text: String, reason: String) {
        let issues = planRefusal(text, Self.source)
        #expect(issues.map(\.reason) == [reason])
        #expect(issues.first?.location == #"outputs[0] ("o0") step 0 (if)"#)
    }
}
