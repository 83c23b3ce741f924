import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// The source formats beyond the common web ones, each read from a real file of a public test
/// suite (FormatFixtures: Pillow's and libvips' test images), and the further output formats.
@Suite(.serialized) struct FormatTests {
    struct Sample: Sendable, CustomStringConvertible {
        var file: String
        var format: ImageFormat
        var loader: UntrustedLoader?
        var size: Size
        var hasAlpha = false
        var description: String { file }
    }

    static let samples: [Sample] = [
        Sample(file: "hopper_bigtiff.tif", format: .tiff, loader: nil, size: Size(128, 128)),
        Sample(file: "test-card-lossless.jp2", format: .jp2, loader: .jp2k, size: Size(640, 480)),
        Sample(file: "rgb_trns_ycbc.j2k", format: .jp2, loader: .jp2k, size: Size(64, 64), hasAlpha: true),
        Sample(file: "hopper.ppm", format: .pnm, loader: .ppm, size: Size(128, 128)),
        Sample(file: "hopper_8bit.pgm", format: .pnm, loader: .ppm, size: Size(128, 128)),
        Sample(file: "hopper_1bit.pbm", format: .pnm, loader: .ppm, size: Size(128, 128)),
        Sample(file: "hopper_8bit_plain.ppm", format: .pnm, loader: .ppm, size: Size(128, 128)),
        Sample(file: "hopper.pfm", format: .pnm, loader: .ppm, size: Size(128, 128)),
        Sample(file: "sample.hdr", format: .hdr, loader: .rad, size: Size(290, 442)),
        Sample(file: "sample.exr", format: .exr, loader: .openexr, size: Size(610, 406)),
        Sample(file: "logo.svgz", format: .svgz, loader: .svg, size: Size(736, 552), hasAlpha: true),
        Sample(file: "favicon.ico", format: .ico, loader: .magick, size: Size(48, 48), hasAlpha: true),
        Sample(file: "targa.tga", format: .tga, loader: .magick, size: Size(433, 433)),
        Sample(file: "rgb32rle.tga", format: .tga, loader: .magick, size: Size(199, 199), hasAlpha: true),
        Sample(file: "hopper.psd", format: .psd, loader: .magick, size: Size(128, 128)),
        Sample(file: "hopper.bmp", format: .bmp, loader: .magick, size: Size(128, 128)),
    ]

    static func source(_ file: String) throws -> SourceImage {
        SourceImage(bytes: try FormatFixtures.bytes(file), location: file)
    }

    /// Each file is recognised by its bytes, reports its real size before any pixel is decoded,
    /// and renders to a picture with content (not a blank or one-colour image).
    @Test(arguments: samples)
    func everyFormatReadsARealFile(sample: Sample) throws {
        let source = try Self.source(sample.file)
        let inspection = try Harness.engine().inspect(source)
        #expect(inspection.facts.format == sample.format)
        #expect(Size(inspection.facts.width, inspection.facts.height) == sample.size)
        #expect(inspection.facts.hasAlpha == sample.hasAlpha)
        let (_, result) = try Harness.render(source, "c_limit,w_96,h_96/f_png")
        let output = result.outputs[0]
        let longest = max(sample.size.width, sample.size.height)
        let expected = longest <= 96 ? sample.size
            : Size(Int((Double(sample.size.width) * 96 / Double(longest)).rounded()), Int((Double(sample.size.height) * 96 / Double(longest)).rounded()))
        #expect(Size(output.metadata.width, output.metadata.height) == expected)
        let pixels = try Harness.pixels(output.data)
        let spread = (0..<pixels.bands).map { Harness.standardDeviation(pixels, channel: $0) }.max() ?? 0
        #expect(spread > 10, "\(sample.file) rendered nearly one colour")
    }

