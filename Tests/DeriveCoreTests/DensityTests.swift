@testable import DeriveCore
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
        ("dpr_2.0", #"chain component 0 ("dpr_2.0"): dpr_2.0 without a w_ or h_ in the chain: known to Cloudinary, not supported by Derive: the density multiplies the sizes a chain asks for, and Cloudinary's reference asks for a resize with a width or height beside it; add one (c_scale,w_400/dpr_2.0)"#),
        ("e_sepia/dpr_2", #"chain component 1 ("dpr_2"): dpr_2 without a w_ or h_ in the chain: known to Cloudinary, not supported by Derive: the density multiplies the sizes a chain asks for, and Cloudinary's reference asks for a resize with a width or height beside it; add one (c_scale,w_400/dpr_2)"#),
        ("c_scale,w_100/dpr_2/dpr_3", #"chain component 2 ("dpr_3"): dpr_2, dpr_3 in components of their own: known to Cloudinary, not supported by Derive: Cloudinary does not document which density wins; give it once"#),
        ("c_scale,w_100,dpr_2/dpr_3", #"chain component 1 ("dpr_3"): dpr_3 in its own component and dpr_ beside a w_ or h_: known to Cloudinary, not supported by Derive: Cloudinary does not document which density wins; give it once"#),
        ("c_scale,w_100/l_logo/c_scale,w_50/fl_layer_apply/dpr_2", #"chain component 4 ("dpr_2"): dpr_2 in its own component with a layer: known to Cloudinary, not supported by Derive: Cloudinary scales layers and their text by the density too; put dpr_ beside the w_ or h_ it multiplies"#),
        ("c_scale,w_100/t_square/dpr_2", #"chain component 2 ("dpr_2"): dpr_2 in its own component with t_ or a component named by variables: known to Cloudinary, not supported by Derive: their sizes are known only when planning; put dpr_ beside the w_ or h_ it multiplies"#),
        ("c_scale,w_100/dpr_$d", #"chain component 1 ("dpr_$d"): dpr_$d in its own component: known to Cloudinary, not supported by Derive: a density of its own is a number (dpr_2.0); put an expression beside the w_ or h_ it multiplies"#),
        ("c_scale,w_100/dpr_9", #"chain component 1 ("dpr_9"): dpr must be above 0 and at most 8, got 9"#),
        ("if_w_gt_10/dpr_2/if_end/c_scale,w_100", #"chain component 1 ("dpr_2"): dpr_2 in its own component inside a layer or an if_ block: known to Cloudinary, not supported by Derive; put it beside the w_ or h_ it multiplies (c_scale,w_100,dpr_2)"#),
        ("c_scale,w_100/dpr_auto", #"chain component 1 ("dpr_auto"): dpr_auto: known to Cloudinary, not supported by Derive: needs the browser's client hints; its batch form (density variants) is planned in issue 15"#),
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
        #expect(try plan(["c_fill,w_auto:20:350,h_100/dpr_2"], Self.source).outputs[0].size == Size(700, 200))
        for refused in ["w_auto", "c_fill,w_auto:20", "w_auto:breakpoints", "w_auto:0:400", "w_auto:100:-4"] {
            #expect(CloudinaryParser().parse(refused).issues.count == 1, "\(refused)")
        }
    }
}
