@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Expressions in the parameters that take decimals or degrees (issue 15, item 1): `ar_`,
/// `dpr_`, `z_` and `a_`, evaluated by the planner like lengths.
@Suite struct DecimalExpressionTests {
    /// 1200x800, five pages.
    static let source = SourceFacts(format: .tiff, width: 1200, height: 800, pages: 5)

    @Test(arguments: [
        ("c_fill,w_300,ar_iar", Size(300, 200), ["ar=1.5"]),
        ("c_fill,w_300,ar_1_div_iar", Size(300, 450), ["ar=0.666667"]),
        ("$r_2/c_fill,w_300,ar_$r", Size(300, 150), ["ar=2"]),
        ("c_scale,w_100,dpr_pc_div_2", Size(250, 167), ["dpr=2.5"]),
        ("$d_2/c_fill,w_100,h_100,dpr_$d", Size(200, 200), ["dpr=2"]),
        ("a_pc_mul_18", Size(800, 1200), ["a=90"]),
        ("$angle_-90/a_$angle", Size(800, 1200), ["a=-90"]),
        ("a_iar_mul_30", Size(1414, 1414), ["a=45"]),
    ] as [(String, Size, [String])])
    func evaluatesOnTheSource(text: String, size: Size, values: [String]) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.size == size)
        #expect(planned.expressions.map { "\($0.parameter)=\($0.exact.map(Decimal6.string) ?? String($0.value))" } == values)
    }

    /// A zoom from an expression reaches the face crop, which the engine lays out.
    @Test func zoomFromAnExpression() throws {
        let planned = try plan(["$z_1.5/c_thumb,w_100,h_100,g_face,z_$z"], Self.source).outputs[0]
        guard case .faceCrop(let r)? = planned.operations.first else {
            Issue.record("no face crop in \(planned.operations)")
            return
        }
        #expect(r.zoom == 1.5 && r.zoomExpression == nil)
    }

    @Test(arguments: [
        ("c_fill,w_300,ar_iar", "c_fill,w_300,ar_iar"),
        ("c_fill,w_300,ar_initial_aspect_ratio_mul_1.0", "c_fill,w_300,ar_iar_mul_1"),
        ("c_scale,w_100,dpr_pc_div_2", "c_scale,w_100,dpr_pc_div_2"),
        ("$z_2/c_thumb,w_100,h_100,g_face,z_$z", "$z_2/c_thumb,w_100,h_100,g_face,z_$z"),
        ("a_pc_mul_18", "a_pc_mul_18"),
        ("a_$a,b_red", "a_$a,b_red"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func jsonHasTheSameIdentity() throws {
        #expect(try canonical(json: #"[{"resize": {"mode": "fill", "width": 300, "aspectRatio": "iar"}}]"#).identity
            == canonical(string: "c_fill,w_300,ar_iar").identity)
        #expect(try canonical(json: #"[{"resize": {"mode": "fill", "width": 300, "aspectRatio": "16:9"}}]"#).identity
            == canonical(string: "c_fill,w_300,ar_16:9").identity)
        #expect(try canonical(json: #"[{"rotate": {"angle": "pc * 18"}}]"#).identity == canonical(string: "a_pc_mul_18").identity)
        #expect(try canonical(json: #"[{"resize": {"width": 100, "dpr": "pc / 2"}}]"#).identity == canonical(string: "w_100,dpr_pc_div_2").identity)
    }

    /// `q_` is an output setting: evaluated on the output as the chain leaves it (the source's
    /// values, the final size as `w` and `h`, the variables as last set).
    @Test(arguments: [
        ("q_iw_div_20", 60),
        ("c_scale,w_500/q_w_div_10", 50),
        ("$q_70/f_webp,q_$q", 70),
        ("$q_70/c_scale,w_100/$q_40/q_$q_add_pc", 45),
    ])
    func qualityFromAnExpression(text: String, quality: Int) throws {
        let planned = try plan([text], Self.source).outputs[0]
        #expect(planned.encoding.quality == .value(quality))
        #expect(planned.canonical.encoding.quality.map { if case .expression = $0 { true } else { false } } == true)
    }

    @Test func qualityRoundTripsAndRefusals() throws {
        try expectRoundTrip("q_iw_div_20", printed: "q_iw_div_20")
        try expectRoundTrip("$q_70/f_webp,q_$q", printed: "$q_70/f_webp,q_$q")
        #expect(try canonical(json: #"{"chain": [], "quality": "iw / 20"}"#).identity == canonical(string: "q_iw_div_20").identity)
        do {
            _ = try plan(["q_iw"], Self.source)
            Issue.record("planned")
        } catch let error as ValidationError {
            #expect(error.issues.map(\.reason) == ["must be between 1 and 100, got 1200 (on this source q_iw is 1200)"])
        }
        do {
            _ = try plan(["e_trim/q_w_div_10"], Self.source)
            Issue.record("planned")
        } catch let error as ValidationError {
            #expect(error.issues.map(\.reason) == ["q_w_div_10: w, h and ar are not known when the output's size depends on the content (after a trim)"])
        }
    }

    /// Out of range once evaluated, or not an expression: refused naming the parameter.
    @Test func refusals() throws {
        #expect(CloudinaryParser().parse("c_fill,w_100,ar_iar_div").issues.map(\.reason).first?.hasPrefix("ar_iar_div: unknown to Cloudinary") == true)
        #expect(CloudinaryParser().parse("a_w_div").issues.map(\.reason).first?.hasPrefix("a_w_div: unknown to Cloudinary") == true)
        do {
            _ = try plan(["c_scale,w_100,dpr_iw"], Self.source)
            Issue.record("planned")
        } catch let error as ValidationError {
            #expect(error.issues.map(\.reason) == ["dpr must be above 0 and at most 8, got 1200 (on this source dpr_iw is 1200)"])
        }
    }
}