    /// The same photograph (Pillow's "hopper") in BigTIFF, Netpbm, PSD and BMP decodes to the
    /// same picture as the PPM: each format's loader reads the pixels, not just the header.
    @Test(arguments: ["hopper_bigtiff.tif", "hopper_8bit_plain.ppm", "hopper.psd", "hopper.bmp"])
    func theSamePhotographLooksTheSameInEveryFormat(file: String) throws {
        let reference = try Harness.pixels(try Harness.render(try Self.source("hopper.ppm"), "f_png").1.outputs[0].data)
        let other = try Harness.pixels(try Harness.render(try Self.source(file), "f_png").1.outputs[0].data)
        #expect(Harness.difference(reference, other) < 2, "\(file) differs from hopper.ppm")
    }

    /// Grey Netpbm variants keep the picture's light and dark places.
    @Test func greyNetpbmMatchesTheColourOnesLuminance() throws {
        let colour = try Harness.pixels(try Harness.render(try Self.source("hopper.ppm"), "e_grayscale/f_png").1.outputs[0].data)
        let grey = try Harness.pixels(try Harness.render(try Self.source("hopper_8bit.pgm"), "f_png").1.outputs[0].data)
        #expect(Harness.difference(colour, grey) < 6)
    }

    /// Radiance and OpenEXR hold linear light: the tone map gives a picture with mid-tones
    /// (not crushed to black or blown out to white), and its brightest values stay below the
    /// clip, so highlights keep their shape.
    @Test(arguments: ["sample.hdr", "sample.exr"])
    func highDynamicRangeIsToneMappedToSRGB(file: String) throws {
        let (_, result) = try Harness.render(try Self.source(file), "c_scale,w_200/f_png")
        let pixels = try Harness.pixels(result.outputs[0].data)
        let mean = Harness.mean(pixels, channel: 1)
        #expect(mean > 40 && mean < 215, "\(file): mean green \(mean)")
        var clipped = 0
        for i in stride(from: 0, to: pixels.pixels.count, by: pixels.bands) where pixels.pixels[i] == 255 && pixels.pixels[i + 1] == 255 && pixels.pixels[i + 2] == 255 {
            clipped += 1
        }
        #expect(Double(clipped) / Double(pixels.width * pixels.height) < 0.02, "\(file): \(clipped) pixels blown out")
    }

    /// An image within 0–1 is left as it was by the tone map (its white point is 1).
    @Test func toneMapLeavesInRangeImagesAlone() throws {
        let ramp = try VImage.fromPixels((0..<256).flatMap { [UInt8($0), UInt8($0), UInt8($0)] }, width: 256, height: 1, bands: 3)
        let linear = try ramp.linear([1 / 255.0], [0], uchar: false)
        let mapped = try VipsDecoder.toneMapped(linear).linear([255], [0], uchar: true).pixelBuffer()
        let original = try ramp.pixelBuffer().pixels
        #expect(zip(mapped.pixels, original).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "\(mapped.pixels) != \(original)")
        // Above 1, the brightest value becomes 1 and order is kept.
        let bright = try ramp.linear([4 / 255.0], [0], uchar: false)
        let compressed = try VipsDecoder.toneMapped(bright).linear([255], [0], uchar: true).pixelBuffer().pixels
        #expect(compressed.last == 255 && compressed.first == 0)
        #expect(zip(compressed, compressed.dropFirst()).allSatisfy { $0 <= $1 })
    }

    /// An icon holds several sizes: the largest (48x48 in libvips' favicon, not the first
    /// entry) is the one read.
    @Test func iconsReadTheirLargestImage() throws {
        let bytes = try FormatFixtures.bytes("favicon.ico")
        let largest = try #require(ImageSniffer.icoLargest(bytes))
        #expect(largest.size == Size(48, 48) && largest.index != 0)
        let (_, result) = try Harness.render(try Self.source("favicon.ico"), "f_png")
        #expect(result.outputs[0].metadata.width == 48 && result.outputs[0].metadata.height == 48)
    }

