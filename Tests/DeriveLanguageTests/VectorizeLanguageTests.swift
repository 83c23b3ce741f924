@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// e_vectorize's tracing settings (Cloudinary's detail, despeckle, paths, corners) and f_svg:
/// read by name and by position, printed back in the named form, mapped onto potrace's
/// settings, and the chains an SVG output cannot be made from refused with their reason.
@Suite struct VectorizeLanguageTests {
    @Test(arguments: [
        ("e_vectorize:colors:15:detail:200:despeckle:0.2", "e_vectorize:colors:15:detail:200:despeckle:0.2"),
        ("e_vectorize:5:0.5:4:80:50", "e_vectorize:colors:5:detail:0.5:despeckle:4:paths:80:corners:50"),
        ("e_vectorize:detail:1.0", "e_vectorize:detail:1.0"),
        ("e_vectorize:corners:0:paths:0", "e_vectorize:paths:0:corners:0"),
        // Cloudinary's defaults written out are the plain effect, with its identity.
        ("e_vectorize:colors:10:detail:300:despeckle:2:paths:100:corners:25", "e_vectorize"),
        ("e_vectorize:6::::", "e_vectorize:6"),
        ("e_vectorize:3,f_svg", "e_vectorize:3/f_svg"),
        ("c_scale,w_400/e_vectorize:colors:4:despeckle:10/f_svg", "c_scale,w_400/e_vectorize:colors:4:despeckle:10/f_svg"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func jsonSaysTheSame() throws {
        let json = #"{"outputs": [{"name": "o", "format": "svg", "chain": [{"vectorize": {"colors": 6, "detail": 0.5, "despeckle": 4, "paths": 80, "corners": 60}}]}]}"#
        #expect(try canonical(json: json).identity == canonical(string: "e_vectorize:colors:6:detail:0.5:despeckle:4:paths:80:corners:60/f_svg").identity)
        // The defaults leave the identity of the plain effect alone.
        let defaults = #"{"outputs": [{"name": "o", "chain": [{"vectorize": {"colors": 10, "detail": 300, "corners": 25}}]}]}"#
        #expect(try canonical(json: defaults).identity == canonical(json: #"{"outputs": [{"name": "o", "chain": [{"vectorize": true}]}]}"#).identity)
    }

    @Test(arguments: [
        ("e_vectorize:colors:8:detail:2000", "detail must be between 0 and 1000, got 2000"),
        ("e_vectorize:colors:8:detail:1.5", "a fraction must be between 0.0 and 1.0"),
        ("e_vectorize:colors:8:despeckle:101", "despeckle must be between 0 and 100, got 101"),
        ("e_vectorize:colors:8:paths:x", "e_vectorize's paths is a whole number from 0 to 100, got \"x\""),
        ("e_vectorize:colors:8:corners:-1", "corners must be between 0 and 100, got -1"),
        ("e_vectorize:colors:8:detail:abc", "e_vectorize's detail is whole pixels (0 to 1000) or a fraction"),
        ("e_vectorize:colors:8:shape:3", "e_vectorize's settings are colors, detail, despeckle, paths and corners"),
        ("e_vectorize:1:2:3:4:5:6", "e_vectorize takes at most five settings"),
        ("e_vectorize:colors:31", "between 2 and 30, got 31"),
        ("e_vectorize:colors:1", "between 2 and 30, got 1"),
    ])
    func badSettingsAreRefused(text: String, reason: String) {
        #expect(throws: (any Error).self) { try canonical(string: text) }
        do {
            _ = try canonical(string: text)
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
    }

    /// Cloudinary's defaults land on potrace's own (turdsize 2, alphamax 1, opttolerance 0.2),
    /// the bitmap is at most the detail (never an upscale), and each setting moves its own knob.
    @Test func settingsMapOntoPotrace() {
        let plain = VectorTrace().parameters(for: Size(600, 400))
        #expect(plain.size == Size(300, 200) && plain.turdsize == 2)
        #expect(abs(plain.alphamax - 1) < 0.001 && abs(plain.opttolerance - 0.2) < 1e-9)
        #expect(VectorTrace(detail: .fraction(0.5)).parameters(for: Size(600, 400)).size == Size(300, 200))
        #expect(VectorTrace(detail: .pixels(1000)).parameters(for: Size(4608, 3456)).size == Size(1000, 750))
        #expect(VectorTrace(detail: .pixels(1000)).parameters(for: Size(600, 400)).size == Size(600, 400))
        #expect(VectorTrace(detail: .fraction(1)).parameters(for: Size(5000, 100)).size == Size(1000, 20))
        #expect(VectorTrace(detail: .pixels(0)).parameters(for: Size(600, 400)).size == Size(8, 5))
        #expect(VectorTrace(despeckle: .pixels(40)).parameters(for: Size(600, 400)).turdsize == 40)
        #expect(VectorTrace(despeckle: .fraction(0.1)).parameters(for: Size(600, 400)).turdsize == 900)
        #expect(VectorTrace(corners: 100).parameters(for: Size(600, 400)).alphamax == 0)
        #expect(abs(VectorTrace(corners: 0).parameters(for: Size(600, 400)).alphamax - 4.0 / 3.0) < 1e-9)
        #expect(abs(VectorTrace(paths: 0).parameters(for: Size(600, 400)).opttolerance - 1) < 1e-9)
    }

    static func plan(_ chain: String, source: ImageFormat = .jpeg) throws -> Plan {
        try Planner().plan(JobResolver().resolve(TransformationInput.parse(chain)), source: SourceFacts(format: source, width: 1200, height: 800))
    }

    @Test func svgOutputsArePlannedWithVectorizeLast() throws {
        let plan = try Self.plan("c_scale,w_600/e_vectorize:colors:5:detail:0.5/f_svg")
        #expect(plan.outputs[0].encoding.format == .svg && plan.outputs[0].size == Size(600, 400))
        guard case .effect(.vectorize(.value(5), let trace))? = plan.outputs[0].operations.last else {
            Issue.record("\(plan.outputs[0].operations)")
            return
        }
        #expect(trace.detail == .fraction(0.5))
        #expect(plan.outputs[0].notes.isEmpty, "\(plan.outputs[0].notes)")
    }

    @Test(arguments: [
        ("c_scale,w_600/f_svg", "f_svg: known to Cloudinary, not supported by Derive without e_vectorize: Derive writes SVG only by tracing an image with e_vectorize", ImageFormat.jpeg),
        ("e_vectorize:4/e_sepia/f_svg", "f_svg: known to Cloudinary, not supported by Derive with steps after e_vectorize: e_vectorize must be the chain's last step", .jpeg),
        ("e_vectorize:4/c_scale,w_300/f_svg", "f_svg: known to Cloudinary, not supported by Derive with steps after e_vectorize: e_vectorize must be the chain's last step", .jpeg),
        ("f_svg", "an SVG source is not delivered as SVG", .svg),
    ])
    func svgWithoutVectorizeIsRefused(chain: String, reason: String, source: ImageFormat) {
        #expect { try Self.plan(chain, source: source) } throws: { "\($0)".contains(reason) }
    }

    @Test func svgHasNoBreakpoints() throws {
        let json = #"{"outputs": [{"name": "o", "format": "svg", "breakpoints": {"minWidth": 100, "maxWidth": 800, "step": 200}, "chain": [{"vectorize": 4}]}]}"#
        let job = try JobResolver().resolve(TransformationInput.parse(json))
        #expect { try Planner().plan(job, source: SourceFacts(format: .jpeg, width: 1200, height: 800)) } throws: {
            "\($0)".contains("an SVG scales to any width")
        }
    }

    /// A raster output has no paths to shape: the settings are kept in the identity but the
    /// plan's notes say they are not used.
    @Test func rasterOutputsNoteTheTraceSettings() throws {
        let plan = try Self.plan("e_vectorize:colors:5:detail:200/f_png")
        #expect(plan.outputs[0].notes.contains { $0.contains("shape the paths of an f_svg output; this output is png") }, "\(plan.outputs[0].notes)")
        #expect(try Self.plan("e_vectorize:5/f_png").outputs[0].notes.isEmpty)
    }
}

/// The quantiser and the document, without an image library.
@Suite struct VectorDocumentTests {
    /// Three exact colours come back exactly, most pixels first; colours asked for beyond the
    /// image's own are dropped; transparent pixels belong to no colour.
    @Test func quantiserFindsExactColours() throws {
        let red: [UInt8] = [200, 10, 10, 255], blue: [UInt8] = [10, 20, 220, 255], white: [UInt8] = [250, 250, 250, 255]
        let clear: [UInt8] = [0, 0, 0, 0]
        var pixels: [UInt8] = []
        for (colour, count) in [(white, 50), (red, 30), (blue, 15), (clear, 5)] {
            for _ in 0..<count { pixels += colour }
        }
        for k in [3, 8, 30] {
            let q = try ColorQuantizer.quantize(pixels, bands: 4, colors: k)
            let expected: [ColorQuantizer.RGB] = [.init(250, 250, 250), .init(200, 10, 10), .init(10, 20, 220)]
            #expect(q.palette == expected, "k \(k)")
            #expect(q.counts == [50, 30, 15])
            #expect(q.indices.filter { $0 == ColorQuantizer.Quantized.transparent }.count == 5)
        }
        let two = try ColorQuantizer.quantize(pixels, bands: 4, colors: 2)
        #expect(two.palette.count == 2 && two.counts.reduce(0, +) == 95)
        // More bands than colour and alpha is an error, not a trap.
        #expect(throws: DeriveError.self) { try ColorQuantizer.quantize([1, 2, 3, 4, 5], bands: 5, colors: 2) }
    }

    @Test func documentWritesOnePathPerLayer() throws {
        let square = VectorDocument.Curve(segments: [
            .corner(.init(0, 0), end: .init(5, 0)), .corner(.init(10, 0), end: .init(10, 5)),
            .corner(.init(10, 10), end: .init(5, 10)), .curve(.init(0, 10), .init(0, 7.25), end: .init(0, 5)),
        ])
        let doc = VectorDocument(size: Size(200, 100), traced: Size(20, 10), layers: [
            .init(color: .init(255, 0, 0), curves: [square]), .init(color: .init(0, 0, 255), curves: []),
        ])
        let svg = try doc.svg()
        #expect(svg.contains(#"width="200" height="100" viewBox="0 0 20 10""#))
        #expect(svg.contains(##"<path fill="#ff0000" fill-rule="evenodd" d="M0,5L0,0L5,0L10,0L10,5L10,10L5,10C0,10 0,7.3 0,5Z"/>"##), "\(svg)")
        #expect(!svg.contains("#0000ff"), "an empty layer draws no path")
        #expect(VectorDocument.number(-0.04) == "0" && VectorDocument.number(-1.25) == "-1.3" && VectorDocument.number(12) == "12")
    }

    @Test func tooManyPathsAreRefused() {
        let dot = VectorDocument.Curve(segments: [.corner(.init(0, 0), end: .init(1, 1))])
        let doc = VectorDocument(size: Size(10, 10), traced: Size(10, 10),
                                 layers: [.init(color: .init(0, 0, 0), curves: Array(repeating: dot, count: VectorDocument.maxCurves + 1))])
        #expect { try doc.svg() } throws: {
            ($0 as? DeriveError)?.code == .limitExceeded && "\($0)".contains("lower e_vectorize's detail or colors, or raise its despeckle")
        }
    }
}
