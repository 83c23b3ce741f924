@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// A quality chosen by a condition (issue 30): `q_` inside an `if_` branch is a step of the
/// branch, and the planner gives the output the quality of the branch it takes.
@Suite struct ConditionalQualityTests {
    static let source = SourceFacts(format: .jpeg, width: 1200, height: 800)

    /// The quality planned, with and without the asset's tag, and on a narrow source.
    @Test(arguments: [
        ("$qualtag_!Pro!/if_$qualtag_in_tags,q_80/if_else,q_30/w_500", Quality.value(80), Quality.value(30)),
        ("if_!Pro!_in_tags/q_auto:best/if_end", .auto(.best), nil),
        // The output's own quality, replaced only when the branch is taken.
        ("q_50/if_!Pro!_in_tags,q_90", .value(90), .value(50)),
        // An expression in the branch is evaluated as the output's is.
        ("if_!Pro!_in_tags,q_iw_div_20", .value(60), nil),
    ] as [(String, Quality, Quality?)])
    func theBranchTakenSetsTheQuality(text: String, tagged: Quality, untagged: Quality?) throws {
        func quality(_ asset: AssetFacts) throws -> Quality? {
            try plan([text], Self.source, asset: asset).outputs[0].encoding.quality
        }
        #expect(try quality(AssetFacts(tags: ["Pro"])) == tagged, "\(text)")
        let plain = try plan(["w_500"], Self.source).outputs[0].encoding.quality
        #expect(try quality(.none) == (untagged ?? plain), "\(text) untagged")
    }

    /// A condition on the source's size decides it too, and the width still follows the chain.
    @Test func aConditionOnTheSizeChoosesTheQuality() throws {
        let text = "if_w_gt_1000,q_40/if_else,q_85/if_end/c_scale,w_300"
        let wide = try plan([text], Self.source).outputs[0]
        let narrow = try plan([text], SourceFacts(format: .jpeg, width: 800, height: 600)).outputs[0]
        #expect(wide.encoding.quality == .value(40) && wide.size?.width == 300)
        #expect(narrow.encoding.quality == .value(85) && narrow.size?.width == 300)
    }

    /// The string parses to a quality step in the branch, prints back, and its JSON spelling
    /// is the same output (same identity).
    @Test func readPrintedAndSpelledInJSON() throws {
        let parsed = CloudinaryParser().parse("if_!Pro!_in_tags,q_80/if_else,q_30")
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        guard case .conditional(let c)? = parsed.steps.first else {
            Issue.record("no conditional: \(parsed.steps)")
            return
        }
        #expect(c.then == [.quality(.value(80))] && c.otherwise == [.quality(.value(30))])
        #expect(parsed.settings.quality == nil, "the output's own quality is not set by a branch")
        try expectRoundTrip("if_!Pro!_in_tags,q_80/if_else,q_30", printed: "if_!Pro!_in_tags/q_80/if_else/q_30/if_end")
        let string = try canonical(string: "if_!Pro!_in_tags,q_80/if_else,q_30")
        let json = try canonical(json: #"[{"if": {"condition": "!Pro! in tags", "then": [{"quality": 80}], "else": [{"quality": 30}]}}]"#)
        #expect(json.identity == string.identity)
        #expect(throws: ValidationError.self) { try canonical(json: #"[{"quality": 0}]"#) }
        #expect(throws: ValidationError.self) { try canonical(json: #"[{"quality": true}]"#) }
    }

    /// A branch the engine decides (on the face count) cannot set the quality: the encoding
    /// is fixed before the engine runs; the refusal says so.
    @Test func aBranchDecidedByTheEngineIsRefused() throws {
        #expect(throws: ValidationError.self) { try plan(["if_fc_gt_0,q_40"], Self.source) }
        do {
            _ = try plan(["if_fc_gt_0,q_40"], Self.source)
        } catch let error as ValidationError {
            #expect(error.issues.contains { $0.reason.contains("q_ inside an if_ decided when the engine runs") && $0.reason.contains("known to Cloudinary, not supported by Derive") }, "\(error.issues)")
        }
    }
}
