import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `cs_cmyk` and `cs_keep_cmyk` (issue 30): a CMYK file through libvips' built-in profile, which
/// the file carries; only JPEG and TIFF.
@Suite struct CMYKOutputTests {
    static func render(_ source: SourceImage, _ chain: String) throws -> (Plan, [UInt8]) {
        let (plan, result) = try Harness.render(source, chain)
        return (plan, result.outputs[0].data)
    }

    /// Mean absolute difference per channel between two images of one size, both as sRGB, over
    /// the pixels of `b` that are light (channel sum 180 or more) or dark: CMYK's black is ink
    /// on paper, lighter than sRGB's, so the darks come back lighter, and the rest close.
    static func difference(_ a: [UInt8], _ b: [UInt8], dark: Bool) throws -> Double {
        let p = try Harness.pixels(a), q = try Harness.pixels(b)
        try #require(p.width == q.width && p.height == q.height && p.bands == 3 && q.bands == 3)
        var sum = 0.0, count = 0
        for i in stride(from: 0, to: q.pixels.count, by: 3) where dark == (Int(q.pixels[i]) + Int(q.pixels[i + 1]) + Int(q.pixels[i + 2]) < 180) {
            for k in 0..<3 { sum += abs(Double(p.pixels[i + k]) - Double(q.pixels[i + k])) }
            count += 3
        }
        return sum / Double(max(count, 1))
    }

    @Test(arguments: ["f_jpg", "f_tiff", "f_jpg,q_auto"])
    func cmykIsWrittenWithItsProfileAndLooksTheSame(format: String) throws {
        let photo = try Harness.source(ToneEffectTests.photo)
        let (_, cmyk) = try Self.render(photo, "c_fit,w_200,h_200/\(format),cs_cmyk")
        let (inspection, fields) = try Harness.header(cmyk)
        #expect(inspection.colorSpace == "cmyk" && inspection.facts.isCMYK)
        #expect(fields["icc-profile-data"] != nil, "\(fields.keys.sorted())")
        let (_, plain) = try Self.render(photo, "c_fit,w_200,h_200/\(format)")
        #expect(try Harness.header(plain).0.colorSpace == "srgb")
        let (_, reference) = try Self.render(photo, "c_fit,w_200,h_200/f_png")
        // Decoded back to sRGB by its profile: the light and middle tones close to the sRGB
        // output (a lossless PNG), the darks lifted (measured 4.3 and 28 on a TIFF; the limits
        // leave room for JPEG's own loss).
        let light = try Self.difference(cmyk, reference, dark: false), dark = try Self.difference(cmyk, reference, dark: true)
        #expect(light < 8, "light tones differ by \(light)")
        #expect(dark < 35, "dark tones differ by \(dark)")
        // q_auto is not searched on a CMYK file: the level's default quality.
        if format.contains("q_auto") { #expect(try Harness.render(photo, "c_fit,w_200,h_200/\(format),cs_cmyk").1.outputs[0].metadata.quality == 80) }
    }

    @Test func keepCMYKKeepsACMYKSourceAndLeavesAnRGBOneAlone() throws {
        let photo = try Harness.source(ToneEffectTests.photo)
        let (_, cmyk) = try Self.render(photo, "c_fit,w_200,h_200/f_jpg,cs_cmyk")
        let cmykSource = SourceImage(bytes: cmyk, location: "cmyk.jpg")
        #expect(try Harness.engine().inspect(cmykSource).facts.isCMYK)
        let (plan, kept) = try Self.render(cmykSource, "c_scale,w_100/cs_keep_cmyk")
        #expect(try Harness.header(kept).0.colorSpace == "cmyk")
        #expect(plan.outputs[0].notes.isEmpty, "\(plan.outputs[0].notes)")
        // Without the setting, the CMYK source is written in sRGB as every source is.
        let (_, converted) = try Self.render(cmykSource, "c_scale,w_100/f_jpg")
        #expect(try Harness.header(converted).0.colorSpace == "srgb")
        // A PNG holds no CMYK: sRGB, with a note.
        let (pngPlan, png) = try Self.render(cmykSource, "c_scale,w_100/f_png,cs_keep_cmyk")
        #expect(try Harness.header(png).0.colorSpace == "srgb")
        #expect(pngPlan.outputs[0].notes.contains { $0.contains("holds no CMYK") }, "\(pngPlan.outputs[0].notes)")
        // An sRGB source: nothing to keep.
        let (rgbPlan, rgb) = try Self.render(photo, "c_scale,w_100/f_jpg,cs_keep_cmyk")
        #expect(try Harness.header(rgb).0.colorSpace == "srgb")
        #expect(rgbPlan.outputs[0].notes.contains { $0.contains("the source is not CMYK") }, "\(rgbPlan.outputs[0].notes)")
    }
}
