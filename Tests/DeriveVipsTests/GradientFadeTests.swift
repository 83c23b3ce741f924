import DeriveCore
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
}
