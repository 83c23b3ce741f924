import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// Blend modes and effects beside `fl_layer_apply` on real photographs: the coffee photo as a
/// 60x60 layer in the top-left corner of Grace Hopper (fitted into 120x120). Inside the layer's
/// square the mode decides; outside it the image must not change (except for a mask, which
/// keeps nothing there).
@Suite struct LayerBlendTests {
    static let square = Rect(x: 0, y: 0, width: 60, height: 60)

    static func render(_ apply: String) throws -> PixelBuffer {
        let (loader, folder) = try UnderlayTests.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        let layer = apply.isEmpty ? "" : "/l_bg/c_fill,w_60,h_60/\(apply)"
        let (_, result) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120\(layer)/f_png", overlays: loader)
        return try Harness.pixels(result.outputs[0].data)
    }

    static func inside(_ x: Int, _ y: Int) -> Bool { x < square.width && y < square.height }

    /// Every pixel of `a` and `b` compared by `check`, split by whether it is in the square.
    static func count(_ a: PixelBuffer, _ b: PixelBuffer, inSquare: Bool, _ check: ([Int], [Int]) -> Bool) -> (hits: Int, of: Int) {
        var hits = 0, total = 0
        for y in 0..<a.height {
            for x in 0..<a.width where inside(x, y) == inSquare {
                total += 1
                if check(Harness.pixel(a, x, y), Harness.pixel(b, x, y)) { hits += 1 }
            }
        }
        return (hits, total)
    }

    static func rgb(_ p: [Int]) -> [Int] { Array(p.prefix(3)) }
    static func alpha(_ p: [Int]) -> Int { p.count == 4 ? p[3] : 255 }

    @Test(arguments: [("e_multiply", -1), ("e_screen", 1)])
    func multiplyDarkensAndScreenLightensOnlyUnderTheLayer(mode: String, direction: Int) throws {
        let plain = try Self.render(""), blended = try Self.render("\(mode),fl_layer_apply,g_north_west")
        let over = try Self.render("fl_layer_apply,g_north_west")
        #expect(blended.width == plain.width && blended.height == plain.height)
        // Outside the layer every pixel is the photo's.
        let outside = Self.count(blended, plain, inSquare: false) { Self.rgb($0) == Self.rgb($1) }
        #expect(outside.hits == outside.of, "\(mode): \(outside.of - outside.hits) pixels outside the layer changed")
        // Inside, each channel moves one way only from the photo (multiply darkens, screen lightens)...
        let oneWay = Self.count(blended, plain, inSquare: true) { b, p in (0..<3).allSatisfy { (b[$0] - p[$0]) * direction >= -1 } }
        #expect(oneWay.hits == oneWay.of, "\(mode): \(oneWay.of - oneWay.hits) pixels moved the wrong way")
        // ...and it is neither the photo nor the layer drawn over it.
        let changed = Self.count(blended, plain, inSquare: true) { b, p in (0..<3).contains { abs(b[$0] - p[$0]) > 8 } }
        #expect(changed.hits > changed.of / 2, "\(mode): only \(changed.hits) of \(changed.of) pixels changed")
        let notOver = Self.count(blended, over, inSquare: true) { b, o in Self.rgb(b) != Self.rgb(o) }
        #expect(notOver.hits > notOver.of / 2)
    }

    /// overlay: the photo's darks darker and lights lighter under the layer.
    @Test func overlayChangesOnlyUnderTheLayer() throws {
        let plain = try Self.render(""), blended = try Self.render("e_overlay,fl_layer_apply,g_north_west")
        let outside = Self.count(blended, plain, inSquare: false) { Self.rgb($0) == Self.rgb($1) }
        #expect(outside.hits == outside.of)
        let changed = Self.count(blended, plain, inSquare: true) { b, p in (0..<3).contains { abs(b[$0] - p[$0]) > 8 } }
        #expect(changed.hits > changed.of / 2, "only \(changed.hits) of \(changed.of) pixels changed")
    }

