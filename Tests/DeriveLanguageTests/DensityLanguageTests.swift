@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `dn_<dpi>` (issue 16): an output setting, in strings and JSON, that rasterises vector and
/// page sources at that density and records it as the output's resolution.
@Suite struct DensityLanguageTests {

    @Test func stringAndJSONMeanTheSameOutput() throws {
        let string = try canonical(string: "c_scale,w_100/dn_300")
        let json = try canonical(json: #"{"name": "default", "chain": [{"resize": {"width": 100}}], "density": 300}"#)
        #expect(string.identity == json.identity)
        #expect(string.encoding.density == 300)
        #expect(try canonical(string: "c_scale,w_100").identity != string.identity)
    }

    @Test(arguments: [("dn_150", "dn_150"), ("c_scale,w_100/dn_300", "c_scale,w_100/dn_300"), ("dn_72,f_png", "f_png,dn_72")])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("dn_2000", "dn_2000: known to Cloudinary, not supported by Derive: beyond Derive's limits: dn must be between 1 and 1200, got 2000"),
        ("dn_0", "dn_0: out of Cloudinary's range (dn must be between 1 and 1200, got 0)"),
        ("dn_high", #"dn_high: unknown to Cloudinary (dn must be whole dots per inch (dn_300), got "high")"#),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues == [reason], "\(issues)")
    }

    /// A vector source's chain starts from its size at the density (its header's is at 72 dpi),
    /// and the decode follows; a raster source's pixels are what they are.
    @Test func aVectorSourceIsRasterisedAtTheDensity() throws {
        let svg = SourceFacts(format: .svg, width: 200, height: 100)
        let at144 = try plan(["dn_144"], svg)
        #expect(at144.outputs[0].size == Size(400, 200) && at144.decode.size == Size(400, 200))
        let scaled = try plan(["c_scale,w_iw_div_2/dn_144"], svg)
        #expect(scaled.outputs[0].size == Size(200, 100))
        let jpeg = try plan(["dn_300"], SourceFacts(format: .jpeg, width: 200, height: 100))
        #expect(jpeg.outputs[0].size == Size(200, 100) && jpeg.outputs[0].operations.isEmpty)
        #expect(jpeg.outputs[0].encoding.density == 300)
        // Rasterised past the pixel limits: refused naming the density.
        #expect(planRefusal("dn_1200", SourceFacts(format: .pdf, width: 2000, height: 2000)).first?.reason.hasPrefix("dn_1200: known to Cloudinary, not supported by Derive: beyond Derive's limits: rasterises the pdf at 33333x33333") == true)
    }
}
