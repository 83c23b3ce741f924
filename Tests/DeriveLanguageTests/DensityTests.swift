@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// `dpr_<n>` in a component of its own (issue 15, item 4): the density of every resize of the
/// chain, as Cloudinary multiplies the sizes the chain asks for.
@Suite struct DensityTests {
    static let source = SourceFacts(format: .jpeg, width: 4000, height: 3000)

    @Test(arguments: [
        ("c_scale,w_100/dpr_2.0", Size(200, 150)),
        ("dpr_2.0/c_scale,w_100", Size(200, 150)),
        ("c_fill,w_100,h_100/dpr_3", Size(300, 300)),
        ("c_fill,w_400,h_300/c_scale,w_200/dpr_1.5", Size(300, 225)),
        ("c_scale,w_100/e_sepia/dpr_2.0", Size(200, 150)),
        ("if_w_gt_1000/c_scale,w_500/if_end/dpr_2", Size(1000, 750)),
        ("if_w_lt_1000/c_scale,w_500/if_else/c_scale,w_300/if_end/dpr_2", Size(600, 450)),
        ("c_scale,w_0.1/dpr_0.5", Size(200, 150)),
        ("$w_100/c_scale,w_$w/dpr_2", Size(200, 150)),
    ] as [(String, Size)])
    func multipliesTheChainsSizes(text: String, size: Size) throws {
        #expect(try plan([text], Self.source).outputs[0].size == size)
    }

    /// The same output as `dpr_` beside each size: one identity, printed that way.
    @Test(arguments: [
        ("c_scale,w_100/dpr_2.0", "c_scale,w_100,dpr_2", "c_scale,w_100,dpr_2.0"),
        ("c_fill,w_400,h_300/c_scale,w_200/dpr_1.5", "c_fill,w_400,h_300,dpr_1.5/c_scale,w_200,dpr_1.5", "c_fill,w_400,h_300,dpr_1.5/c_scale,w_200,dpr_1.5"),
        ("dpr_3/c_crop,w_10,h_10", "c_crop,w_10,h_10,dpr_3", "c_crop,w_10,h_10,dpr_3.0"),
    ])
    func roundTrips(text: String, printed: String, beside: String) throws {
        try expectRoundTrip(text, printed: printed)
        #expect(try canonical(string: text).identity == canonical(string: beside).identity)
        #expect(try canonical(string: text).identity != canonical(string: "c_scale,w_100").identity)
    }

