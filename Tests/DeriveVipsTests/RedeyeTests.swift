import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_redeye` on Grace Hopper (fitted into 240x240) with red pupils painted where a face box puts
/// her eyes: the red pupils turn dark, a red patch outside the eyes stays red, nothing outside
/// the eye boxes changes, and with no face found nothing changes at all.
@Suite struct RedeyeTests {
    static let redeye = DeclaredEffect(name: "redeye", values: [])
    static let face = Rect(x: 70, y: 40, width: 100, height: 120)
    /// The eyes' centres the drawing takes for `face`: three and seven tenths across, two fifths down.
    static let eyes = [(100, 88), (140, 88)]

    static func photo() throws -> PixelBuffer {
        var p = try Harness.pixels(Harness.render(ToneEffectTests.photo, "c_fit,w_240,h_240/f_png").1.outputs[0].data)
        func paint(_ cx: Int, _ cy: Int) {
            for y in (cy - 4)...(cy + 4) { for x in (cx - 4)...(cx + 4) where (x - cx) * (x - cx) + (y - cy) * (y - cy) <= 16 {
                let i = (y * p.width + x) * p.bands
                (p.pixels[i], p.pixels[i + 1], p.pixels[i + 2]) = (220, 30, 40)
            } }
        }
        for (x, y) in eyes { paint(x, y) }
        paint(20, 200)
        return p
    }

    static func draw(_ p: PixelBuffer, faces: [Rect]) throws -> PixelBuffer {
        let image = try VImage.fromPixels(p.pixels, width: p.width, height: p.height, bands: p.bands).interpreted(as: "srgb")
        return try DeclaredEffects.draw(redeye, on: image, faces: faces).cast("uchar").pixelBuffer()
    }

    @Test func redPupilsTurnDarkAndNothingElseChanges() throws {
        let before = try Self.photo()
        let after = try Self.draw(before, faces: [Self.face])
        #expect(after.width == before.width && after.height == before.height && after.bands == before.bands)
        for (x, y) in Self.eyes {
            let p = Harness.pixel(after, x, y)
            #expect(p[0] < 60, "pupil at \(x),\(y) is \(p)")
        }
        #expect(Harness.pixel(after, 20, 200) == Harness.pixel(before, 20, 200), "red outside the eyes stays")
        var changedOutside = 0
        for y in 0..<before.height { for x in 0..<before.width where !(y >= 76 && y < 100 && x >= 85 && x < 155) {
            if Harness.pixel(after, x, y) != Harness.pixel(before, x, y) { changedOutside += 1 }
        } }
        #expect(changedOutside == 0)
    }

    @Test func noFaceChangesNothing() throws {
        let before = try Self.photo()
        #expect(try Self.draw(before, faces: []).pixels == before.pixels)
    }
}
