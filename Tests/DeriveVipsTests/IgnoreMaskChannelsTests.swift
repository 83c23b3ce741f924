import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `fl_ignore_mask_channels` (issue 30): Cloudinary's "ensures that an alpha channel is not
/// applied to a TIFF image if it is a mask channel". A TIFF's ExtraSamples tag (338) says what its
/// extra channel is: 0 unspecified (a mask), 1 associated or 2 unassociated alpha; libvips reads
/// any of them as alpha.
@Suite struct IgnoreMaskChannelsTests {
    /// A `side`-pixel square RGBA TIFF, red on the left half and blue on the right, its extra
    /// channel 0 on the left and 255 on the right, with ExtraSamples set to `extraSamples`.
    static func tiff(extraSamples: UInt8, side: Int = 64) throws -> SourceImage {
        _ = try Harness.engine()  // starts libvips, which a test of the sniffer alone would not
        var pixels: [UInt8] = []
        for _ in 0..<side { for x in 0..<side { pixels += x < side / 2 ? [255, 0, 0, 0] : [0, 0, 255, 255] } }
        let image = try VImage.fromPixels(pixels, width: side, height: side, bands: 4).interpreted(as: "srgb")
        var choices: [String] = []
        var bytes = try VipsEncoder.write(image, settings: EncodingSettings(OutputSettings(format: .tiff)), quality: 100, choices: &choices)
        try #require(bytes[0] == 0x49 && bytes[1] == 0x49)
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        let ifd = u32(4)
        let entry = try #require((0..<u16(ifd)).map { ifd + 2 + $0 * 12 }.first { u16($0) == 338 }, "the TIFF has an ExtraSamples tag")
        try #require(u16(entry + 2) == 3 && u32(entry + 4) == 1)
        bytes[entry + 8] = extraSamples
        bytes[entry + 9] = 0
        return SourceImage(bytes: bytes, location: "masked.tif")
    }

    /// The same TIFF with IFD0 moved past its first `offset` bytes, as libtiff writes it after
    /// the image data of a large file (libvips writes it first): the directory is copied to
    /// the end, after unused bytes up to `offset`, and the header pointed at it; its entries'
    /// out-of-line values stay where they are.
    static func tiffWithDirectoryLast(extraSamples: UInt8, offset: Int) throws -> SourceImage {
        var bytes = try tiff(extraSamples: extraSamples).bytes
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let ifd = u16(4) | u16(6) << 16
        let length = 2 + u16(ifd) * 12 + 4
        bytes += [UInt8](repeating: 0, count: max(0, offset - bytes.count))
        let moved = bytes.count
        bytes += Array(bytes[ifd..<ifd + length - 4]) + [0, 0, 0, 0]
        for i in 0..<4 { bytes[4 + i] = UInt8((moved >> (8 * i)) & 0xFF) }
        return SourceImage(bytes: bytes, location: "masked-directory-last.tif")
    }

    @Test func theSnifferReadsAMaskChannel() throws {
        #expect(ImageSniffer.facts(of: try Self.tiff(extraSamples: 0).bytes)?.hasMaskChannel == true)
        #expect(ImageSniffer.facts(of: try Self.tiff(extraSamples: 2).bytes)?.hasMaskChannel == false)
        #expect(ImageSniffer.facts(of: try Self.tiff(extraSamples: 1).bytes)?.hasMaskChannel == false)
    }

    /// With the flag, the mask is dropped: three bands, the red half still red though its mask
    /// was 0. Without it, the channel is the image's alpha, as libvips reads it.
    @Test func theMaskIsDroppedWithTheFlagAndKeptWithout() throws {
        let masked = try Self.tiff(extraSamples: 0)
        let (plan, ignored) = try Harness.render(masked, "fl_ignore_mask_channels/f_png")
        let p = try Harness.pixels(ignored.outputs[0].data)
        #expect(p.bands == 3)
        #expect(Array(p.pixels[0..<3]) == [255, 0, 0] && Array(p.pixels[(32 * 64 + 40) * 3..<((32 * 64 + 40) * 3 + 3)]) == [0, 0, 255])
        #expect(plan.outputs[0].notes.isEmpty, "\(plan.outputs[0].notes)")
        let (_, kept) = try Harness.render(masked, "f_png")
        let q = try Harness.pixels(kept.outputs[0].data)
        #expect(q.bands == 4 && q.pixels[3] == 0 && q.pixels[(32 * 64 + 40) * 4 + 3] == 255)
    }

    /// libtiff writes IFD0 after the image data, so in a TIFF over a megabyte ExtraSamples lies
    /// past the first megabyte, which was all the sniffer read: the mask was taken for alpha
    /// (checked to fail so before the sniffer got the whole TIFF).
    @Test func aLargeTIFFsMaskIsFoundPastTheFirstMegabyte() throws {
        let masked = try Self.tiffWithDirectoryLast(extraSamples: 0, offset: 3 << 20)
        let b = masked.bytes
        let ifd = Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
        try #require(ifd > 1 << 20, "IFD0 at \(ifd) of \(b.count) bytes")
        let (plan, ignored) = try Harness.render(masked, "fl_ignore_mask_channels/f_png")
        #expect(try Harness.pixels(ignored.outputs[0].data).bands == 3)
        #expect(plan.outputs[0].notes.isEmpty, "\(plan.outputs[0].notes)")
    }

    /// A real alpha channel is kept, and the plan's notes say the flag had nothing to do.
    @Test func realAlphaIsKeptWithANote() throws {
        let (plan, result) = try Harness.render(try Self.tiff(extraSamples: 2), "fl_ignore_mask_channels/f_png")
        let p = try Harness.pixels(result.outputs[0].data)
        #expect(p.bands == 4 && p.pixels[3] == 0)
        #expect(plan.outputs[0].notes.contains { $0.contains("fl_ignore_mask_channels: the source has no mask channel") }, "\(plan.outputs[0].notes)")
    }
}
