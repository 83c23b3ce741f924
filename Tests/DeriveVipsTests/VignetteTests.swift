import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_vignette` on Grace Hopper (fitted into 120x120, opaque): the corners darken more as the
/// strength rises, the middle of the photo (inside 0.4 of the half-diagonal) keeps every pixel,
/// strength 0 changes nothing, and a variable gives what its value gives.
@Suite struct VignetteTests {
    static func render(_ chain: String?) throws -> PixelBuffer {
        try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120\(chain.map { "/" + $0 } ?? "")/f_png").1.outputs[0].data)
    }

    static func cornerLuma(_ p: PixelBuffer) -> Double {
        let corners = [(0, 0), (p.width - 4, 0), (0, p.height - 4), (p.width - 4, p.height - 4)]
        var sum = 0
        for (cx, cy) in corners { for y in cy..<(cy + 4) { for x in cx..<(cx + 4) { sum += Harness.pixel(p, x, y)[0...2].reduce(0, +) } } }
        return Double(sum) / Double(corners.count * 16 * 3)
    }

    @Test(arguments: [(nil as String?, 0.0), ("e_vignette:0", 0.0), ("e_vignette", 0.05), ("e_vignette:60", 0.3), ("e_vignette:100", 0.6)])
    func cornersDarkenWithTheStrengthAndTheMiddleStays(chain: String?, darkening: Double) throws {
        let plain = try Self.render(nil), vignetted = try Self.render(chain)
        #expect(vignetted.width == plain.width && vignetted.height == plain.height)
        let ratio = Self.cornerLuma(vignetted) / Self.cornerLuma(plain)
        if darkening == 0 {
            #expect(vignetted.pixels == plain.pixels)
        } else {
            #expect(ratio < 1 - darkening, "corners at \(ratio) of their light")
        }
        let (w, h) = (plain.width, plain.height)
        for y in (h / 2 - 15)..<(h / 2 + 15) {
            for x in (w / 2 - 15)..<(w / 2 + 15) where Harness.pixel(vignetted, x, y) != Harness.pixel(plain, x, y) {
                Issue.record("middle pixel \(x),\(y) changed")
                return
            }
        }
    }

    @Test func aVariableGivesWhatItsValueGives() throws {
        #expect(try Self.render("$v_60/e_vignette:$v").pixels == (try Self.render("e_vignette:60")).pixels)
        #expect(try Self.render("e_vignette:100").pixels != (try Self.render("e_vignette:60")).pixels)
    }
}
