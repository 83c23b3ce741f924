import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_shear` and `e_shadow` on a real photograph (Grace Hopper fitted into 120x120, opaque):
/// the canvas grows to the planned size, what is new is transparent or shadow, and the photo
/// itself is still there, unchanged where the effect does not touch it.
@Suite struct ShapeEffectTests {
    static func render(_ effect: String?) throws -> (PixelBuffer, Size?) {
        let (plan, result) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120\(effect.map { "/" + $0 } ?? "")/f_png")
        return (try Harness.pixels(result.outputs[0].data), plan.outputs[0].size)
    }

    static func alpha(_ p: PixelBuffer, _ x: Int, _ y: Int) -> Int { p.bands == 4 ? Harness.pixel(p, x, y)[3] : 255 }

    /// A shear along x by 20° widens by tan 20° x height, leaves the top-right and bottom-left
    /// corners transparent, and keeps the photo's middle row's colours in order (shifted).
    @Test(arguments: [(20, 0), (-20, 0), (0, 15)])
    func shearGrowsTheCanvasAndLeavesTransparentCorners(x: Int, y: Int) throws {
        let (plain, _) = try Self.render(nil)
        let (sheared, planned) = try Self.render("e_shear:\(x):\(y)")
        let expected = EffectGeometry.shear(x: x, y: y, on: Size(plain.width, plain.height)).canvas
        #expect(planned == expected && sheared.width == expected.width && sheared.height == expected.height)
        #expect(sheared.width > plain.width || sheared.height > plain.height)
        // The corners the skew leaves empty are transparent; the centre is opaque photo.
        let empty = x > 0 ? [(sheared.width - 2, 1), (1, sheared.height - 2)] : x < 0 ? [(1, 1), (sheared.width - 2, sheared.height - 2)]
            : [(sheared.width - 2, 1), (1, sheared.height - 2)]
        for (cx, cy) in empty { #expect(Self.alpha(sheared, cx, cy) == 0, "corner \(cx),\(cy)") }
        #expect(Self.alpha(sheared, sheared.width / 2, sheared.height / 2) == 255)
        // The photo is all there, only skewed: a shear keeps areas, so the opaque pixels'
        // mean colour is the photo's, and there are as many of them (within the soft edges).
        func opaque(_ p: PixelBuffer) -> (count: Int, mean: [Double]) {
            var sums = [0.0, 0.0, 0.0], count = 0
            for i in stride(from: 0, to: p.pixels.count, by: p.bands) where p.bands < 4 || p.pixels[i + 3] == 255 {
                for c in 0..<3 { sums[c] += Double(p.pixels[i + c]) }
                count += 1
            }
            return (count, sums.map { $0 / Double(count) })
        }
        let a = opaque(plain), b = opaque(sheared)
        #expect(abs(b.count - a.count) < a.count / 20, "\(b.count) opaque pixels, the photo has \(a.count)")
        #expect((0..<3).allSatisfy { abs(a.mean[$0] - b.mean[$0]) < 6 }, "\(a.mean) vs \(b.mean)")
    }

    /// A shadow to the bottom right: the photo is unchanged at its place, the strip below and
    /// right of it is dark and partly opaque, the top-left margin is transparent.
    @Test func shadowIsBeneathAndBesideThePhoto() throws {
        let (plain, _) = try Self.render(nil)
        let (shadowed, planned) = try Self.render("e_shadow:80,co_black,x_10,y_10")
        #expect(planned == Size(plain.width + 26, plain.height + 26))
        #expect(shadowed.width == plain.width + 26 && shadowed.height == plain.height + 26 && shadowed.bands == 4)
        // The photo sits at the margin (8, 8), every pixel as it was.
        var same = 0
        for y in 0..<plain.height {
            for x in 0..<plain.width where Array(Harness.pixel(shadowed, x + 8, y + 8).prefix(3)) == Array(Harness.pixel(plain, x, y).prefix(3)) { same += 1 }
        }
        #expect(same == plain.width * plain.height, "\(plain.width * plain.height - same) photo pixels changed")
        // Below the photo's bottom edge, inside the shadow's extent: black, partly opaque.
        let below = Harness.pixel(shadowed, plain.width / 2, plain.height + 8 + 5)
        #expect(below[3] > 80 && below[3] < 255 && below[0] < 10, "below: \(below)")
        let right = Harness.pixel(shadowed, plain.width + 8 + 5, plain.height / 2)
        #expect(right[3] > 80 && right[0] < 10, "right: \(right)")
        // Above and left of the photo there is no shadow.
        #expect(Self.alpha(shadowed, 2, 2) == 0 && Self.alpha(shadowed, plain.width / 2, 2) == 0)
        // Strength 0 draws nothing around the photo.
        let (none, _) = try Self.render("e_shadow:0,x_10,y_10")
        #expect(Self.alpha(none, plain.width / 2, plain.height + 8 + 5) == 0)
    }
}

/// `e_oil_paint` on Grace Hopper (round-cornered, as ToneEffectTests): fine detail melts (less
/// high-frequency energy, more at a higher strength), the mean colour, the size and the alpha
/// stay.
@Suite struct OilPaintTests {
    @Test func detailMeltsAndTheImageStays() throws {
        let plain = ToneEffectTests.plain
        let light = try ToneEffectTests.pixels("e_oil_paint")
        let heavy = try ToneEffectTests.pixels("e_oil_paint:100")
        for painted in [light, heavy] {
            #expect(painted.width == plain.width && painted.height == plain.height && painted.bands == 4)
            #expect(ArtisticEffectVipsTests.alphas(painted) == ArtisticEffectVipsTests.alphas(plain))
            #expect(abs(ToneEffectTests.meanLuma(painted) - ToneEffectTests.meanLuma(plain)) < 6)
        }
        let (e0, e1, e2) = (ToneEffectTests.laplacianEnergy(plain), ToneEffectTests.laplacianEnergy(light), ToneEffectTests.laplacianEnergy(heavy))
        #expect(e1 < e0 * 0.8 && e2 < e1 * 0.7, "\(e0) -> \(e1) -> \(e2)")
        #expect(try ToneEffectTests.pixels("e_oil_paint:0").pixels == plain.pixels)
    }
}
