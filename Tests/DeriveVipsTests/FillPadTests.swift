import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `c_fill_pad` on real photographs with the face detector: a banner of Grace Hopper's
/// portrait pads rather than cutting her face, where `c_fill,g_auto` crops; a box the face
/// fits in is the same as the fill; a photo without faces is the fill.
@Suite struct FillPadTests {
    static func pixels(_ path: String, _ chain: String) throws -> PixelBuffer {
        let (_, result) = try Harness.render(Harness.source(path), chain + "/f_png", engine: FaceTests.engine())
        return try Harness.pixels(result.outputs[0].data)
    }

    /// Columns that are all one colour from top to bottom.
    static func plainColumns(_ p: PixelBuffer, colour: [Int]) -> Int {
        (0..<p.width).filter { x in (0..<p.height).allSatisfy { y in Array(Harness.pixel(p, x, y).prefix(3)) == colour } }.count
    }

    @Test func aBannerOfAPortraitPadsInsteadOfCuttingTheFace() throws {
        let padded = try Self.pixels(ToneEffectTests.photo, "c_fill_pad,g_auto,w_400,h_100,b_rgb:ff00ff")
        let filled = try Self.pixels(ToneEffectTests.photo, "c_fill,g_auto,w_400,h_100")
        #expect(padded.width == 400 && padded.height == 100 && filled.width == 400 && filled.height == 100)
        // Magenta bars left and right; the fill has none.
        let bars = Self.plainColumns(padded, colour: [255, 0, 255])
        #expect(bars > 150, "\(bars) plain magenta columns")
        #expect(Self.plainColumns(filled, colour: [255, 0, 255]) == 0)
        // The middle column is photo, not bar.
        #expect(Array(Harness.pixel(padded, 200, 50).prefix(3)) != [255, 0, 255])
        // And the face is still there: the detector finds one in the padded banner.
        let (_, result) = try Harness.render(Harness.source(ToneEffectTests.photo), "c_fill_pad,g_auto,w_400,h_100,b_rgb:ff00ff/f_png", engine: FaceTests.engine())
        #expect(try FaceTests.faces(in: result.outputs[0]).count == 1)
    }

    /// Where the face fits, fill_pad is exactly the fill; so on a photo without faces.
    @Test(arguments: [(ToneEffectTests.photo, "w_100,h_120"), ("photos/coffee_noexif.png", "w_300,h_100")])
    func whereNothingWouldBeCutItIsTheFill(path: String, box: String) throws {
        let padded = try Self.pixels(path, "c_fill_pad,g_auto,\(box)")
        let filled = try Self.pixels(path, "c_fill,g_auto,\(box)")
        #expect(padded.width == filled.width && padded.height == filled.height && padded.pixels == filled.pixels)
    }
}

/// `a_auto_right`/`a_auto_left` on Grace Hopper's portrait: a landscape box turns it first,
/// exactly as a_90 (a_-90) in a component before the fill; a portrait box leaves it upright.
@Suite struct AutoTurnTests {
    static func pixels(_ chain: String) throws -> PixelBuffer {
        try Harness.pixels(Harness.render(ToneEffectTests.photo, chain + "/f_png").1.outputs[0].data)
    }

    @Test func aLandscapeBoxTurnsThePortraitAndAPortraitBoxDoesNot() throws {
        let right = try Self.pixels("a_auto_right,c_fill,w_200,h_100"), turned = try Self.pixels("a_90/c_fill,w_200,h_100")
        #expect(right.width == 200 && right.height == 100 && right.pixels == turned.pixels)
        let left = try Self.pixels("a_auto_left,c_fill,w_200,h_100"), back = try Self.pixels("a_-90/c_fill,w_200,h_100")
        #expect(left.pixels == back.pixels && left.pixels != right.pixels)
        let upright = try Self.pixels("a_auto_right,c_fill,w_100,h_200"), plain = try Self.pixels("c_fill,w_100,h_200")
        #expect(upright.pixels == plain.pixels)
    }
}
