import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_tint` through several colours and with `equalize`, on pixels: a grey ramp's dark end takes
/// the first colour and its light end the last, mixed in by the amount; equalising spreads a
/// narrow range of greys over the whole gradient.
@Suite struct TintGradientTests {
    /// A 256x8 horizontal ramp of greys from `low` to `high`.
    static func ramp(_ low: Int = 0, _ high: Int = 255) throws -> SourceImage {
        var pixels: [UInt8] = []
        for _ in 0..<8 {
            for x in 0..<256 {
                let v = UInt8(low + (high - low) * x / 255)
                pixels += [v, v, v]
            }
        }
        return try AutoQualityTests.png(PixelBuffer(width: 256, height: 8, bands: 3, pixels: pixels))
    }

    static func pixel(_ p: PixelBuffer, x: Int, y: Int = 4) -> [Int] {
        let i = (y * p.width + x) * p.bands
        return p.pixels[i..<(i + 3)].map(Int.init)
    }

    static func render(_ source: SourceImage, _ chain: String) throws -> PixelBuffer {
        let (_, result) = try Harness.render(source, chain + "/f_png")
        return try Harness.pixels(result.outputs[0].data)
    }

    @Test func theDarkEndTakesTheFirstColourAndTheLightEndTheLast() throws {
        let p = try Self.render(Self.ramp(), "e_tint:100:red:blue:yellow")
        for (x, want) in [(0, [255, 0, 0]), (128, [0, 0, 255]), (255, [255, 255, 0])] {
            let got = Self.pixel(p, x: x)
            #expect(zip(got, want).allSatisfy { abs($0 - $1) <= 3 }, "x \(x): \(got), want \(want)")
        }
        // A quarter of the way: halfway from red to blue.
        let quarter = Self.pixel(p, x: 64)
        #expect(abs(quarter[0] - 128) <= 4 && quarter[1] <= 3 && abs(quarter[2] - 127) <= 4, "\(quarter)")
    }

    @Test func theAmountMixesTheGradientIntoTheImage() throws {
        let p = try Self.render(Self.ramp(), "e_tint:50:red:blue")
        // Black at x 0: half of red. White at x 255: half white, half blue.
        let dark = Self.pixel(p, x: 0), light = Self.pixel(p, x: 255)
        #expect(abs(dark[0] - 128) <= 3 && dark[1] <= 3 && dark[2] <= 3, "\(dark)")
        #expect(abs(light[0] - 128) <= 3 && abs(light[1] - 128) <= 3 && light[2] >= 252, "\(light)")
    }

    @Test func positionsHoldAColourFlatToTheirEnds() throws {
        let p = try Self.render(Self.ramp(), "e_tint:100:red:30p:blue:70p")
        for x in [0, 40, 70] { #expect(Self.pixel(p, x: x).elementsEqual([255, 0, 0]) || zip(Self.pixel(p, x: x), [255, 0, 0]).allSatisfy { abs($0 - $1) <= 3 }, "x \(x): \(Self.pixel(p, x: x))") }
        for x in [185, 220, 255] { #expect(zip(Self.pixel(p, x: x), [0, 0, 255]).allSatisfy { abs($0 - $1) <= 3 }, "x \(x): \(Self.pixel(p, x: x))") }
    }

    /// Greys from 100 to 150 alone reach only the middle of a red-to-blue gradient; equalised,
    /// they span it, the darkest near red and the lightest near blue.
    @Test func equalizeSpreadsANarrowRangeOverTheWholeGradient() throws {
        let narrow = try Self.ramp(100, 150)
        let plain = try Self.render(narrow, "e_tint:100:red:blue")
        let equalised = try Self.render(narrow, "e_tint:equalize:100:red:blue")
        #expect(Self.pixel(plain, x: 0)[0] < 170 && Self.pixel(plain, x: 255)[2] < 170, "\(Self.pixel(plain, x: 0)) \(Self.pixel(plain, x: 255))")
        #expect(Self.pixel(equalised, x: 0)[0] > 220, "\(Self.pixel(equalised, x: 0))")
        #expect(Self.pixel(equalised, x: 255)[2] > 240, "\(Self.pixel(equalised, x: 255))")
    }

    /// Alpha is left as it was.
    @Test func alphaIsKept() throws {
        let (_, result) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/r_max/e_tint:equalize:80:red:blue:yellow/f_png")
        let p = try Harness.pixels(result.outputs[0].data)
        #expect(p.bands == 4 && p.pixels[3] == 0 && p.pixels[(60 * p.width + 60) * 4 + 3] == 255)
    }
}
