import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_noise[:<level>]` on Grace Hopper (fitted into 160x160): grain whose spread grows with the
/// level while the picture's mean stays, the same grain on every run (a retried job writes the
/// same bytes), and level 0 (Cloudinary's default) changes nothing.
@Suite struct NoiseTests {
    static func render(_ chain: String?) throws -> PixelBuffer {
        try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_fit,w_160,h_160\(chain.map { "/" + $0 } ?? "")/f_png").1.outputs[0].data)
    }

    /// The mean and the standard deviation of `b - a` over the colour channels.
    static func difference(_ a: PixelBuffer, _ b: PixelBuffer) -> (mean: Double, spread: Double) {
        var sum = 0.0, squares = 0.0, n = 0.0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let p = Harness.pixel(a, x, y), q = Harness.pixel(b, x, y)
                for c in 0..<3 {
                    let d = Double(q[c]) - Double(p[c])
                    sum += d
                    squares += d * d
                    n += 1
                }
            }
        }
        let mean = sum / n
        return (mean, (squares / n - mean * mean).squareRoot())
    }

    /// The mean moves a little at high levels: grain past black or white is clipped.
    @Test(arguments: [(20, 6.0, 14.0, 1.5), (60, 20.0, 36.0, 3.0), (100, 30.0, 55.0, 6.0)])
    func grainGrowsWithTheLevelAndTheMeanStays(level: Int, least: Double, most: Double, drift: Double) throws {
        let plain = try Self.render(nil), noisy = try Self.render("e_noise:\(level)")
        #expect(noisy.width == plain.width && noisy.height == plain.height)
        let d = Self.difference(plain, noisy)
        #expect(d.spread > least && d.spread < most, "spread \(d.spread) at level \(level)")
        #expect(abs(d.mean) < drift, "mean moved by \(d.mean)")
    }

    @Test func theSameGrainEveryRunAndLevelZeroChangesNothing() throws {
        #expect(try Self.render("e_noise:40").pixels == (try Self.render("e_noise:40")).pixels)
        #expect(try Self.render("e_noise").pixels == (try Self.render(nil)).pixels)
        #expect(try Self.render("e_noise:0").pixels == (try Self.render(nil)).pixels)
    }
}