    /// Each refusal names the dpr_ as written, and is the only line.
    @Test(arguments: [
        ("c_scale,w_100/dpr_2/dpr_3", #"chain component 2 ("dpr_3"): dpr_2, dpr_3 in components of their own: known to Cloudinary, not supported by Derive: Cloudinary does not document which density wins; give it once"#),
        ("c_scale,w_100,dpr_2/dpr_3", #"chain component 1 ("dpr_3"): dpr_3 in its own component and dpr_ beside a w_ or h_: known to Cloudinary, not supported by Derive: Cloudinary does not document which density wins; give it once"#),
        ("c_scale,w_100/l_logo/c_scale,w_50/fl_layer_apply/dpr_2", #"chain component 4 ("dpr_2"): dpr_2 in its own component with a layer: known to Cloudinary, not supported by Derive: Cloudinary scales layers and their text by the density too; put dpr_ beside the w_ or h_ it multiplies"#),
        ("c_scale,w_100/t_square/dpr_2", #"chain component 2 ("dpr_2"): dpr_2 in its own component with t_ or a component named by variables: known to Cloudinary, not supported by Derive: their sizes are known only when planning; put dpr_ beside the w_ or h_ it multiplies"#),
        ("c_scale,w_100/dpr_$d", #"chain component 1 ("dpr_$d"): dpr_$d in its own component: known to Cloudinary, not supported by Derive: a density of its own is a number (dpr_2.0); put an expression beside the w_ or h_ it multiplies"#),
        ("c_scale,w_100/dpr_9", #"chain component 1 ("dpr_9"): dpr_9: unknown to Cloudinary (dpr must be above 0 and at most 8, got 9)"#),
        ("if_w_gt_10/dpr_2/if_end/c_scale,w_100", #"chain component 1 ("dpr_2"): dpr_2 in its own component inside a layer or an if_ block: known to Cloudinary, not supported by Derive; put it beside the w_ or h_ it multiplies (c_scale,w_100,dpr_2)"#),
    ])
    func refusesNamingIt(text: String, message: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.description) == [message])
    }

    /// No browser sends a Width hint to a batch job: `w_auto:<step>:<fallback>` is the fallback.
    @Test func automaticWidthIsItsFallback() throws {
        let planned = try plan(["c_limit,w_auto:100:400"], Self.source).outputs[0]
        #expect(planned.size == Size(400, 300))
        #expect(planned.notes == [#"chain component 0 ("c_limit,w_auto:100:400"): w_auto:100:400: a batch job has no browser to send a Width client hint, so the width is the fallback, 400 px, as Cloudinary delivers without one"#])
        try expectRoundTrip("c_limit,w_auto:100:400", printed: "c_limit,w_400")
        // Cloudinary rounds the width up to the step: 350 in steps of 20 is 360.
        let rounded = try plan(["c_fill,w_auto:20:350,h_100/dpr_2"], Self.source).outputs[0]
        #expect(rounded.size == Size(720, 200))
        #expect(rounded.notes.first?.hasSuffix("so the width is the fallback, 360 px, rounded up to the step of 20 px, as Cloudinary delivers without one") == true, "\(rounded.notes)")
        for refused in ["w_auto:0:400", "w_auto:100:-4", "w_auto:abc", "w_auto:breakpoints_1_x", "w_auto:breakpoints:png"] {
            #expect(CloudinaryParser().parse(refused).issues.map(\.description) == [
                #"chain component 0 ("\#(refused)"): \#(refused.replacingOccurrences(of: "w_", with: "w_", options: .anchored)): unknown to Cloudinary (w_auto takes w_auto[:<step>[:<fallback>]] or w_auto:breakpoints[_<min>_<max>_<KB>_<count>][:json])"#,
            ], "\(refused)")
        }
    }
}

/// `w_auto`, `w_auto:<step>` and `w_auto:breakpoints…` (issue 15, item 4): a batch job has no
/// browser to ask for a width, so it makes every width one could ask for — the output's
/// breakpoints, each stored and recorded.
@Suite struct AutomaticWidthTests {
    static let source = SourceFacts(format: .jpeg, width: 4000, height: 3000)

    /// By a step: its multiples up to 1000 px, capped at the width of the chain's result.
    @Test(arguments: [
        ("w_auto", [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]),
        ("c_limit,w_auto:250", [250, 500, 750, 1000]),
        ("c_scale,w_auto:400,f_webp", [400, 800, 1000]),
        ("c_crop,h_100,w_100/c_limit,w_auto", [100]),
        ("c_crop,h_100,w_100/c_pad,w_auto", [100]),
        ("c_fill,w_500,h_500/c_scale,w_auto:200", [200, 400, 500]),
    ])
    func everyStepIsAVariant(text: String, widths: [Int]) throws {
        let outputs = try plan([text], Self.source).outputs
        #expect(outputs.map(\.breakpointWidth) == widths.map(Optional.some))
        #expect(outputs.map { $0.size?.width } == widths.map(Optional.some))
        #expect(Set(outputs.map(\.identity)).count == 1)
    }

    /// A fine step makes at most 20 variants, spread over the range, all multiples of the step.
    @Test func aFineStepIsThinnedOut() throws {
        let widths = try plan(["c_fill,w_auto:20"], Self.source).outputs.compactMap(\.breakpointWidth)
        #expect(widths.count == 20 && widths.first == 20 && widths.last == 1000 && widths.allSatisfy { $0 % 20 == 0 }, "\(widths)")
    }

    /// By bytes: Cloudinary's responsive breakpoints, found by the engine's search as the
    /// `breakpoints` setting's are (KB are thousands of bytes, as Derive's default 20000 is 20).
    @Test(arguments: [
        ("w_auto:breakpoints", BreakpointSearch(minWidth: 50, maxWidth: 1000, bytes: 20_000, maxCount: 20)),
        ("c_fill,w_auto:breakpoints_100_1900_20_15", BreakpointSearch(minWidth: 100, maxWidth: 1900, bytes: 20_000, maxCount: 15)),
        ("c_scale,w_auto:breakpoints_50_1000_30_5:json", BreakpointSearch(minWidth: 50, maxWidth: 1000, bytes: 30_000, maxCount: 5)),
        ("c_crop,w_100/c_scale,w_auto:breakpoints_50_1000_20_20:json", BreakpointSearch(minWidth: 50, maxWidth: 100, bytes: 20_000, maxCount: 20)),
        ("c_scale,w_auto:breakpoints_200", BreakpointSearch(minWidth: 200, maxWidth: 1000, bytes: 20_000, maxCount: 20)),
    ])
    func breakpointsAreSearchedByBytes(text: String, search: BreakpointSearch) throws {
        let outputs = try plan([text], Self.source).outputs
        #expect(outputs.map(\.breakpointSearch) == [search])
    }

    /// The same output as the `breakpoints` setting in JSON; the plan's notes say what was read.
    @Test func isTheBreakpointsSetting() throws {
        #expect(try canonical(string: "c_scale,w_auto").identity
            == canonical(json: #"{"chain": [], "breakpoints": {"minWidth": 100, "maxWidth": 1000, "step": 100, "maxCount": 20}}"#).identity)
        #expect(try canonical(string: "w_auto:breakpoints:json").identity
            == canonical(json: #"{"chain": [], "breakpoints": {}}"#).identity)
        #expect(try canonical(string: "e_sepia/w_auto:breakpoints").identity == canonical(string: "e_sepia/w_auto:breakpoints_50_1000_20_20").identity)
        #expect(try canonical(string: "w_auto:200").identity != canonical(string: "w_auto").identity)
        let notes = try plan(["c_fill,w_auto:breakpoints:json"], Self.source).outputs[0].notes
        #expect(notes == [#"chain component 0 ("c_fill,w_auto:breakpoints:json"): w_auto:breakpoints:json: a batch job has no browser to send a Width client hint, so Derive makes every width one could ask for: from 50 px, 20 KB apart up to 1000 px (at most 20, capped at the image's width), each stored and recorded as a breakpoint; :json lists the widths, which the job's report does"#])
    }

    @Test(arguments: [
        ("c_scale,w_auto", "w_auto"),
        ("c_fill,w_auto:250,g_north", "w_auto:250"),
        ("w_auto:breakpoints:json", "w_auto:breakpoints_50_1000_20_20"),
        ("e_sepia/c_limit,w_auto:breakpoints_100_1900_20_15,f_webp", "e_sepia/f_webp,w_auto:breakpoints_100_1900_20_15"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// Where the variants cannot be widths of the chain's result, refused naming it.
    @Test(arguments: [
        ("w_auto/e_sepia", #"chain component 1 ("e_sepia"): "e_sepia" after w_auto: known to Cloudinary, not supported by Derive: a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"#),
        ("c_fill,w_auto,h_100", #"chain component 0 ("c_fill,w_auto,h_100"): w_auto with h_100: known to Cloudinary, not supported by Derive: a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"#),
        ("c_crop,w_auto,g_north", #"chain component 0 ("c_crop,w_auto,g_north"): w_auto with c_crop: known to Cloudinary, not supported by Derive: a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"#),
        ("w_auto:breakpoints_50_1000_20_40", #"chain component 0 ("w_auto:breakpoints_50_1000_20_40"): w_auto:breakpoints_50_1000_20_40: known to Cloudinary, not supported by Derive: beyond Derive's limits: breakpoints.maxCount must be between 1 and 30, got 40"#),
        ("w_auto:breakpoints_500_100", #"chain component 0 ("w_auto:breakpoints_500_100"): w_auto:breakpoints_500_100: unknown to Cloudinary (breakpoints.minWidth is larger than maxWidth (500 > 100))"#),
        ("w_auto/w_auto:200", #"chain component 1 ("w_auto:200"): w_auto:200 after w_auto in component 0: known to Cloudinary, not supported by Derive: a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"#),
        ("l_logo,c_scale,w_auto", #"chain component 0 ("l_logo,c_scale,w_auto"): w_auto inside a layer or an if_ block: known to Cloudinary, not supported by Derive: a batch job makes every width a browser could ask for, as the output's breakpoints, which are widths of the chain's result; write w_auto in the chain's last component, beside c_ and g_ at most and output settings"#),
    ])
    func refusedNamingIt(text: String, message: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.description) == [message])
    }
}

/// `dpr_auto` (issue 15, item 4): a batch job has no browser to give a density, so it makes the
/// output at densities 1, 2 and 3 — every size of the chain multiplied by each, as `dpr_<n>` in a
/// component of its own does — each stored and recorded with its width.
@Suite struct AutomaticDensityTests {
    static let source = SourceFacts(format: .jpeg, width: 4000, height: 3000)
    static let refusal = "known to Cloudinary, not supported by Derive: a batch job makes the output at densities 1, 2 and 3, every size of the chain multiplied by each; Cloudinary also scales layers and their text by the density, which Derive does not, and a density needs a size to multiply"

    @Test(arguments: [
        ("c_scale,w_100/dpr_auto", [Size(100, 75), Size(200, 150), Size(300, 225)]),
        ("dpr_auto/c_scale,w_100", [Size(100, 75), Size(200, 150), Size(300, 225)]),
        ("c_fill,w_200,h_100,dpr_auto", [Size(200, 100), Size(400, 200), Size(600, 300)]),
        ("c_fill,w_400,h_300/c_scale,w_200/dpr_auto", [Size(200, 150), Size(400, 300), Size(600, 450)]),
        ("if_w_gt_1000/c_scale,w_500/if_end/dpr_auto", [Size(500, 375), Size(1000, 750), Size(1500, 1125)]),
        // c_limit never enlarges: at density 3 it is the source's 4000 px again, made once.
        ("c_limit,w_2000/dpr_auto", [Size(2000, 1500), Size(4000, 3000)]),
    ] as [(String, [Size])])
    func oneVariantPerDensity(text: String, sizes: [Size]) throws {
        let outputs = try plan([text], Self.source).outputs
        #expect(outputs.map(\.size) == sizes.map(Optional.some))
        #expect(outputs.map(\.breakpointWidth) == sizes.map { Optional.some($0.width) })
        #expect(Set(outputs.map(\.identity)).count == 1)
    }

    @Test func isTheDensitiesSetting() throws {
        let string = try canonical(string: "c_scale,w_100/dpr_auto")
        #expect(string.identity == (try canonical(json: #"{"chain": [{"resize": {"width": 100}}], "densities": [3, 1, 2, 2]}"#)).identity)
        #expect(string.identity == (try canonical(string: "dpr_auto,c_scale,w_100")).identity)
        #expect(string.identity != (try canonical(string: "c_scale,w_100")).identity)
        try expectRoundTrip("c_scale,w_100,dpr_auto", printed: "c_scale,w_100/dpr_auto")
        try expectRoundTrip("c_fill,w_50,h_50/e_sepia/f_webp,dpr_auto", printed: "c_fill,w_50,h_50/e_sepia/f_webp,dpr_auto")
        let notes = try plan(["c_scale,w_100/dpr_auto"], Self.source).outputs[0].notes
        #expect(notes == [#"chain component 1 ("dpr_auto"): dpr_auto: a batch job has no browser to send a DPR client hint, so Derive makes the output at densities 1, 2 and 3, every size of the chain multiplied by each, each stored and recorded with its width"#])
        // Other densities exist in JSON only.
        #expect(throws: CloudinaryPrinter.Unprintable.self) {
            try CloudinaryPrinter.string(for: try canonical(json: #"{"chain": [{"resize": {"width": 100}}], "densities": [1, 1.5]}"#))
        }
    }

    @Test(arguments: [
        ("c_scale,w_100/l_logo/fl_layer_apply/dpr_auto", #"chain component 3 ("dpr_auto"): dpr_auto with a layer: "#),
        ("c_scale,w_100,dpr_2/dpr_auto", #"chain component 1 ("dpr_auto"): dpr_auto and dpr_ beside a w_ or h_: "#),
        ("c_scale,w_100/dpr_2/dpr_auto", #"chain component 2 ("dpr_auto"): dpr_auto and dpr_2: "#),
        ("l_logo,c_scale,w_10,dpr_auto", #"chain component 0 ("l_logo,c_scale,w_10,dpr_auto"): dpr_auto inside a layer or an if_ block: "#),
    ])
    func refusedNamingIt(text: String, start: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.description) == [start + Self.refusal])
    }

    @Test func notWithBreakpoints() throws {
        #expect(throws: ValidationError.self) {
            try canonical(json: #"{"chain": [{"resize": {"width": 100}}], "densities": [1, 2], "breakpoints": {}}"#)
        }
        #expect(throws: ValidationError.self) { try canonical(json: #"{"chain": [], "densities": [0, 9]}"#) }
    }
}