    /// mask keeps the photo under the (opaque) layer and nothing elsewhere; cut_out the reverse.
    @Test func maskKeepsAndCutOutRemovesTheLayersShape() throws {
        let plain = try Self.render("")
        let masked = try Self.render("e_mask,fl_layer_apply,g_north_west")
        let cut = try Self.render("e_cut_out,fl_layer_apply,g_north_west")
        #expect(masked.bands == 4 && cut.bands == 4)
        let keptInside = Self.count(masked, plain, inSquare: true) { m, p in Self.alpha(m) == 255 && Self.rgb(m) == Self.rgb(p) }
        #expect(keptInside.hits == keptInside.of, "mask: \(keptInside.of - keptInside.hits) pixels under the layer changed")
        let goneOutside = Self.count(masked, plain, inSquare: false) { m, _ in Self.alpha(m) == 0 }
        #expect(goneOutside.hits == goneOutside.of, "mask: \(goneOutside.of - goneOutside.hits) pixels outside kept")
        let holeInside = Self.count(cut, plain, inSquare: true) { c, _ in Self.alpha(c) == 0 }
        #expect(holeInside.hits == holeInside.of, "cut_out: \(holeInside.of - holeInside.hits) pixels under the layer kept")
        let keptOutside = Self.count(cut, plain, inSquare: false) { c, p in Self.alpha(c) == 255 && Self.rgb(c) == Self.rgb(p) }
        #expect(keptOutside.hits == keptOutside.of)
    }

    /// `l_bg,c_fill,w_60,h_60,fl_layer_apply,g_north_west` in one component draws what the
    /// two-component form draws: the coffee layer in the corner, the photo elsewhere.
    @Test func oneComponentLayerApplyDrawsWhatTwoComponentsDraw() throws {
        let (loader, folder) = try UnderlayTests.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        func render(_ chain: String) throws -> PixelBuffer {
            try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/\(chain)/f_png", overlays: loader).1.outputs[0].data)
        }
        let plain = try Self.render("")
        let one = try render("l_bg,c_fill,w_60,h_60,fl_layer_apply,g_north_west")
        let two = try render("l_bg/c_fill,w_60,h_60/fl_layer_apply,g_north_west")
        #expect(one.pixels == two.pixels && one.width == two.width)
        let inside = Self.count(one, plain, inSquare: true) { Self.rgb($0) != Self.rgb($1) }
        #expect(inside.hits > inside.of / 2, "the layer is not drawn: \(inside.hits) of \(inside.of)")
        let outside = Self.count(one, plain, inSquare: false) { Self.rgb($0) == Self.rgb($1) }
        #expect(outside.hits == outside.of)
    }

    /// `e_sepia,fl_layer_apply` turns the layer sepia and leaves the photo around it alone, as
    /// `/e_sepia` after the layer does not.
    @Test func anEffectBesideTheFlagChangesTheLayerOnly() throws {
        let over = try Self.render("fl_layer_apply,g_north_west")
        let sepiaLayer = try Self.render("e_sepia,fl_layer_apply,g_north_west")
        let sepiaAll = try Self.render("fl_layer_apply,g_north_west/e_sepia")
        let outside = Self.count(sepiaLayer, over, inSquare: false) { Self.rgb($0) == Self.rgb($1) }
        #expect(outside.hits == outside.of, "\(outside.of - outside.hits) pixels outside the layer changed")
        let insideSame = Self.count(sepiaLayer, sepiaAll, inSquare: true) { s, a in (0..<3).allSatisfy { abs(s[$0] - a[$0]) <= 2 } }
        #expect(insideSame.hits > insideSame.of * 9 / 10, "the layer is not sepia: \(insideSame.hits) of \(insideSame.of)")
        let outsideAll = Self.count(sepiaAll, over, inSquare: false) { Self.rgb($0) != Self.rgb($1) }
        #expect(outsideAll.hits > outsideAll.of / 2)
    }
}

/// `e_anti_removal` and `fl_cutter` on the same photographs: the coffee layer distorted where it
/// lies, and Grace Hopper cut to the layer's shape and size.
@Suite struct AntiRemovalAndCutterTests {
    static func render(_ chain: String) throws -> PixelBuffer {
        let (loader, folder) = try UnderlayTests.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        return try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/\(chain)/f_png", overlays: loader).1.outputs[0].data)
    }

    /// Mean absolute difference of the colour channels inside the layer's square.
    static func differenceInside(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        var sum = 0, n = 0
        for y in 0..<60 { for x in 0..<60 { for c in 0..<3 { sum += abs(Harness.pixel(a, x, y)[c] - Harness.pixel(b, x, y)[c]); n += 1 } } }
        return Double(sum) / Double(n)
    }

