import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `fl_replace_image` (issue 30): the layer, through its own chain, replaces the image; and an
/// asset reference (`$pic_ref:!bg!`) loads the layer it names. On real pixels.
@Suite struct ReplaceImageTests {
    static func render(_ chain: String, overlays: any OverlayLoader) throws -> PixelBuffer {
        try Harness.pixels(Harness.render(ToneEffectTests.photo, chain + "/f_png", overlays: overlays).1.outputs[0].data)
    }

    /// The result is the layer (coffee), transformed by its chain, not the photograph under it.
    @Test func theTransformedLayerIsTheImage() throws {
        let (loader, folder) = try UnderlayTests.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        let replaced = try Self.render("l_bg,fl_replace_image,e_grayscale", overlays: loader)
        let direct = try Harness.pixels(Harness.render("photos/coffee_noexif.png", "e_grayscale/f_png").1.outputs[0].data)
        try #require(replaced.width == direct.width && replaced.height == direct.height)
        #expect(Harness.difference(replaced, direct) < 1)
        // Steps after it act on the layer, whose size the engine learns when it draws it.
        let scaled = try Self.render("l_bg,fl_replace_image/c_scale,w_100", overlays: loader)
        #expect(scaled.width == 100 && scaled.height == Int((Double(direct.height) * 100 / Double(direct.width)).rounded()))
    }

    /// A reference names the layer as `l_bg` does.
    @Test func aReferenceLoadsTheLayerItNames() throws {
        let (loader, folder) = try UnderlayTests.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        let byName = try Self.render("l_bg,w_50/fl_layer_apply,g_north_west", overlays: loader)
        let byReference = try Self.render("$pic_ref:!bg!/l_$pic,w_50/fl_layer_apply,g_north_west", overlays: loader)
        let plain = try Self.render("a_0", overlays: loader)
        #expect(byName.pixels == byReference.pixels)
        #expect(FaceTests.meanDifference(byReference, plain, in: Rect(x: 0, y: 0, width: 40, height: 20)) > 5)
    }
}
