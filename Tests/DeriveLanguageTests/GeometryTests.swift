@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// One row of the geometry table: a source size, a resize step (as a Cloudinary string), and
/// what the planner must produce.
struct GeometryCase: CustomTestStringConvertible, Sendable {
    var source: Size
    var chain: String
    var scaled: Size
    var window: ResizeLayout.Window?
    var canvas: (size: Size, x: Int, y: Int)?
    var output: Size

    var testDescription: String { "\(source) \(chain) → \(output)" }

    init(_ source: Size, _ chain: String, scaled: Size, crop: Rect? = nil, smart: (Size, SmartCrop)? = nil,
         canvas: (Size, Int, Int)? = nil, output: Size) {
        self.source = source
        self.chain = chain
        self.scaled = scaled
        self.window = crop.map { .rect($0) } ?? smart.map { .smart($0.0, $0.1) }
        self.canvas = canvas.map { (size: $0.0, x: $0.1, y: $0.2) }
        self.output = output
    }
}

let large = Size(4000, 3000)
let small = Size(400, 300)

func rect(_ x: Int, _ y: Int, _ w: Int, _ h: Int) -> Rect { Rect(x: x, y: y, width: w, height: h) }

@Suite struct GeometryTableTests {
    /// All twelve modes, reducing (4000x3000) and enlarging (400x300) sources, one and two dimensions.
    @Test(arguments: [
        // scale: both → exact box; one → the other follows the aspect
        GeometryCase(large, "c_scale,w_200,h_200", scaled: Size(200, 200), output: Size(200, 200)),
        GeometryCase(large, "c_scale,w_200", scaled: Size(200, 150), output: Size(200, 150)),
        GeometryCase(large, "c_scale,h_150", scaled: Size(200, 150), output: Size(200, 150)),
        GeometryCase(small, "c_scale,w_800", scaled: Size(800, 600), output: Size(800, 600)),
        GeometryCase(small, "c_scale,w_800,h_100", scaled: Size(800, 100), output: Size(800, 100)),
        // fit: kfit, may enlarge
        GeometryCase(large, "c_fit,w_200,h_200", scaled: Size(200, 150), output: Size(200, 150)),
        GeometryCase(small, "c_fit,w_800,h_800", scaled: Size(800, 600), output: Size(800, 600)),
        GeometryCase(small, "c_fit,h_600", scaled: Size(800, 600), output: Size(800, 600)),
        // limit: never enlarges
        GeometryCase(large, "c_limit,w_200,h_200", scaled: Size(200, 150), output: Size(200, 150)),
        GeometryCase(small, "c_limit,w_800,h_800", scaled: small, output: small),
        GeometryCase(small, "c_limit,w_200", scaled: Size(200, 150), output: Size(200, 150)),
        // mfit: only enlarges
        GeometryCase(large, "c_mfit,w_200,h_200", scaled: large, output: large),
        GeometryCase(small, "c_mfit,w_800,h_800", scaled: Size(800, 600), output: Size(800, 600)),
        // fill: kcov then crop at the gravity; one dimension is scale
        GeometryCase(large, "c_fill,w_200,h_200", scaled: Size(267, 200), crop: rect(33, 0, 200, 200), output: Size(200, 200)),
        GeometryCase(small, "c_fill,w_800,h_800", scaled: Size(1067, 800), crop: rect(133, 0, 800, 800), output: Size(800, 800)),
        GeometryCase(large, "c_fill,w_200", scaled: Size(200, 150), output: Size(200, 150)),
        GeometryCase(large, "c_fill,w_4000,h_3000", scaled: large, output: large),
        // lfill: as fill but never enlarges; result min(w, W·k) × min(h, H·k)
        GeometryCase(large, "c_lfill,w_200,h_200", scaled: Size(267, 200), crop: rect(33, 0, 200, 200), output: Size(200, 200)),
        GeometryCase(small, "c_lfill,w_800,h_800", scaled: small, output: small),
        GeometryCase(small, "c_lfill,w_800,h_200", scaled: small, crop: rect(0, 50, 400, 200), output: Size(400, 200)),
        GeometryCase(small, "c_lfill,w_800", scaled: small, output: small),
        // pad: kfit, then a w×h canvas at the gravity
        GeometryCase(large, "c_pad,w_200,h_200", scaled: Size(200, 150), canvas: (Size(200, 200), 0, 25), output: Size(200, 200)),
        GeometryCase(small, "c_pad,w_800,h_800", scaled: Size(800, 600), canvas: (Size(800, 800), 0, 100), output: Size(800, 800)),
        GeometryCase(large, "c_pad,w_200,h_200,g_south", scaled: Size(200, 150), canvas: (Size(200, 200), 0, 50), output: Size(200, 200)),
        GeometryCase(large, "c_pad,w_200", scaled: Size(200, 150), output: Size(200, 150)),
        // lpad: pad that never enlarges
        GeometryCase(large, "c_lpad,w_200,h_200", scaled: Size(200, 150), canvas: (Size(200, 200), 0, 25), output: Size(200, 200)),
        GeometryCase(small, "c_lpad,w_800,h_800", scaled: small, canvas: (Size(800, 800), 200, 250), output: Size(800, 800)),
        GeometryCase(small, "c_lpad,w_800,h_800,g_north_west", scaled: small, canvas: (Size(800, 800), 0, 0), output: Size(800, 800)),
        // mpad: a source larger than the box is left unscaled and unpadded
        GeometryCase(large, "c_mpad,w_200,h_200", scaled: large, output: large),
        GeometryCase(small, "c_mpad,w_800,h_800", scaled: Size(800, 600), canvas: (Size(800, 800), 0, 100), output: Size(800, 800)),
        // crop: no scaling, clamped to the image
        GeometryCase(large, "c_crop,w_200,h_200", scaled: large, crop: rect(1900, 1400, 200, 200), output: Size(200, 200)),
        GeometryCase(large, "c_crop,w_200,h_200,x_10,y_20", scaled: large, crop: rect(10, 20, 200, 200), output: Size(200, 200)),
        GeometryCase(small, "c_crop,w_800,h_800", scaled: small, output: small),
        GeometryCase(small, "c_crop,w_100", scaled: small, crop: rect(150, 0, 100, 300), output: Size(100, 300)),
        GeometryCase(large, "c_crop,w_200,h_200,x_3950,y_2990", scaled: large, crop: rect(3800, 2800, 200, 200), output: Size(200, 200)),
        // thumb and auto: fill with content-aware gravity
        GeometryCase(large, "c_thumb,w_200,h_200", scaled: Size(267, 200), smart: (Size(200, 200), .auto), output: Size(200, 200)),
        GeometryCase(large, "c_thumb,w_200,h_200,g_north", scaled: Size(267, 200), crop: rect(33, 0, 200, 200), output: Size(200, 200)),
        GeometryCase(small, "c_auto,w_800,h_800", scaled: Size(1067, 800), smart: (Size(800, 800), .auto), output: Size(800, 800)),
        GeometryCase(small, "c_auto,w_800,h_800,g_entropy", scaled: Size(1067, 800), smart: (Size(800, 800), .entropy), output: Size(800, 800)),
        // fractions of the input
        GeometryCase(large, "c_scale,w_0.5", scaled: Size(2000, 1500), output: Size(2000, 1500)),
        GeometryCase(large, "c_fill,w_0.5,h_0.25", scaled: Size(2000, 1500), crop: rect(0, 375, 2000, 750), output: Size(2000, 750)),
        GeometryCase(small, "c_fit,w_1.5,h_1.5", scaled: Size(600, 450), output: Size(600, 450)),
        // ar with one dimension, and ar alone (largest inner box to crop, smallest outer box to pad)
        GeometryCase(large, "c_fill,w_1600,ar_16:9", scaled: Size(1600, 1200), crop: rect(0, 150, 1600, 900), output: Size(1600, 900)),
        GeometryCase(large, "c_fill,h_900,ar_1.0", scaled: Size(1200, 900), crop: rect(150, 0, 900, 900), output: Size(900, 900)),
        GeometryCase(large, "c_fill,ar_1:1", scaled: large, crop: rect(500, 0, 3000, 3000), output: Size(3000, 3000)),
        GeometryCase(large, "c_crop,ar_2:1,g_north", scaled: large, crop: rect(0, 0, 4000, 2000), output: Size(4000, 2000)),
        GeometryCase(large, "c_pad,ar_1:1", scaled: large, canvas: (Size(4000, 4000), 0, 500), output: Size(4000, 4000)),
        GeometryCase(small, "c_scale,w_200,ar_2", scaled: Size(200, 100), output: Size(200, 100)),
        // dpr multiplies w and h
        GeometryCase(large, "c_fill,w_100,h_100,dpr_2.0", scaled: Size(267, 200), crop: rect(33, 0, 200, 200), output: Size(200, 200)),
        GeometryCase(large, "c_scale,w_100,dpr_1.5", scaled: Size(150, 113), output: Size(150, 113)),
        // rounding to the nearest pixel, never below 1
        GeometryCase(Size(1001, 667), "c_scale,w_500", scaled: Size(500, 333), output: Size(500, 333)),
        GeometryCase(Size(5000, 10), "c_scale,w_100", scaled: Size(100, 1), output: Size(100, 1)),
    ])
    func resizeModes(_ c: GeometryCase) throws {
        let steps = try canonical(string: c.chain).chain
        guard case .resize(let resize)? = steps.first else {
            Issue.record("no resize in \(c.chain)")
            return
        }
        let layout = ResizeGeometry.layout(resize, input: c.source)
        #expect(layout.scaled == c.scaled)
        #expect(layout.window == c.window)
        #expect(layout.canvas?.size == c.canvas?.size)
        #expect(layout.canvas?.origin.x == c.canvas?.x && layout.canvas?.origin.y == c.canvas?.y)
        #expect(layout.output == c.output)

        // The planner produces exactly that size.
        let plan = try Planner().plan(ResolvedJob(source: nil, outputs: [canonical(string: c.chain)], preset: nil),
                                      source: SourceFacts(format: .jpeg, width: c.source.width, height: c.source.height))
        #expect(plan.outputs[0].size == c.output)
    }

