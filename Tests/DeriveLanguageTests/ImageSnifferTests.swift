@testable import DeriveLanguage
import Foundation
import DeriveTestSupport
import Testing

/// Header facts of the shared fixtures, as their README lists them.
@Suite struct ImageSnifferTests {
    static func facts(_ name: String) throws -> SourceFacts? {
        ImageSniffer.facts(of: [UInt8](try Data(contentsOf: Paths.fixture(name))))
    }

    @Test(arguments: [
        ("photos/apple-iphone-6_square_orient6.jpg", ImageFormat.jpeg, 2448, 2448, 6, 1, Optional(false)),
        ("photos/canon-sx60hs_orient6.jpg", .jpeg, 2048, 1536, 6, 1, false),
        ("photos/jolla-phone.jpg", .jpeg, 3264, 2448, 1, 1, false),
        ("photos/kodak-pixpro-az521.jpg", .jpeg, 4608, 3456, 1, 1, false),
        ("photos/grace_hopper_noexif.jpg", .jpeg, 512, 600, 1, 1, false),
        ("photos/coffee_noexif.png", .png, 600, 400, 1, 1, false),
        ("orientation/landscape_5.jpg", .jpeg, 1200, 1800, 5, 1, false),
        ("orientation/landscape_8.jpg", .jpeg, 1200, 1800, 8, 1, false),
        ("formats/jpeg-progressive.jpg", .jpeg, 650, 470, 1, 1, false),
        ("formats/jpeg-cmyk-swop-icc.jpg", .jpeg, 500, 333, 1, 1, false),
        ("formats/png-palette-trns.png", .png, 32, 32, 1, 1, true),
        ("formats/png-rgba16.png", .png, 32, 32, 1, 1, true),
        ("formats/gif-animated-cogs.gif", .gif, 85, 77, 1, 5, true),
        ("formats/webp-animated-9frames.webp", .webp, 80, 80, 1, 9, true),
        ("formats/webp-lossless-alpha.webp", .webp, 400, 301, 1, 1, true),
        ("formats/tiff-multipage-3pages.tif", .tiff, 10, 10, 1, 3, false),
        ("formats/avif-alpha.avif", .avif, 64, 64, 1, 1, true),
        ("formats/heic-1440x960.heic", .heif, 1440, 960, 1, 1, false),
        // JPEG XL keeps alpha in metadata past the size header, which only the engine reads.
        ("formats/jxl-alpha.jxl", .jxl, 50, 80, 1, 1, nil),
        ("hostile/bomb_sharp-giant-20000x14000.jpg", .jpeg, 20000, 14000, 1, 1, false),
        ("hostile/crafted_png-declared-30000x30000-one-row.png", .png, 30000, 30000, 1, 1, false),
        ("hostile/crafted_gif-screen-65535x65535-1px-frame.gif", .gif, 65535, 65535, 1, 1, false),
    ])
    func readsHeaderFacts(name: String, format: ImageFormat, width: Int, height: Int, orientation: Int, pages: Int, alpha: Bool?) throws {
        let facts = try #require(try Self.facts(name))
        #expect(facts.format == format && facts.width == width && facts.height == height)
        #expect(facts.orientation == orientation && facts.pages == pages)
        if let alpha { #expect(facts.hasAlpha == alpha) }
    }

    @Test func recognisesFormatsByContentNotName() throws {
        #expect(ImageSniffer.format(of: [UInt8](try Data(contentsOf: Paths.fixture("formats/svg-logo.svg")))) == .svg)
        #expect(ImageSniffer.format(of: [UInt8](try Data(contentsOf: Paths.fixture("formats/pdf-page-boxes.pdf")))) == .pdf)
        #expect(try Self.facts("hostile/crafted_text-file-named.jpg") == nil)
        #expect(try Self.facts("hostile/crafted_empty-zero-bytes.jpg") == nil)
        // Half a JPEG still has its header; the decoder, not the sniffer, finds the missing data.
        #expect(try Self.facts("hostile/crafted_jpeg-photo-cut-in-half.jpg")?.format == .jpeg)
    }

    /// The further source formats, from Pillow's and libvips' test suites (FormatFixtures): the
    /// header reader knows each by its bytes and reads the size the limits are checked against.
    @Test(arguments: [
        ("hopper_bigtiff.tif", ImageFormat.tiff, 128, 128, false),
        ("test-card-lossless.jp2", .jp2, 640, 480, false),
        ("rgb_trns_ycbc.j2k", .jp2, 64, 64, true),
        ("hopper.ppm", .pnm, 128, 128, false),
        ("hopper_8bit.pgm", .pnm, 128, 128, false),
        ("hopper_1bit.pbm", .pnm, 128, 128, false),
        ("hopper_8bit_plain.ppm", .pnm, 128, 128, false),
        ("hopper.pfm", .pnm, 128, 128, false),
        ("sample.hdr", .hdr, 290, 442, false),
        ("sample.exr", .exr, 610, 406, false),
        ("favicon.ico", .ico, 48, 48, true),
        ("targa.tga", .tga, 433, 433, false),
        ("rgb32rle.tga", .tga, 199, 199, true),
        ("hopper.psd", .psd, 128, 128, false),
        ("hopper.bmp", .bmp, 128, 128, false),
    ])
    func readsTheFurtherFormatsHeaders(name: String, format: ImageFormat, width: Int, height: Int, alpha: Bool) throws {
        let bytes = try FormatFixtures.bytes(name)
        let facts = try #require(ImageSniffer.facts(of: bytes))
        #expect(facts.format == format && facts.width == width && facts.height == height && facts.hasAlpha == alpha)
        #expect(ImageSniffer.truncation(of: bytes, format: format) == nil)
        #expect(ImageSniffer.format(of: try FormatFixtures.bytes("logo.svgz")) == .svgz)
    }

    /// Netpbm (raw and plain), JPEG 2000 and ICO are found truncated by their structure.
    @Test(arguments: [
        ("hopper.ppm", "the Netpbm file is truncated: its header declares 49205 bytes, the file has 24602"),
        ("hopper_8bit_plain.ppm", "the Netpbm file is truncated: its header declares 49152 samples, the file has 23993"),
        ("test-card-lossless.jp2", "the JPEG 2000 file is truncated: its codestream box declares 134081 bytes, the file has 67040"),
        ("rgb_trns_ycbc.j2k", "the JPEG 2000 codestream is truncated: it has no end marker"),
        ("favicon.ico", "the ICO is truncated: image 3 ends at byte 7406, the file has 3703"),
    ])
    func truncatedFurtherFormatsAreFound(name: String, reason: String) throws {
        let bytes = try FormatFixtures.bytes(name)
        let format = try #require(ImageSniffer.format(of: bytes))
        #expect(ImageSniffer.truncation(of: Array(bytes.prefix(bytes.count / 2)), format: format) == reason)
    }

    /// Headers declaring sizes past every limit are read as declared, without trapping.
    @Test func declaredSizesAreReadWithoutTrapping() {
        let ppm = Array("P6\n99999999 99999999\n255\n".utf8)
        #expect(ImageSniffer.facts(of: ppm).map { Size($0.width, $0.height) } == Size(99_999_999, 99_999_999))
        let hdr = Array("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 2000000 +X 3000000\n".utf8)
        #expect(ImageSniffer.facts(of: hdr).map { Size($0.width, $0.height) } == Size(3_000_000, 2_000_000))
        var psd = Array("8BPS".utf8) + [0, 1, 0, 0, 0, 0, 0, 0, 0, 3]
        psd += [0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0, 8, 0, 3]
        #expect(ImageSniffer.facts(of: psd).map { Size($0.width, $0.height) } == Size(0x7FFF_FFFF, 0x7FFF_FFFF))
        #expect(ImageSniffer.facts(of: Array("P6\n12".utf8)) == nil)
        #expect(ImageSniffer.facts(of: Array("#?RADIANCE\n".utf8)) == nil)
    }

    /// Every orientation fixture reads as the 1800x1200 scene once oriented.
    @Test(arguments: 1...8)
    func orientationFixturesAreTheSameSceneOnceOriented(orientation: Int) throws {
        let facts = try #require(try Self.facts("orientation/landscape_\(orientation).jpg"))
        #expect(facts.orientation == orientation)
        #expect(facts.orientedSize == Size(1800, 1200))
    }
}

@Suite struct MetadataAlgorithmTests {
    static func pattern(width: Int, height: Int, bands: Int = 3) -> PixelBuffer {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels += [UInt8((x * 7 + y * 3) % 256), UInt8((x * x + y) % 256), UInt8((y * 11) % 256)]
                if bands == 4 { pixels.append(255) }
            }
        }
        return PixelBuffer(width: width, height: height, bands: bands, pixels: pixels)
    }

    /// BlurHash agrees with the reference implementation (PyPI's `blurhash`) on several images.
    @Test(arguments: [(20, 15), (32, 32), (7, 31), (1, 1)])
    func blurHashMatchesTheReference(width: Int, height: Int) throws {
        let image = Self.pattern(width: width, height: height)
        let ours = BlurHash.encode(image)
        #expect(ours.count == 28)
        guard Python.has("blurhash") else {
            #expect(!Python.required, "the test script installs the blurhash reference")
            return
        }
        let rows = (0..<height).map { y in (0..<width).map { x in "[\(Harness2.rgb(image, x, y))]" }.joined(separator: ",") }
        let reference = try Python.run("import blurhash, json, sys; print(blurhash.encode(json.loads(sys.stdin.read()), 4, 3))",
                                       input: "[" + rows.map { "[\($0)]" }.joined(separator: ",") + "]")
        #expect(reference.output.trimmingCharacters(in: .whitespacesAndNewlines) == ours)
    }

    @Test func differenceHashesTellNearDuplicatesFromOthers() {
        let gradient: [UInt8] = (0..<72).map { (i: Int) -> UInt8 in UInt8(i % 9 * 20 + i / 9 * 3) }
        #expect(DifferenceHash.hash(gray: gradient) == "ffffffffffffffff")
        let flat = [UInt8](repeating: 100, count: 72)
        #expect(DifferenceHash.hash(gray: flat) == "0000000000000000")
        var nudged = gradient
        nudged[4] = nudged[5]
        #expect(DifferenceHash.distance(DifferenceHash.hash(gray: gradient), DifferenceHash.hash(gray: nudged)) == 1)
    }

    @Test func dominantColourIsTheFullestBucketIgnoringTransparency() {
        var pixels: [UInt8] = []
        for i in 0..<100 {
            if i < 60 { pixels += [200, 30, 30, 255] } else if i < 90 { pixels += [10, 10, 250, 255] } else { pixels += [0, 255, 0, 0] }
        }
        #expect(DominantColor.of(PixelBuffer(width: 10, height: 10, bands: 4, pixels: pixels)) == Color(red: 200, green: 30, blue: 30))
    }

    @Test func masksCoverExactlyTheShape() {
        let circle = Masks.roundedCorners(width: 40, height: 40, radius: .max)
        #expect(circle[0] == 0 && circle[20 * 40 + 20] == 255 && circle[20 * 40] < 255)
        let corners = Masks.roundedCorners(width: 40, height: 20, radius: .corners([8, 0, 8, 0]))
        #expect(corners[0] == 0 && corners[39] == 255 && corners[19 * 40 + 39] == 0 && corners[19 * 40] == 255)
        #expect(corners[10 * 40 + 20] == 255)
        let vignette = Masks.vignette(width: 30, height: 30, strength: 100)
        #expect(vignette[15 * 30 + 15] == 255 && vignette[0] < 30)
    }

    @Test func exifTextAndICCDescriptions() throws {
        #expect(ExifText.value("Canon (Canon, ASCII, 6 components, 6 bytes)") == "Canon")
        #expect(ExifText.value("Lens (x) 50mm (Lens (x) 50mm, ASCII, 14 components, 14 bytes)") == "Lens (x) 50mm")
        #expect(ExifText.value("  ") == nil)
        // A v2 'desc' profile and a v4 'mluc' one, built byte by byte.
        func profile(tag: [UInt8]) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: 128)
            bytes += [0, 0, 0, 1]
            bytes += Array("desc".utf8)
            bytes += [0, 0, 0, 144]
            bytes += [0, 0, 0, UInt8(tag.count)]
            bytes += tag
            return bytes
        }
        var v2Tag: [UInt8] = Array("desc".utf8)
        v2Tag += [0, 0, 0, 0, 0, 0, 0, 6]
        v2Tag += Array("sRGB X".utf8)
        v2Tag += [0]
        #expect(ICCProfile.description(profile(tag: v2Tag)) == "sRGB X")
        var v4Tag: [UInt8] = Array("mluc".utf8)
        v4Tag += [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 12]
        v4Tag += Array("enUS".utf8)
        v4Tag += [0, 0, 0, 4, 0, 0, 0, 28]
        v4Tag += [0, 0x50, 0, 0x33]  // "P3" in UTF-16BE
        #expect(ICCProfile.description(profile(tag: v4Tag)) == "P3")
    }

    @Test func truncationIsFoundByStructure() throws {
        let whole = [UInt8](try Data(contentsOf: Paths.fixture("photos/grace_hopper_noexif.jpg")))
        #expect(ImageSniffer.truncation(of: whole, format: .jpeg) == nil)
        #expect(ImageSniffer.truncation(of: Array(whole.prefix(whole.count / 2)), format: .jpeg) != nil)
        let png = [UInt8](try Data(contentsOf: Paths.fixture("photos/coffee_noexif.png")))
        #expect(ImageSniffer.truncation(of: png, format: .png) == nil)
        #expect(ImageSniffer.truncation(of: Array(png.dropLast(20)), format: .png) != nil)
        let gif = [UInt8](try Data(contentsOf: Paths.fixture("formats/gif-animated-cogs.gif")))
        #expect(ImageSniffer.truncation(of: gif, format: .gif) == nil)
        #expect(ImageSniffer.truncation(of: Array(gif.prefix(gif.count - 40)), format: .gif) != nil)
        let webp = [UInt8](try Data(contentsOf: Paths.fixture("formats/webp-lossless-alpha.webp")))
        #expect(ImageSniffer.truncation(of: webp, format: .webp) == nil)
        #expect(ImageSniffer.truncation(of: Array(webp.prefix(1000)), format: .webp) != nil)
    }
}