    /// The layer is drawn where it was, slightly moved about: not the layer as it is, more so
    /// at a higher level, the same every time, and nothing outside its square changes.
    @Test(arguments: [("e_anti_removal", 1.0), ("e_anti_removal:100", 2.0)])
    func antiRemovalDistortsTheLayerOnly(effect: String, atLeast: Double) throws {
        let plain = try LayerBlendTests.render("")
        let over = try Self.render("l_bg/c_fill,w_60,h_60/fl_layer_apply,g_north_west")
        let distorted = try Self.render("l_bg/c_fill,w_60,h_60/\(effect),fl_layer_apply,g_north_west")
        let again = try Self.render("l_bg/c_fill,w_60,h_60/\(effect),fl_layer_apply,g_north_west")
        #expect(distorted.pixels == again.pixels, "not deterministic")
        let outside = LayerBlendTests.count(distorted, plain, inSquare: false) { LayerBlendTests.rgb($0) == LayerBlendTests.rgb($1) }
        #expect(outside.hits == outside.of, "\(outside.of - outside.hits) pixels outside the layer changed")
        let moved = Self.differenceInside(distorted, over)
        #expect(moved >= atLeast, "\(effect): the layer moved by \(moved) on average")
        // Still the layer: much nearer it than the photo it covers.
        #expect(moved < Self.differenceInside(plain, over) / 2)
        let level10 = try Self.render("l_bg/c_fill,w_60,h_60/e_anti_removal:10,fl_layer_apply,g_north_west")
        #expect(Self.differenceInside(level10, over) < moved)
    }

    /// fl_cutter keeps the photo under the layer's opaque pixels, cut to the layer's 60x60:
    /// the round layer's corners are transparent, its middle is the photo's, where it lay.
    @Test(arguments: [("g_north_west", false), ("g_south_east", true)])
    func cutterKeepsThePhotoInTheLayersShapeAndSize(gravity: String, farCorner: Bool) throws {
        let plain = try LayerBlendTests.render("")
        let (x, y) = farCorner ? (plain.width - 60, plain.height - 60) : (0, 0)
        let cut = try Self.render("l_bg/c_fill,w_60,h_60/r_max/fl_cutter,fl_layer_apply,\(gravity)")
        #expect(cut.width == 60 && cut.height == 60 && cut.bands == 4)
        #expect(LayerBlendTests.alpha(Harness.pixel(cut, 1, 1)) == 0 && LayerBlendTests.alpha(Harness.pixel(cut, 58, 58)) == 0)
        var same = 0, total = 0
        for py in 20..<40 {
            for px in 20..<40 {
                total += 1
                let c = Harness.pixel(cut, px, py)
                if LayerBlendTests.alpha(c) == 255 && LayerBlendTests.rgb(c) == LayerBlendTests.rgb(Harness.pixel(plain, px + x, py + y)) { same += 1 }
            }
        }
        #expect(same == total, "\(total - same) pixels in the middle are not the photo's")
    }

    /// Steps after the cutter apply to the cut image, whose size the engine learns then.
    @Test func stepsAfterTheCutterSeeItsSize() throws {
        let cut = try Self.render("l_bg/c_fill,w_60,h_60/fl_cutter,fl_layer_apply/c_scale,w_0.5")
        #expect(cut.width == 30 && cut.height == 30)
    }
}

/// `fl_tiled`: the coffee photo as a 30x30 tile over the whole of Grace Hopper.
@Suite struct TiledLayerTests {
    @Test func theLayerRepeatsAcrossTheWholeImage() throws {
        let (loader, folder) = try UnderlayTests.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        func render(_ chain: String) throws -> PixelBuffer {
            try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/\(chain)/f_png", overlays: loader).1.outputs[0].data)
        }
        let tiled = try render("l_bg/c_fill,w_30,h_30/fl_layer_apply,fl_tiled,g_north_west")
        let once = try render("l_bg/c_fill,w_30,h_30/fl_layer_apply,g_north_west")
        #expect(tiled.width == once.width && tiled.height == once.height)
        // Every pixel is the tile's: the top-left tile repeats every 30 px both ways.
        var periodic = 0, total = 0
        for y in 0..<tiled.height {
            for x in 0..<tiled.width {
                total += 1
                if Harness.pixel(tiled, x, y).prefix(3) == Harness.pixel(tiled, x % 30, y % 30).prefix(3) { periodic += 1 }
            }
        }
        #expect(periodic == total, "\(total - periodic) pixels break the tiling")
        // The single layer covers its corner only: far from it, the photo.
        #expect(Harness.pixel(once, 80, 100).prefix(3) != Harness.pixel(tiled, 80, 100).prefix(3))
        #expect(Harness.pixel(once, 10, 10).prefix(3) == Harness.pixel(tiled, 10, 10).prefix(3))
    }
}