    /// All nine compass gravities, without and with offsets (which point away from the anchored edge).
    @Test(arguments: [
        ("north_west", rect(0, 0, 200, 100), rect(10, 20, 200, 100)),
        ("north", rect(400, 0, 200, 100), rect(410, 20, 200, 100)),
        ("north_east", rect(800, 0, 200, 100), rect(790, 20, 200, 100)),
        ("west", rect(0, 350, 200, 100), rect(10, 370, 200, 100)),
        ("center", rect(400, 350, 200, 100), rect(410, 370, 200, 100)),
        ("east", rect(800, 350, 200, 100), rect(790, 370, 200, 100)),
        ("south_west", rect(0, 700, 200, 100), rect(10, 680, 200, 100)),
        ("south", rect(400, 700, 200, 100), rect(410, 680, 200, 100)),
        ("south_east", rect(800, 700, 200, 100), rect(790, 680, 200, 100)),
    ])
    func compassGravities(gravity: String, plain: Rect, offset: Rect) throws {
        let source = Size(1000, 800)
        for (chain, expected) in [("c_crop,w_200,h_100,g_\(gravity)", plain), ("c_crop,w_200,h_100,g_\(gravity),x_10,y_20", offset)] {
            guard case .resize(let r)? = try canonical(string: chain).chain.first else { Issue.record("\(chain) is not a resize"); continue }
            #expect(ResizeGeometry.layout(r, input: source).window == .rect(expected), "\(chain)")
        }
        // Fractional offsets are fractions of the image being cut.
        guard case .resize(let r)? = try canonical(string: "c_crop,w_200,h_100,g_\(gravity),x_0.01,y_0.025").chain.first else {
            Issue.record("not a resize")
            return
        }
        #expect(ResizeGeometry.layout(r, input: source).window == .rect(offset))
    }

