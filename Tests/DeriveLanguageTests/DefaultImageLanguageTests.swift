@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `d_<image>` (issue 16, item 3): an output setting naming the image an output is made from
/// when the job's source does not exist. String and JSON forms, round trips, refusals, and
/// when a job has one.
@Suite struct DefaultImageLanguageTests {
    @Test func stringAndJSONMeanTheSameOutput() throws {
        let string = try canonical(string: "c_scale,w_100/d_brand:avatar.png")
        let json = try canonical(json: #"{"name": "default", "chain": [{"resize": {"width": 100}}], "defaultImage": "brand/avatar.png"}"#)
        #expect(string.identity == json.identity && string.encoding.defaultImage == "brand/avatar.png")
        #expect(try canonical(string: "c_scale,w_100").identity != string.identity)
    }

    @Test(arguments: [("d_avatar.png", "d_avatar.png"), ("c_scale,w_100,d_brand:avatar", "c_scale,w_100/d_brand:avatar")])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: ["d_a%20b", "d_..:x", "d_a::b", "d_:a"])
    func malformedNamesAreRefused(text: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.count == 1 && issues[0].contains("unknown to Cloudinary (a default image is a name such as d_avatar.png or d_folder:avatar)"), "\(issues)")
    }

    /// One source is decoded per job: the default stands in only when every output names the
    /// same one.
    @Test func aJobHasADefaultWhenEveryOutputNamesTheSame() throws {
        func job(_ chains: [String]) throws -> ResolvedJob {
            try JobResolver().resolve(JobSpec(source: nil, outputs: chains.enumerated().map { try TransformationInput.output(named: "o\($0.offset)", transformation: $0.element) }))
        }
        #expect(try job(["c_scale,w_10/d_a.png", "c_scale,w_20/d_a.png"]).defaultImage == "a.png")
        #expect(try job(["c_scale,w_10/d_a.png", "c_scale,w_20"]).defaultImage == nil)
        #expect(try job(["c_scale,w_10/d_a.png", "c_scale,w_20/d_b.png"]).defaultImage == nil)
        #expect(try job(["c_scale,w_10"]).defaultImage == nil)
    }
}
