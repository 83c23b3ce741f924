@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Values from the asset (issue 30, item 3): the tags and context a job carries, read by
/// `if_!tag!_in_tags`, `nin`, `ctx:!key!` and `md:!key!` conditions and by assignments, as
/// Cloudinary reads an asset's tags and context.
@Suite struct AssetConditionTests {
    static let source = SourceFacts(format: .jpeg, width: 1200, height: 800)
    static let shoes = AssetFacts(tags: ["sale", "in_stock"], context: ["productType": "shoes", "x_pos": "0.25", "count": "3.7 pairs"])

    /// Each form, with the planned width and whether the condition held, with and without the facts.
    @Test(arguments: [
        ("if_!sale!_in_tags/c_scale,w_100/if_end", 100, 1200),
        ("if_!sale:in_stock!_in_tags/c_scale,w_100/if_end", 100, 1200),
        // Every item must be among the tags for in; nin holds when not all are.
        ("if_!sale:gone!_in_tags/c_scale,w_100/if_end", 1200, 1200),
        ("if_!sale:gone!_nin_tags/c_scale,w_100/if_end", 100, 100),
        ("if_!gone!_nin_tags/c_scale,w_100/if_end", 100, 100),
        ("if_!sale!_nin_tags/c_scale,w_100/if_else/c_scale,w_50/if_end", 50, 100),
        ("$qualtag_!sale!/if_$qualtag_in_tags/c_scale,w_100/if_end", 100, 1200),
        ("if_ctx:!productType!_eq_!shoes!,c_scale,w_100", 100, 1200),
        ("if_ctx:!productType!_ne_!shoes!/c_scale,w_100/if_end", 1200, 100),
        ("if_md:!productType!_eq_!shoes!/c_scale,w_100/if_end", 100, 1200),
        // A key the asset does not have is empty, as Cloudinary compares it with !!.
        ("if_ctx:!missing!_eq_!!/c_scale,w_100/if_end", 100, 100),
        ("if_ctx:!productType!_in_!boots:shoes!/c_scale,w_100/if_end", 100, 1200),
        // Numbers: _to_f reads the leading number, _to_i drops the fraction, 0 when none.
        ("$x_ctx:!x_pos!_to_f/c_scale,w_iw_mul_$x_add_10", 310, 10),
        ("$n_ctx:!count!_to_i/c_scale,w_$n_mul_100_add_10", 310, 10),
        ("$n_ctx:!count!_to_f/c_scale,w_$n_mul_100_add_10", 380, 10),
        ("if_ctx:!count!_to_i_gte_3/c_scale,w_100/if_end", 100, 1200),
        ("if_!sale!_in_tags_and_w_gt_1000/c_scale,w_100/if_end", 100, 1200),
    ] as [(String, Int, Int)])
    func conditionsReadTheJobsTagsAndContext(text: String, width: Int, widthWithout: Int) throws {
        func plannedWidth(_ asset: AssetFacts) throws -> Int? {
            try plan([text], Self.source, asset: asset).outputs[0].size?.width
        }
        #expect(try plannedWidth(Self.shoes) == width, "\(text)")
        #expect(try plannedWidth(.none) == widthWithout, "\(text) without tags or context")
    }

    /// The condition is reported as written, and the branch it took.
    @Test func explainShowsTheConditionAsWritten() throws {
        let planned = try plan(["if_ctx:!productType!_eq_!shoes!/e_sepia/if_end"], Self.source, asset: Self.shoes).outputs[0]
        #expect(planned.conditions.map(\.condition) == ["ctx:!productType!_eq_!shoes!"])
        #expect(planned.conditions.map(\.holds) == [true])
    }

    /// An output whose chain reads the asset is another output for other facts (its identity
    /// takes them in), so work recorded for one asset's branch is not reused for another's;
    /// a chain that reads nothing of the asset keeps one identity.
    @Test func theIdentityTakesInWhatTheChainReads() throws {
        let reads = "if_!sale!_in_tags/e_sepia/if_end"
        let a = try plan([reads], Self.source, asset: Self.shoes).outputs[0].identity
        let b = try plan([reads], Self.source, asset: AssetFacts(tags: ["new"])).outputs[0].identity
        let c = try plan([reads], Self.source, asset: AssetFacts(tags: ["in_stock", "sale"], context: Self.shoes.context)).outputs[0].identity
        #expect(a != b)
        #expect(a == c, "tags are a set: their order does not change the output")
        let plain = "c_scale,w_100"
        #expect(try plan([plain], Self.source, asset: Self.shoes).outputs[0].identity == plan([plain], Self.source).outputs[0].identity)
        #expect(try plan([plain], Self.source).outputs[0].identity == canonical(string: plain).identity)
    }

    /// After a trim the engine decides without the job: the facts are written into the steps it
    /// defers, and into an overlay's own chain, so both decide as the plan would.
    @Test func deferredStepsAndOverlaysKeepTheFacts() throws {
        let planned = try plan(["e_trim/if_!sale!_in_tags/c_scale,w_100/if_else/c_scale,w_50/if_end"], Self.source, asset: Self.shoes).outputs[0]
        guard case .deferred(let steps)? = planned.operations.last else {
            Issue.record("no deferred steps in \(planned.operations)")
            return
        }
        #expect(try Planner().operations(for: steps, input: Size(600, 400)).size == Size(100, 67))
        let layered = try plan(["l_logo/if_ctx:!productType!_eq_!shoes!/c_scale,w_10/if_end/fl_layer_apply"], Self.source, asset: Self.shoes).outputs[0]
        guard case .overlay(let overlay)? = layered.operations.first else {
            Issue.record("no overlay in \(layered.operations)")
            return
        }
        guard case .conditional(let c)? = overlay.chain.first, case .compare(let left, _, _) = c.condition else {
            Issue.record("no condition in \(overlay.chain)")
            return
        }
        #expect(left == .text("shoes"))
    }