    @Test(arguments: [
        ("c_crop,w_200,h_100,g_xy_center,x_0.25,y_0.75", rect(150, 550, 200, 100)),
        ("c_crop,w_200,h_100,g_xy_center,x_0.0,y_0.0", rect(0, 0, 200, 100)),
        ("c_crop,w_200,h_100,g_xy_center,x_1.0,y_1.0", rect(800, 700, 200, 100)),
        ("c_crop,w_200,h_100,g_xy_center,x_900,y_100", rect(800, 50, 200, 100)),
        // focal points in pixels are in the step's input, so they scale with a fill
        ("c_fill,w_100,h_100,g_xy_center,x_900,y_400", rect(25, 0, 100, 100)),
    ])
    func focalPoints(chain: String, expected: Rect) throws {
        guard case .resize(let r)? = try canonical(string: chain).chain.first else { Issue.record("\(chain) is not a resize"); return }
        #expect(ResizeGeometry.layout(r, input: Size(1000, 800)).window == .rect(expected))
    }

    @Test func rotationsGrowTheCanvasToTheBoundingBox() {
        #expect(ResizeGeometry.rotatedSize(Size(400, 300), degrees: 90) == Size(300, 400))
        #expect(ResizeGeometry.rotatedSize(Size(400, 300), degrees: 180) == Size(400, 300))
        #expect(ResizeGeometry.rotatedSize(Size(400, 300), degrees: 45) == Size(495, 495))
        #expect(ResizeGeometry.rotatedSize(Size(100, 100), degrees: 30) == Size(137, 137))
    }
}