    /// Every loader here is one libvips marks untrusted: blocked unless allowed by name.
    @Test(arguments: samples.filter { $0.loader != nil })
    func untrustedLoadersStayBlockedByDefault(sample: Sample) throws {
        let loader = try #require(sample.loader)
        let engine = try VipsEngine(settings: EngineSettings())
        #expect(throws: DeriveError(.blockedLoader, "\(sample.format.rawValue) sources need libvips' \(loader.rawValue) loader, which is blocked by default as untrusted; allow it with DERIVE_ALLOW_LOADERS=\(loader.rawValue)")) {
            try engine.inspect(try Self.source(sample.file))
        }
        let allowed = try VipsEngine(settings: EngineSettings(allowedLoaders: [loader]))
        #expect(try allowed.inspect(try Self.source(sample.file)).facts.format == sample.format)
    }

    /// A file cut short, or with its image data overwritten, fails with a classified,
    /// permanent error — never a crash, a hang or a half-grey picture.
    @Test(arguments: samples)
    func brokenFilesFailWithAClassifiedError(sample: Sample) throws {
        let original = try FormatFixtures.bytes(sample.file)
        let truncated = Array(original.prefix(original.count / 2))
        let started = Date()
        #expect(throws: DeriveError.self) {
            do {
                _ = try Harness.render(SourceImage(bytes: truncated, location: sample.file), "c_fit,w_64,h_64/f_png")
            } catch let error as DeriveError {
                #expect(error.code == .corruptImage, "\(sample.file) cut in half: \(error)")
                #expect(!error.isRetryable)
                throw error
            }
        }
        #expect(Date().timeIntervalSince(started) < 5, "\(sample.file) cut in half took too long")
    }

    /// Damaged copies never crash the engine: each renders or fails with a DeriveError.
    @Test func mutatedFilesNeverCrashTheEngine() throws {
        var random = SeededRandom(seed: 16)
        let engine = try Harness.engine()
        var outcomes = 0
        for sample in Self.samples {
            let original = try FormatFixtures.bytes(sample.file)
            for _ in 0..<8 {
                var bytes = original
                for _ in 0..<Int.random(in: 1...20, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = .random(in: 0...255, using: &random)
                }
                do {
                    _ = try Harness.render(SourceImage(bytes: bytes, location: sample.file), "c_fit,w_64,h_64/f_png", engine: engine)
                } catch let error as DeriveError {
                    #expect(!error.detail.isEmpty)
                }
                outcomes += 1
            }
        }
        #expect(outcomes == Self.samples.count * 8)
    }

    /// Sizes are checked from the header Derive reads itself, before any libvips loader runs
    /// (SVGZ has no pixel size until it is rendered at one).
    @Test(arguments: samples.filter { $0.format != .svgz })
    func limitsAreCheckedFromTheHeaderBeforeDecoding(sample: Sample) throws {
        let header = try FormatFixtures.bytes(sample.file)
        let tight = try VipsEngine(settings: EngineSettings(allowedLoaders: Set(UntrustedLoader.allCases),
                                                            sourceLimits: SourceLimits(maxInputPixels: 1000)))
        #expect(throws: DeriveError(.limitExceeded, "the source declares \(sample.size.width)x\(sample.size.height) pixels; the limit is 1000 pixels (DERIVE_MAX_INPUT_PIXELS)")) {
            try tight.inspect(SourceImage(bytes: header, location: sample.file))
        }
    }

    /// Small files declaring a 60000x60000 canvas (3.6 gigapixels) in each further format's
    /// header, made from the real files: refused at once from the header, with little memory,
    /// whatever loaders are allowed.
    @Test(arguments: ["ppm", "hdr", "psd", "tga", "j2k", "jp2", "exr", "bigtiff"])
    func pixelBombsAreRefusedFromTheHeader(kind: String) throws {
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func patch(_ bytes: inout [UInt8], at offset: Int, _ values: [UInt8]) { bytes.replaceSubrange(offset..<(offset + values.count), with: values) }
        func index(of marker: String, in bytes: [UInt8]) throws -> Int {
            let pattern = Array(marker.utf8)
            return try #require((0...(bytes.count - pattern.count)).first { Array(bytes[$0..<($0 + pattern.count)]) == pattern })
        }
        var bomb: [UInt8]
        switch kind {
        case "ppm": bomb = Array("P6\n60000 60000\n255\n".utf8) + [UInt8](repeating: 7, count: 64)
        case "hdr": bomb = Array("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 60000 +X 60000\n".utf8) + [UInt8](repeating: 7, count: 64)
        case "psd":
            bomb = try FormatFixtures.bytes("hopper.psd")
            patch(&bomb, at: 14, be32(60000) + be32(60000))
        case "tga":
            bomb = try FormatFixtures.bytes("targa.tga")
            patch(&bomb, at: 12, [0x60, 0xEA, 0x60, 0xEA])
        case "j2k":
            bomb = try FormatFixtures.bytes("rgb_trns_ycbc.j2k")
            patch(&bomb, at: 8, be32(60000) + be32(60000))
        case "jp2":
            bomb = try FormatFixtures.bytes("test-card-lossless.jp2")
            patch(&bomb, at: try index(of: "ihdr", in: bomb) + 4, be32(60000) + be32(60000))
        case "bigtiff":
            // Little-endian BigTIFF: the first IFD's offset at 8, its entry count, then 20-byte
            // entries whose value sits 12 bytes in; ImageWidth and ImageLength are shorts here.
            bomb = try FormatFixtures.bytes("hopper_bigtiff.tif")
            let ifd = Int(bomb[8]) | Int(bomb[9]) << 8 | Int(bomb[10]) << 16 | Int(bomb[11]) << 24
            let count = Int(bomb[ifd]) | Int(bomb[ifd + 1]) << 8
            var patched = 0
            for entry in stride(from: ifd + 8, to: ifd + 8 + count * 20, by: 20) where [256, 257].contains(Int(bomb[entry]) | Int(bomb[entry + 1]) << 8) {
                #expect(bomb[entry + 2] == 3, "ImageWidth/ImageLength are not shorts")
                patch(&bomb, at: entry + 12, [0x60, 0xEA])
                patched += 1
            }
            #expect(patched == 2)
        default:
            bomb = try FormatFixtures.bytes("sample.exr")
            let window = try index(of: "dataWindow", in: bomb) + "dataWindow".utf8.count + "box2i".utf8.count + 2 + 4
            patch(&bomb, at: window, [0, 0, 0, 0, 0, 0, 0, 0, 0x5F, 0xEA, 0, 0, 0x5F, 0xEA, 0, 0])
        }
        let before = HostileInputTests.peakResidentKilobytes()
        let started = Date()
        #expect(throws: DeriveError(.limitExceeded, "the source declares 60000x60000 pixels; the limit is 150000000 pixels (DERIVE_MAX_INPUT_PIXELS)")) {
            _ = try Harness.render(SourceImage(bytes: bomb, location: "bomb.\(kind)"), "c_fill,w_200,h_200/f_jpg")
        }
        #expect(Date().timeIntervalSince(started) < 1, "\(kind) took too long")
        #expect(HostileInputTests.peakResidentKilobytes() - before < 100_000, "\(kind) grew memory")
    }

    /// SVGZ goes through the SVG loader only after Derive inflates it within the byte limit: a
    /// cut gzip stream is damaged data, a stream inflating past the limit is refused, and
    /// gzip holding anything but SVG is not read.
    @Test func svgzIsInflatedWithinTheLimits() throws {
        let svgz = try FormatFixtures.bytes("logo.svgz")
        let small = try VipsEngine(settings: EngineSettings(allowedLoaders: [.svg], sourceLimits: SourceLimits(maxInputBytes: 4000)))
        #expect(throws: DeriveError(.limitExceeded, "the SVGZ source inflates to more than 4000 bytes, the input limit (DERIVE_MAX_INPUT_BYTES)")) {
            _ = try Harness.render(SourceImage(bytes: svgz, location: "logo.svgz"), "f_png", engine: small)
        }
        // The same gzip header over a PNG (stored, uncompressed deflate blocks) is not an SVG.
        let png = try Harness.source("formats/png-palette-trns.png").bytes
        #expect(throws: DeriveError(.unsupportedFormat, "the source is gzip-compressed but holds no SVG; Derive reads gzip only as SVGZ")) {
            _ = try Harness.render(SourceImage(bytes: Self.gzipStored(png), location: "png.gz"), "f_png")
        }
    }

    /// A gzip stream of stored (uncompressed) deflate blocks, enough to wrap test bytes.
    static func gzipStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF]
        var offset = 0
        repeat {
            let chunk = min(65535, data.count - offset)
            let last: UInt8 = offset + chunk == data.count ? 1 : 0
            out += [last, UInt8(chunk & 0xFF), UInt8(chunk >> 8), UInt8(~chunk & 0xFF), UInt8((~chunk >> 8) & 0xFF)]
            out += data[offset..<(offset + chunk)]
            offset += chunk
        } while offset < data.count
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        crc = ~crc
        for value in [crc, UInt32(truncatingIfNeeded: data.count)] {
            out += [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
        }
        return out
    }

    // MARK: - Output formats

    /// `f_jp2`, `f_heic`, `f_bmp` and `f_ico` write files of that format, which read back at the
    /// size asked for and look like the source.
    @Test(arguments: [(OutputFormat.jp2, ImageFormat.jp2), (.heic, .heif), (.bmp, .bmp), (.ico, .ico)])
    func furtherOutputFormatsAreWritten(format: OutputFormat, read: ImageFormat) throws {
        let (_, result) = try Harness.render("photos/grace_hopper_noexif.jpg", "c_fill,w_128,h_128/f_\(format.rawValue)")
        let output = result.outputs[0]
        #expect(output.metadata.format == format)
        #expect(ImageSniffer.format(of: output.data) == read)
        let reference = try Harness.pixels(try Harness.render("photos/grace_hopper_noexif.jpg", "c_fill,w_128,h_128/f_png").1.outputs[0].data)
        let written = try Harness.pixels(output.data)
        #expect(written.width == 128 && written.height == 128)
        #expect(Harness.difference(reference, written) < 6, "\(format) output differs from the PNG")
    }

    /// `q_auto` on HEIC searches its quality by the perceptual score, as for AVIF; on JPEG 2000
    /// it takes the level's fixed quality.
    @Test func autoQualityOnTheNewLossyFormats() throws {
        let heic = try Harness.render("photos/grace_hopper_noexif.jpg", "c_fill,w_128,h_128/f_heic,q_auto").1.outputs[0]
        #expect(heic.metadata.format == .heic && ImageSniffer.format(of: heic.data) == .heif)
        let jp2 = try Harness.render("photos/grace_hopper_noexif.jpg", "c_fill,w_128,h_128/f_jp2,q_auto").1.outputs[0]
        #expect(jp2.metadata.format == .jp2 && jp2.metadata.quality == AutoDefaults.quality(.good, for: .jp2))
    }

    /// An ICO holds at most 256x256: a larger output is refused with the fix in the message.
    @Test func oversizedIconsAreRefused() throws {
        #expect(throws: DeriveError(.unsupportedFormat, "outputs[0] \"default\": an ICO holds images of at most 256x256, and this output is 300x300; resize it first (c_limit,w_256,h_256)")) {
            _ = try Harness.render("photos/grace_hopper_noexif.jpg", "c_fill,w_300,h_300/f_ico")
        }
    }
}
