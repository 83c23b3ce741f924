@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// User-defined variables (issue 15, item 2): what each form plans to, how it is spelled and
/// hashed, how a named transformation's variables give way to the caller's, and how a bad one
/// is refused.
@Suite struct VariableTests {
    /// A 1200x800 source of five pages, as in `ExpressionTests`.
    static let source = SourceFacts(format: .tiff, width: 1200, height: 800, pages: 5)

    /// Each form, with the planned size and the values the variables came to.
    @Test(arguments: [
        ("$w_300/c_scale,w_$w", Size(300, 200), ["w=300"]),
        ("$half_iw_div_2/c_scale,w_$half", Size(600, 400), ["half=600"]),
        ("$half_initial_width_div_2,c_scale,w_$half", Size(600, 400), ["half=600"]),
        ("$a_100,$b_$a_mul_2/c_scale,w_$b", Size(200, 133), ["a=100", "b=200"]),
        // pycloudinary's own test strings.
        ("$width_10/w_$width_add_10_add_w", Size(1220, 813), ["width=10"]),
        ("$first_2,$second_1,$z_5,$foo_$z_mul_2/c_scale,w_$foo_mul_10", Size(100, 67), ["first=2", "second=1", "z=5", "foo=10"]),
        // A variable takes the value where it is set: the width then, not where it is used.
        ("c_scale,w_400/$cw_w_div_2/c_scale,w_800/c_crop,w_$cw,h_100", Size(200, 100), ["cw=200"]),
        // A later assignment replaces an earlier one; a lone $name copies a text too.
        ("$w_100/$w_$w_add_1/c_scale,w_$w", Size(101, 67), ["w=100", "w=101"]),
        ("$s_!a b!/$t_$s", Size(1200, 800), ["s=a b", "t=a b"]),
        ("$n_-2.5/c_scale,w_$n_mul_-100", Size(250, 167), ["n=-2.5"]),
    ] as [(String, Size, [String])])
    func plansWithTheirValues(text: String, size: Size, values: [String]) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.size == size)
        #expect(planned.variables.map { "\($0.name)=\($0.value)" } == values)
    }

    /// Variables reach every number that takes an expression: opacity, radii, effect amounts,
    /// offsets and a layer's placement.
    @Test func variablesReachEveryExpression() throws {
        #expect(try plan(["$v_10,r_$v"], Self.source).outputs[0].operations == [.round(.corners([10, 10, 10, 10]), background: .transparent)])
        #expect(try plan(["$v_20,r_10:$v:30"], Self.source).outputs[0].operations == [.round(.corners([10, 20, 30, 20]), background: .transparent)])
        #expect(try plan(["$o_50/o_$o"], Self.source).outputs[0].operations == [.opacity(50)])
        #expect(try plan(["$b_300/e_blur:$b"], Self.source).outputs[0].operations == [.effect(.named("blur", 300))])
        #expect(try plan(["$x_iw_div_4/c_crop,w_100,h_100,x_$x,y_0"], Self.source).outputs[0].operations
            == [.crop(Rect(x: 300, y: 0, width: 100, height: 100))])
        guard case .overlay(let o)? = try plan(["$m_20/l_logo/fl_layer_apply,g_north_east,x_$m,y_$m"], Self.source).outputs[0].operations.first else {
            Issue.record("no overlay")
            return
        }
        #expect(o.x == .pixels(20) && o.y == .pixels(20))
    }

    /// `$(name)` in l_text is the variable's value; a literal dollar sign is `%24`.
    @Test(arguments: [
        ("$s_!Hello!/l_text:Arial_20:$(s)%20world/fl_layer_apply", "Hello world"),
        ("$n_iw_div_2/l_text:Arial_20:Width%20$(n)%20px/fl_layer_apply", "Width 600 px"),
        ("$r_iar/l_text:Arial_20:$(r)/fl_layer_apply", "1.5"),
        ("$p_5/l_text:Arial_20:%24$(p)%20%24%28no%29/fl_layer_apply", "$5 $(no)"),
    ])
    func textTakesTheValues(text: String, rendered: String) throws {
        guard case .overlay(let o)? = try plan([text], Self.source).outputs[0].operations.first, case .text(let layer) = o.source else {
            Issue.record("no text overlay")
            return
        }
        #expect(layer.text == rendered)
        #expect(layer.variableNames.isEmpty)
    }

    /// An overlay's own chain starts with the variables set before it.
    @Test func anOverlaysChainSeesTheVariables() throws {
        guard case .overlay(let o)? = try plan(["$lw_iw_div_10/l_logo/c_scale,w_$lw/fl_layer_apply"], Self.source).outputs[0].operations.first else {
            Issue.record("no overlay")
            return
        }
        let planned = try Planner().operations(for: o.chain, input: Size(500, 250))
        #expect(planned.size == Size(120, 60))
    }

    /// Steps after a trim run with the variables set before it.
    @Test func stepsAfterATrimKeepTheVariables() throws {
        let planned = try plan(["$w_iw_div_4/e_trim/c_scale,w_$w"], Self.source).outputs[0]
        guard case .deferred(let steps)? = planned.operations.last else {
            Issue.record("no deferred steps in \(planned.operations)")
            return
        }
        #expect(try Planner().operations(for: steps, input: Size(1000, 500)).size == Size(300, 150))
    }

    /// Spellings of one assignment hash the same; JSON says the same thing in its own shape.
    @Test(arguments: [
        ("$w_initial_width_div_2/c_scale,w_$w", "$w_iw_div_2/c_scale,w_$w"),
        ("$v_10,r_$v", "$v_10/r_$v"),
        ("$v_20,r_10:$v:30:40", "$v_20/r_10:$v:30:40"),
        ("$s_!Hello!/l_text:Arial_20:$(s)%20world,co_red/fl_layer_apply,g_south", "$s_!Hello!/l_text:Arial_20:$(s)%20world,co_red/fl_layer_apply,g_south"),
        ("$b_2.50/e_blur:$b_mul_100", "$b_2.5/e_blur:$b_mul_100"),
        ("$o_w_div_10,o_$o", "$o_w_div_10/o_$o"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func jsonHasTheSameIdentity() throws {
        let string = try canonical(string: "$w_iw_div_2/c_scale,w_$w/$s_!Hi!/l_text:Arial_20:$(s)/fl_layer_apply")
        let json = try canonical(json: #"""
            [{"variable": {"name": "w", "value": "iw / 2"}}, {"resize": {"mode": "scale", "width": "$w"}},
             {"variable": {"name": "s", "text": "Hi"}},
             {"overlay": {"text": {"text": [{"variable": "s"}], "font": "Arial", "size": 20}}}]
            """#)
        #expect(json.identity == string.identity)
        #expect(try canonical(json: #"[{"variable": {"name": "w", "value": 300}}]"#).identity == canonical(string: "$w_300").identity)
        // The value is part of the identity; so is the name.
        #expect(try canonical(string: "$w_iw_div_2/c_scale,w_$w").identity != canonical(string: "$w_iw_mul_0.5/c_scale,w_$w").identity)
        #expect(try canonical(string: "$w_iw_div_2/c_scale,w_$w").identity != canonical(string: "$v_iw_div_2/c_scale,w_$v").identity)
        // A JSON text is literal: a dollar sign there is a dollar sign.
        #expect(try canonical(json: #"[{"overlay": {"text": "$(s)"}}]"#).identity != canonical(string: "l_text:sans_32:$(s)/fl_layer_apply").identity)
    }

    /// A named transformation's variables are defaults: a value set before `t_` wins.
    @Test func theCallerOverridesANamedTransformation() throws {
        let preset = Preset(name: "square", version: 1, outputs: [try TransformationInput.output(named: "square", transformation: "$size_100/c_fill,w_$size,h_$size")])
        func planned(_ text: String) throws -> PlannedOutput {
            let spec = try TransformationInput.output(named: "o", transformation: text)
            let resolved = try JobResolver(catalog: InMemoryPresetCatalog([preset])).resolve(JobSpec(source: nil, outputs: [spec]))
            return try Planner().plan(resolved, source: Self.source).outputs[0]
        }
        #expect(try planned("t_square").size == Size(100, 100))
        #expect(try planned("$size_50/t_square").size == Size(50, 50))
        #expect(try planned("$size_50,t_square").size == Size(50, 50))
        #expect(try planned("$other_50/t_square").size == Size(100, 100))
    }

    /// Refused while reading, with the parameter as written.
    @Test(arguments: [
        ("$1x_10", #"$1x_10: unknown to Cloudinary ("$1x" is not a variable: a name is a letter, then letters and digits)"#),
        ("$x_iw_div", #"$x_iw_div: unknown to Cloudinary (an expression ends with a value, not the operator "div"); $x_ takes comparisons such as w_gt_200, joined by _and_ or _or_, of numbers, texts (!text!) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        ("c_scale,w_$1", #"w_$1: unknown to Cloudinary ("$1" is not a variable: a name is a letter, then letters and digits)"#),
        ("$f_!png!/f_$f", "f_$f: known to Cloudinary, not supported by Derive: user-defined variables in output settings, flags and named transformations, which are fixed before the chain runs, and in a name beside an image layer's l_ in the long form (l_logo,c_$mode/…/fl_layer_apply); they work in numbers (w_$w), names (c_$mode, e_$effect, l_$logo, l_text:$style:..., a text layer's style in either form) and as $(name) in l_text"),
        ("$m_!scale!/l_logo,c_$m,w_10/fl_layer_apply", "l_logo,c_$m,w_10: known to Cloudinary, not supported by Derive: user-defined variables in output settings, flags and named transformations, which are fixed before the chain runs, and in a name beside an image layer's l_ in the long form (l_logo,c_$mode/…/fl_layer_apply); they work in numbers (w_$w), names (c_$mode, e_$effect, l_$logo, l_text:$style:..., a text layer's style in either form) and as $(name) in l_text"),
        ("l_text:Arial_20:5$/fl_layer_apply", "l_text:…$: a $ in text starts a variable, written $(name) with a name of letters and digits; write a literal dollar sign as %24"),
    ])
    func refusesWhatCannotBeRead(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues
        #expect(issues.map(\.reason) == [reason], "\(issues)")
    }

    /// Names from text variables (a mode, gravity, colour, effect, layer or text style): the
    /// component is kept as written and read when planning, with the texts written in.
    @Test(arguments: [
        ("$efname_!blur!,e_$efname:100", [ImageOperation.effect(.named("blur", 100))]),
        ("$c_!red!/b_$c", [.flatten(Color(red: 255, green: 0, blue: 0))]),
        ("$mode_!crop!,$g_!north_west!/c_$mode,w_100,h_50,g_$g", [.crop(Rect(x: 0, y: 0, width: 100, height: 50))]),
        ("$e_!grayscale!/if_w_gt_10,e_$e", [.effect(.named("grayscale"))]),
    ])
    func namesFromVariables(text: String, operations: [ImageOperation]) throws {
        #expect(try plan([text], Self.source).outputs[0].operations == operations)
    }

    /// An image layer's name takes variables in either form; ':' is a folder, as in l_.
    @Test(arguments: ["$logo_!brand:logo!/l_$logo/c_scale,w_10/fl_layer_apply,g_north", "$logo_!brand:logo!/l_$logo,g_north"])
    func aLayerNamedFromAVariable(text: String) throws {
        guard case .overlay(let o)? = try plan([text], Self.source).outputs[0].operations.first else {
            Issue.record("no overlay")
            return
        }
        #expect(o.source == .image("brand/logo") && o.gravity == .compass(.north))
        let model = try canonical(string: text)
        #expect(try canonical(string: CloudinaryPrinter.string(for: model)).identity == model.identity)
        #expect(throws: ValidationError.self) { try plan(["l_$logo/fl_layer_apply"], Self.source) }
    }

    @Test func aTextStyleFromAVariable() throws {
        guard case .overlay(let o)? = try plan(["$style_!Arial_12!/l_text:$style:hello-world"], Self.source).outputs[0].operations.first,
              case .text(let layer) = o.source else {
            Issue.record("no text overlay")
            return
        }
        #expect(layer.font == "Arial" && layer.size == 12 && layer.text == "hello-world")
        try expectRoundTrip("$efname_!blur!,e_$efname:100", printed: "$efname_!blur!/e_$efname:100")
        try expectRoundTrip("$style_!Arial_12_bold!/l_text:$style:Hi,co_red", printed: "$style_!Arial_12_bold!/l_text:$style:Hi,co_red")
        #expect(try canonical(json: #"[{"variable": {"name": "efname", "text": "blur"}}, {"template": "e_$efname:100"}]"#).identity
            == canonical(string: "$efname_!blur!/e_$efname:100").identity)
    }

    /// Refused when planning: a variable used before it is set, or a text used as a number.
    @Test(arguments: [
        ("c_scale,w_$w", "w_$w: unknown to Cloudinary (no variable $w is set before it is used; assign it first: $w_<value>)"),
        ("$s_!abc!/c_scale,w_$s", "w_$s: unknown to Cloudinary ($s holds a text where a number goes)"),
        ("$a_$b", "$a_$b: unknown to Cloudinary (no variable $b is set before it is used; assign it first: $b_<value>)"),
        ("l_text:Arial_20:$(who)/fl_layer_apply", "l_text $(who): unknown to Cloudinary (no variable $who is set before it is used; assign it first: $who_<value>)"),
        ("c_$mode,w_100", "c_$mode: unknown to Cloudinary (a name from a variable needs a text variable set before it: $name_!text!)"),
        ("$m_!fil!/c_$m,w_100", #"c_fil: unknown to Cloudinary (no crop mode "fil"); did you mean "fill"? ($m is "fil")"#),
        (#"[{"variable": {"name": "m", "text": "fill,w_5"}}, {"template": "c_$m"}]"#, #"c_$m: unknown to Cloudinary ($m holds "fill,w_5", and a name cannot hold ',' or '/')"#),
    ])
    func refusesWhatThePlanCannotEvaluate(text: String, reason: String) {
        #expect(planRefusal(text, Self.source).map(\.reason) == [reason])
    }

    /// `explain` lists each variable with its value.
    @Test func explainShowsTheVariables() throws {
        let json = try plan(["$half_iw_div_2/c_scale,w_$half"], Self.source).json
        guard case .array(let outputs)? = json["outputs"], case .array(let variables)? = outputs[0]["variables"] else {
            Issue.record("no variables in \(JSONWriter.pretty(json))")
            return
        }
        #expect(variables.first?["name"] == .string("half") && variables.first?["assigned"] == .string("iw_div_2")
            && variables.first?["value"] == .int(600))
        #expect(outputs[0]["transformation"] == .string("$half_iw_div_2/c_scale,w_$half"))
    }
}
