import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_gradient_fade` on a real photograph (Grace Hopper fitted into 120x120, opaque): the edge
/// it fades from becomes transparent, the rest of the photo keeps every pixel and its opacity.
@Suite struct GradientFadeTests {
    static func render(_ effect: String?) throws -> PixelBuffer {
        try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120\(effect.map { "/" + $0 } ?? "")/f_png").1.outputs[0].data)
    }

    static func alpha(_ p: PixelBuffer, _ x: Int, _ y: Int) -> Int { p.bands == 4 ? Harness.pixel(p, x, y)[3] : 255 }

    static func rowAlpha(_ p: PixelBuffer, _ y: Int) -> Double { Double((0..<p.width).map { alpha(p, $0, y) }.reduce(0, +)) / Double(p.width) }
    static func columnAlpha(_ p: PixelBuffer, _ x: Int) -> Double { Double((0..<p.height).map { alpha(p, x, $0) }.reduce(0, +)) / Double(p.height) }

    @Test func theDefaultFadesTheTopHalf() throws {
        let plain = try Self.render(nil), faded = try Self.render("e_gradient_fade")
        #expect(faded.width == plain.width && faded.height == plain.height && faded.bands == 4)
        #expect(Self.rowAlpha(faded, 0) < 10 && Self.rowAlpha(faded, faded.height / 4) < 200)
        // The bottom half: every pixel as it was, opaque.
        for y in (faded.height / 2 + 1)..<faded.height {
            for x in 0..<faded.width {
                #expect(Self.alpha(faded, x, y) == 255 && Harness.pixel(faded, x, y).prefix(3) == Harness.pixel(plain, x, y).prefix(3))
            }
        }
        // Colours are kept even where faded (only the alpha changes).
        #expect(Harness.pixel(faded, 50, 10).prefix(3) == Harness.pixel(plain, 50, 10).prefix(3))
    }

    @Test func aNegativeLengthFadesTheFarEdgeAndSymmetricBoth() throws {
        let bottom = try Self.render("e_gradient_fade,y_-0.3")
        #expect(Self.rowAlpha(bottom, bottom.height - 1) < 10 && Self.rowAlpha(bottom, 0) == 255)
        let sides = try Self.render("e_gradient_fade:symmetric,x_20")
        #expect(Self.columnAlpha(sides, 0) < 10 && Self.columnAlpha(sides, sides.width - 1) < 10)
        #expect(Self.columnAlpha(sides, sides.width / 2) == 255 && Self.rowAlpha(sides, 0) < 255)
        // A higher strength leaves the band fainter.
        let strong = try Self.render("e_gradient_fade:80")
        let weak = try Self.render("e_gradient_fade")
        #expect(Self.rowAlpha(strong, 30) < Self.rowAlpha(weak, 30) - 20, "\(Self.rowAlpha(strong, 30)) vs \(Self.rowAlpha(weak, 30))")
    }

    /// symmetric_pad on Grace Hopper padded to a 400x100 banner (the photo 85 px wide in the
    /// middle): her left and right edges blend into the black bars (darker, opaque), her middle
    /// and the bars are as a plain pad makes them; plain symmetric fades the banner's own ends
    /// to transparent instead. With a gradient fill the edges blend into the gradient.
    @Test func symmetricPadBlendsThePhotosEdgesIntoThePadding() throws {
        func banner(_ chain: String) throws -> PixelBuffer {
            try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_pad,w_400,h_100,\(chain)/f_png").1.outputs[0].data)
        }
        let plain = try banner("b_black"), faded = try banner("b_black/e_gradient_fade:symmetric_pad,x_0.3")
        #expect(faded.width == 400 && faded.height == 100)
        func columnLuma(_ p: PixelBuffer, _ x: Int) -> Double { Double((0..<p.height).map { Harness.pixel(p, x, $0)[0...2].reduce(0, +) }.reduce(0, +)) / Double(3 * p.height) }
        // The photo's columns: the first and last that are not black in the plain banner.
        let photo = (0..<400).filter { columnLuma(plain, $0) > 10 }
        let (left, right) = (photo.first!, photo.last!)
        #expect(right - left > 70 && right - left < 100, "\(left)...\(right)")
        #expect(columnLuma(faded, left + 2) < columnLuma(plain, left + 2) * 0.5 && columnLuma(faded, right - 2) < columnLuma(plain, right - 2) * 0.5)
        #expect((0..<100).allSatisfy { Self.alpha(faded, left + 2, $0) == 255 && Self.alpha(faded, 10, $0) == 255 })
        let middle = (left + right) / 2
        #expect((0..<100).allSatisfy { Harness.pixel(faded, middle, $0).prefix(3) == Harness.pixel(plain, middle, $0).prefix(3) })
        #expect((0..<100).allSatisfy { Harness.pixel(faded, 20, $0).prefix(3) == [0, 0, 0] })
        // Plain symmetric fades the banner's ends, not the photo's.
        let ends = try banner("b_black/e_gradient_fade:symmetric,x_0.3")
        #expect(Self.columnAlpha(ends, 0) < 10 && Self.columnAlpha(ends, middle) == 255)
        // Into a gradient: the faded edge moves towards the bar beside it.
        let gradientPlain = try banner("b_auto:border_gradient"), gradientFaded = try banner("b_auto:border_gradient,e_gradient_fade:symmetric_pad,x_0.3")
        let bar = Harness.pixel(gradientPlain, left - 1, 50), before = Harness.pixel(gradientPlain, left + 1, 50), after = Harness.pixel(gradientFaded, left + 1, 50)
        let distance = { (a: [Int], b: [Int]) in (0..<3).map { abs(a[$0] - b[$0]) }.reduce(0, +) }
        #expect(distance(after, bar) < distance(before, bar) / 2, "\(before) -> \(after), bar \(bar)")
    }
}
