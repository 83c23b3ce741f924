import DeriveJobs
import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `u_` underlays on real photographs: the layer shows where the image is transparent and
/// nowhere else, and the image keeps its size.
@Suite struct UnderlayTests {
    /// A folder with coffee_noexif.png as the layer `bg`.
    static func loader() throws -> (FileOverlayLoader, URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-underlays-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(contentsOf: Paths.fixture("photos/coffee_noexif.png")).write(to: folder.appendingPathComponent("bg.png"))
        return (FileOverlayLoader(root: folder), folder)
    }

    /// Grace Hopper fitted into 120x120 with round corners (transparent outside the ellipse).
    static func rounded(_ then: String?, overlays: any OverlayLoader = NoOverlays()) throws -> PixelBuffer {
        let (_, result) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/r_max\(then.map { "/" + $0 } ?? "")/f_png", overlays: overlays)
        return try Harness.pixels(result.outputs[0].data)
    }

    /// In the long form and the one-component form, and from JSON: the transparent corners
    /// become the layer's opaque pixels, the opaque ellipse keeps every pixel.
    @Test(arguments: ["u_bg/c_fill,w_200,h_200/fl_layer_apply", "u_bg,c_fill,w_200,h_200"])
    func showsBeneathTheTransparentPartOnly(chain: String) throws {
        let (loader, folder) = try Self.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = try Self.rounded(nil)
        let under = try Self.rounded(chain, overlays: loader)
        #expect(under.width == plain.width && under.height == plain.height)
        var keptOpaque = 0, opaqueCount = 0, filledCorners = 0, cornerCount = 0
        for i in stride(from: 0, to: plain.pixels.count, by: plain.bands) {
            let j = i / plain.bands * under.bands
            let underAlpha = under.bands == 4 ? under.pixels[j + 3] : 255
            if plain.pixels[i + 3] == 255 {
                opaqueCount += 1
                if Array(under.pixels[j..<(j + 3)]) == Array(plain.pixels[i..<(i + 3)]) && underAlpha == 255 { keptOpaque += 1 }
            } else if plain.pixels[i + 3] == 0 {
                cornerCount += 1
                if underAlpha == 255 { filledCorners += 1 }
            }
        }
        #expect(cornerCount > 500 && filledCorners == cornerCount, "\(chain): \(filledCorners) of \(cornerCount) corner pixels filled")
        #expect(keptOpaque == opaqueCount, "\(chain): \(opaqueCount - keptOpaque) opaque pixels changed")
        // The corners now hold the coffee photo, not one flat colour.
        let corner = (0..<20).flatMap { y in (0..<20).map { x in Harness.pixel(under, x, y) } }
        #expect(Set(corner.map { Array($0.prefix(3)) }).count > 20, "\(chain): the top-left corner is flat")
    }

    /// An opaque image hides its underlay entirely.
    @Test func anOpaqueImageHidesIt() throws {
        let (loader, folder) = try Self.loader()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, plainResult) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/f_png")
        let (_, underResult) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/u_bg,c_fill,w_200,h_200/f_png", overlays: loader)
        let plain = try Harness.pixels(plainResult.outputs[0].data), under = try Harness.pixels(underResult.outputs[0].data)
        #expect(under.width == plain.width && under.height == plain.height && under.pixels == plain.pixels)
    }
}