    /// string → model → string, and JSON (the SDKs' spellings and the variable's `asset` field).
    @Test(arguments: [
        ("if_!sale!_in_tags/e_sepia/if_end", "if_!sale!_in_tags/e_sepia/if_end"),
        ("if_ctx:!productType!_eq_!shoes!,e_sepia", "if_ctx:!productType!_eq_!shoes!/e_sepia/if_end"),
        ("if_context:!a_b!_ne_!!/e_sepia/if_end", "if_ctx:!a_b!_ne_!!/e_sepia/if_end"),
        ("$x_ctx:!x_pos!_to_f,c_crop,w_100,h_100,x_$x_mul_w", "$x_ctx:!x_pos!_to_f/c_crop,w_100,h_100,g_north_west,x_$x_mul_w"),
        ("$foo_md:!bar!_to_i", "$foo_md:!bar!_to_i"),
        ("$t_tags/if_!a!_in_$t/e_sepia/if_end", "$t_tags/if_!a!_in_$t/e_sepia/if_end"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func jsonSpellingsHashAsTheStringDoes() throws {
        let string = try canonical(string: "$x_ctx:!x_pos!_to_f/if_!sale!_in_tags/e_sepia/if_end")
        let json = try canonical(json: #"[{"variable": {"name": "x", "asset": "ctx:!x_pos!_to_f"}}, {"if": {"condition": "!sale! in tags", "then": [{"sepia": true}]}}]"#)
        #expect(json.identity == string.identity)
        #expect(throws: ValidationError.self) { try canonical(json: #"[{"variable": {"name": "x", "asset": "ctx:x"}}]"#) }
        #expect(throws: ValidationError.self) { try canonical(json: #"[{"variable": {"name": "x", "asset": "tags", "text": "a"}}]"#) }
    }

    /// A job carries them in JSON, and writes them back; bad ones are refused with their path.
    @Test func jobsCarryTagsAndContext() throws {
        let job = try JSONChainDecoder().decodeJob(json: #"{"source": "/a.jpg", "outputs": [{"name": "o", "chain": "e_sepia"}], "tags": ["sale", "sale", "new"], "context": {"productType": "shoes"}}"#)
        #expect(job.asset == AssetFacts(tags: ["sale", "new"], context: ["productType": "shoes"]))
        #expect(try JSONChainDecoder().decodeJob(ChainEncoder.json(job)) == job)
        #expect(try JobResolver().resolve(job).asset == job.asset)
        let bad: [(String, String)] = [
            (#""tags": "sale""#, "tags: expected an array"),
            (#""tags": ["a,b"]"#, #"tags[0]: "a,b": a tag cannot hold ','"#),
            (#""tags": [""]"#, "tags[0]: a tag is empty"),
            (#""context": {"a=b": "c"}"#, #"context["a=b"]: "a=b": a context key cannot hold '=', '|' or '!'"#),
            (#""context": {"a": 1}"#, "context.a: expected a string, got number 1"),
            (#""context": ["a"]"#, "context: expected an object of texts"),
            ("\"tags\": [" + Array(repeating: #""a""#, count: 1001).joined(separator: ",") + "]", "tags: has 1001 tags; the limit is 1000"),
        ]
        for (field, message) in bad {
            do {
                _ = try JSONChainDecoder().decodeJob(json: #"{"source": "/a.jpg", "outputs": [{"name": "o", "chain": "e_sepia"}], \#(field)}"#)
                Issue.record("accepted \(field)")
            } catch {
                #expect(error.issues.contains { $0.description.hasPrefix(message) }, "\(field): \(error.issues.map(\.description))")
            }
        }
    }

    /// Conversions as Cloudinary's `to_f` and `to_i` read a text.
    @Test(arguments: [("12.5", 12.5, 12.0), ("-3.7x", -3.7, -3.0), ("abc", 0, 0), ("", 0, 0), (" 7", 7, 7), ("1.2.3", 1.2, 1)] as [(String, Double, Double)])
    func conversions(text: String, float: Double, integer: Double) {
        #expect(TextConversion.toFloat.apply(text) == float)
        #expect(TextConversion.toInteger.apply(text) == integer)
    }

    /// Inside arithmetic a value of the asset is still refused, saying how to use it.
    @Test func insideArithmeticItIsRefusedWithTheWayAround() {
        let issues = CloudinaryParser().parse("c_crop,w_100,h_100,x_ctx:!x!_mul_w").issues.map(\.description)
        #expect(issues.first?.contains("known to Cloudinary, not supported by Derive") == true)
        #expect(issues.first?.contains("assign it to a variable first") == true)
    }
}

/// `fl_getinfo` as an output setting: read, printed back, in JSON, and part of the identity.
@Suite struct GetInfoLanguageTests {
    @Test func readPrintedAndHashed() throws {
        let model = try canonical(string: "g_face,w_500,c_thumb,fl_getinfo")
        #expect(model.encoding.getInfo)
        try expectRoundTrip("g_face,w_500,c_thumb,fl_getinfo", printed: "c_thumb,w_500,g_face/fl_getinfo")
        #expect(try canonical(json: #"{"name": "a", "chain": "c_thumb,w_500,g_face", "getInfo": true}"#).identity == model.identity)
        #expect(try canonical(string: "g_face,w_500,c_thumb").identity != model.identity)
        #expect(CloudinaryParser().parse("fl_getinfo").issues.isEmpty)
    }
}
