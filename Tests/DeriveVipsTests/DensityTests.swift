import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `dn_<dpi>` through the engine: a photo keeps its pixels and records the density as its
/// resolution; an SVG is rasterised at the density, with more pixels of the same drawing.
@Suite struct DensityTests {
    /// The resolution libvips reads back, in dots per inch.
    static func dpi(_ data: [UInt8]) throws -> Double {
        let (_, fields) = try Harness.header(data)
        let text = try #require(fields["xres"])
        return try #require(Double(text)) * 25.4
    }

    /// libvips writes a JPEG's JFIF density only when it keeps metadata (fl_keep_iptc); PNG's
    /// pHYs and TIFF's resolution tags always.
    @Test(arguments: ["f_jpg,fl_keep_iptc", "f_png", "f_tiff"])
    func aPhotoRecordsTheDensityAndKeepsItsPixels(format: String) throws {
        let plain = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/\(format)").1.outputs[0]
        let dense = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/dn_300,\(format)").1.outputs[0]
        let denseDPI = try Self.dpi(dense.data), plainDPI = try Self.dpi(plain.data)
        #expect(abs(denseDPI - 300) < 0.5, "\(format): \(denseDPI) dpi")
        #expect(abs(plainDPI - 300) > 10)
        let a = try Harness.pixels(plain.data), b = try Harness.pixels(dense.data)
        #expect(a.width == b.width && a.height == b.height && a.pixels == b.pixels, "\(format): the pixels changed")
    }

    /// The SVG at 144 dpi is twice its 72 dpi size each way, and the same drawing: scaled back
    /// down it matches the 72 dpi rendering closely.
    @Test func anSVGIsRasterisedAtTheDensity() throws {
        let (plan72, r72) = try Harness.render("formats/svg-logo.svg", "b_white/f_png")
        let (plan144, r144) = try Harness.render("formats/svg-logo.svg", "dn_144/b_white/f_png")
        let at72 = try #require(plan72.outputs[0].size), at144 = try #require(plan144.outputs[0].size)
        #expect(abs(at144.width - 2 * at72.width) <= 1 && abs(at144.height - 2 * at72.height) <= 1, "\(at72) -> \(at144)")
        let a = try Harness.pixels(r72.outputs[0].data), b = try Harness.pixels(r144.outputs[0].data)
        #expect(b.width == at144.width && b.height == at144.height)
        let (_, back) = try Harness.render(SourceImage(bytes: r144.outputs[0].data, location: "144.png"), "c_scale,w_\(a.width),h_\(a.height)/f_png")
        let down = try Harness.pixels(back.outputs[0].data)
        #expect(Harness.difference(down, a) < 6, "difference \(Harness.difference(down, a))")
        let dpi = try Self.dpi(r144.outputs[0].data)
        #expect(abs(dpi - 144) < 0.5, "\(dpi) dpi")
    }
}