enum Harness2 {
    static func rgb(_ p: PixelBuffer, _ x: Int, _ y: Int) -> String {
        let i = (y * p.width + x) * p.bands
        return "\(p.pixels[i]),\(p.pixels[i + 1]),\(p.pixels[i + 2])"
    }
}

@Suite struct PixelViewTests {
    /// Box averages over exact blocks: each output pixel is the mean of its block, row by row.
    @Test func downsamplingAveragesEachBlock() {
        var bytes: [UInt8] = []
        for y in 0..<8 {
            for x in 0..<6 { bytes += [UInt8(x * 40), UInt8(y * 30), 7] }
        }
        let out = bytes.withUnsafeBytes { PixelView(width: 6, height: 8, bands: 3, bytes: $0).downsampled(to: Size(3, 4)) }
        #expect(out.width == 3 && out.height == 4)
        for oy in 0..<4 {
            for ox in 0..<3 {
                let i = (oy * 3 + ox) * 3
                #expect(out.pixels[i] == UInt8((ox * 2 * 40 + (ox * 2 + 1) * 40) / 2))
                #expect(out.pixels[i + 1] == UInt8((oy * 2 * 30 + (oy * 2 + 1) * 30) / 2))
                #expect(out.pixels[i + 2] == 7)
            }
        }
        let grey = bytes.withUnsafeBytes { PixelView(width: 6, height: 8, bands: 3, bytes: $0).downsampled(to: Size(1, 1), grey: true) }
        #expect(grey.bands == 1 && grey.pixels.count == 1)
    }

    /// Opaque images take a faster loop: it gives exactly what the general one gives, for
    /// sizes that divide unevenly, larger outputs than inputs, grey and RGB.
    @Test(arguments: [(1, 37, 23, 8, 5), (3, 37, 23, 8, 5), (3, 1200, 900, 32, 24), (3, 5, 3, 8, 6), (1, 64, 64, 32, 32)])
    func theOpaqueLoopMatchesTheGeneralOne(bands: Int, width: Int, height: Int, outWidth: Int, outHeight: Int) {
        var state: UInt32 = 99
        let bytes = (0..<(width * height * bands)).map { _ in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        for grey in [false, true] {
            bytes.withUnsafeBytes { raw in
                let view = PixelView(width: width, height: height, bands: bands, bytes: raw)
                let size = Size(outWidth, outHeight)
                #expect(view.downsampledOpaque(to: size, grey: grey).pixels == view.downsampledInGeneral(to: size, grey: grey).pixels)
            }
        }
    }
}
