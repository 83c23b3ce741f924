import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// Issue 30's output flags through the engine, read back from the encoded file: `fl_png8`,
/// `fl_png24`, `fl_png32` (the PNG's colour type), `fl_lossy` (a quantised PNG, a GIF
/// animation with frame differences left out) and `e_loop` (the animation's play count).
@Suite struct OutputFlagTests {
    /// The colour type in a PNG's IHDR chunk: 2 RGB, 3 palette, 6 RGBA.
    static func colourType(_ png: [UInt8]) throws -> UInt8 {
        try #require(png.count > 25 && png[12..<16] == [0x49, 0x48, 0x44, 0x52][...])
        return png[25]
    }

    @Test(arguments: [
        (ToneEffectTests.photo, "fl_png8", UInt8(3)), (ToneEffectTests.photo, "fl_png24", UInt8(2)), (ToneEffectTests.photo, "fl_png32", UInt8(6)),
        ("formats/png-palette-trns.png", "fl_png8", UInt8(3)), ("formats/png-palette-trns.png", "fl_png24", UInt8(2)),
        ("formats/png-palette-trns.png", "fl_png32", UInt8(6)),
    ])
    func thePNGHasTheColourTypeAskedFor(fixture: String, flag: String, type: UInt8) throws {
        let (_, result) = try Harness.render(fixture, "c_fit,w_120,h_120/f_png,\(flag)")
        #expect(try Self.colourType(result.outputs[0].data) == type)
    }

    /// png24 flattens transparency onto white; png32 keeps it.
    @Test func png24FlattensAndPng32KeepsTransparency() throws {
        let (_, flat) = try Harness.render("formats/png-palette-trns.png", "f_png,fl_png24")
        let (_, alpha) = try Harness.render("formats/png-palette-trns.png", "f_png,fl_png32")
        #expect(try Harness.header(flat.outputs[0].data).0.facts.hasAlpha == false)
        #expect(try Harness.header(alpha.outputs[0].data).0.facts.hasAlpha == true)
    }

    /// A photo's PNG is truecolour (the palette is larger at quality 100); with fl_lossy it is a
    /// palette, smaller, and close to it.
    @Test func lossyPNGIsAQuantisedPalette() throws {
        let (_, plain) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_png")
        let (_, lossy) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_png,fl_lossy")
        let a = plain.outputs[0].data, b = lossy.outputs[0].data
        #expect(try Self.colourType(a) == 2)
        #expect(try Self.colourType(b) == 3)
        #expect(b.count < a.count * 2 / 3, "\(b.count) bytes lossy, \(a.count) plain")
        let difference = Harness.difference(try Harness.pixels(a), try Harness.pixels(b))
        #expect(difference < 8, "difference \(difference)")
    }

    /// An animated GIF with fl_lossy: every frame kept, fewer bytes.
    @Test func lossyGIFIsSmaller() throws {
        let (_, plain) = try Harness.render("formats/webp-animated-9frames.webp", "f_gif")
        let (_, lossy) = try Harness.render("formats/webp-animated-9frames.webp", "f_gif,fl_lossy")
        #expect(lossy.outputs[0].metadata.frames == plain.outputs[0].metadata.frames && plain.outputs[0].metadata.frames > 1)
        #expect(lossy.outputs[0].data.count < plain.outputs[0].data.count,
                "\(lossy.outputs[0].data.count) bytes lossy, \(plain.outputs[0].data.count) plain")
    }

    /// e_loop:2 plays the animation 3 times, e_loop forever (libvips' loop 0), in GIF and WebP.
    @Test(arguments: [("e_loop:2", "3"), ("e_loop", "0"), ("e_loop:0", "1")], ["gif", "webp"])
    func theAnimationLoopsAsAsked(loop: (String, String), format: String) throws {
        let (_, result) = try Harness.render("formats/gif-animated-cogs.gif", "w_60/f_\(format),\(loop.0)")
        #expect(result.outputs[0].metadata.frames > 1)
        #expect(try Harness.header(result.outputs[0].data).1["loop"] == loop.1)
    }

    /// dl_200: every frame 200 ms (GIF keeps hundredths: 20), as libvips reads it back.
    @Test(arguments: ["gif", "webp"])
    func everyFrameTakesTheDelayAsked(format: String) throws {
        let (_, result) = try Harness.render("formats/gif-animated-cogs.gif", "w_60/f_\(format),dl_200")
        let data = result.outputs[0].data
        let delays = try withBytes(data) { (buffer) throws(DeriveError) -> [Int]? in
            try VipsDecoder.header(buffer, format: format == "gif" ? .gif : .webp).ints("delay")
        }
        let read = try #require(delays)
        #expect(read.count == result.outputs[0].metadata.frames && read.allSatisfy { $0 == 200 }, "\(read)")
    }

    /// fl_tiff8_lzw: the TIFF's compression tag (259) is LZW (5), deflate (8) without it; the
    /// pixels are the same.
    @Test func tiffLZWIsLZW() throws {
        func compression(_ tiff: [UInt8]) throws -> Int {
            try #require(tiff.count > 8 && tiff[0] == 0x49 && tiff[1] == 0x49)
            func u16(_ at: Int) -> Int { Int(tiff[at]) | Int(tiff[at + 1]) << 8 }
            func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
            let ifd = u32(4)
            for entry in 0..<u16(ifd) where u16(ifd + 2 + entry * 12) == 259 { return u16(ifd + 2 + entry * 12 + 8) }
            return -1
        }
        let (_, lzw) = try Harness.render(ToneEffectTests.photo, "c_fit,w_100,h_100/f_tiff,fl_tiff8_lzw")
        let (_, plain) = try Harness.render(ToneEffectTests.photo, "c_fit,w_100,h_100/f_tiff")
        #expect(try compression(lzw.outputs[0].data) == 5)
        #expect(try compression(plain.outputs[0].data) == 8)
        #expect(try Harness.pixels(lzw.outputs[0].data).pixels == (try Harness.pixels(plain.outputs[0].data)).pixels)
    }
}

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

/// `ils` through the engine (issue 30): measured on the source, deciding conditions.
@Suite struct IllustrationScoreVipsTests {
    static func score(_ fixture: String) throws -> Double {
        let data = try Harness.source(fixture).bytes
        let engine = try Harness.engine()
        let inspection = try engine.inspect(SourceImage(bytes: data, location: fixture))
        return try withBytes(data) { (buffer) throws(DeriveError) -> Double in
            let image = try VipsDecoder.header(buffer, format: inspection.facts.format)
            let frame = image.pages > 1 ? try image.extracted(Rect(x: 0, y: 0, width: image.width, height: image.pageHeight)) : image
            return IllustrationScore.of(try frame.standardised().inMemory().withPixels { $0.downsampled(to: VipsEngine.previewSize(frame.frameSize)) })
        }
    }

    /// The photographs score below 0.3, the drawn logo and the animated cogs above 0.8 (the
    /// figures are in Docs/language.md).
    @Test(arguments: [(ToneEffectTests.photo, false), ("photos/coffee_noexif.png", false), ("photos/jolla-phone.jpg", false),
                      ("formats/heic-1440x960.heic", false), ("formats/svg-logo.svg", true), ("formats/gif-animated-cogs.gif", true)])
    func photographsScoreLowAndDrawingsHigh(fixture: String, drawing: Bool) throws {
        let score = try Self.score(fixture)
        #expect(drawing ? score > 0.8 : score < 0.3, "\(fixture): \(score)")
    }

    /// if_ils_gt_0.5: the palette drawing turns grey, the photograph keeps its colour.
    @Test(arguments: [(ToneEffectTests.photo, false), ("formats/png-palette-trns.png", true)])
    func theConditionDecides(fixture: String, drawing: Bool) throws {
        func pixels(_ chain: String) throws -> [UInt8] {
            try Harness.pixels(Harness.render(fixture, "w_64/" + chain + "/b_white/f_png").1.outputs[0].data).pixels
        }
        let decided = try pixels("if_ils_gt_0.5/e_grayscale/if_end"), grey = try pixels("e_grayscale"), plain = try pixels("e_brightness:0")
        #expect(grey != plain, "\(fixture) has no colour to lose")
        #expect(decided == (drawing ? grey : plain), "\(fixture)")
    }
}

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

/// `f_pdf` (issue 30): a one-page PDF holding the image as a JPEG, read back by libvips' PDF
/// loader (poppler), an independent reader.
@Suite struct PDFOutputTests {
    static func pdfReader() throws -> VipsEngine { try VipsEngine(settings: EngineSettings(allowedLoaders: [.pdf])) }

    @Test func aPageTheImagesSizeHoldingItsPixels() throws {
        let (plan, pdf) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_pdf")
        let data = pdf.outputs[0].data
        #expect(Array(data.prefix(8)) == Array("%PDF-1.4".utf8))
        #expect(pdf.outputs[0].metadata.format == .pdf && plan.outputs[0].encoding.quality == .value(80))
        // Nothing but the page and its image: no script, action, font or link, looked for in the
        // document's objects outside their streams (the JPEG's bytes could spell anything).
        var text = String(decoding: data, as: UTF8.self)
        while let start = text.range(of: "stream\n"), let end = text.range(of: "endstream", range: start.upperBound..<text.endIndex) {
            text.removeSubrange(start.lowerBound..<end.upperBound)
        }
        #expect(text.contains("/Type /Catalog") && text.contains("/Subtype /Image") && !text.contains("stream"))
        for word in ["/JavaScript", "/JS", "/OpenAction", "/AA", "/Launch", "/URI", "/Font", "/EmbeddedFile"] {
            #expect(!text.contains(word), "\(word)")
        }
        // Read back by poppler at 72 dpi: the image's size, and the JPEG's pixels.
        let (_, read) = try Harness.render(SourceImage(bytes: data, location: "out.pdf"), "f_png", engine: try Self.pdfReader())
        let back = try Harness.pixels(read.outputs[0].data)
        let (_, jpeg) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_jpg")
        let same = try Harness.pixels(jpeg.outputs[0].data)
        #expect(back.width == same.width && back.height == same.height, "\(back.width)x\(back.height)")
        // poppler gives RGBA (the page opaque); the colour channels are compared.
        var sum = 0.0
        for i in 0..<(same.width * same.height) {
            for c in 0..<3 { sum += abs(Double(back.pixels[i * back.bands + c]) - Double(same.pixels[i * same.bands + c])) }
        }
        let difference = sum / Double(same.width * same.height * 3)
        #expect(back.bands == 3 || back.pixels[3] == 255)
        #expect(difference < 3, "mean difference \(difference) (\(back.bands) bands read back)")
    }

    /// f_ai: the same document, named .ai (Illustrator files are PDF-compatible).
    @Test func illustratorIsTheSamePDF() throws {
        let (_, ai) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_ai")
        let (_, pdf) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_pdf")
        #expect(ai.outputs[0].metadata.format == .ai && OutputFormat.ai.fileExtension == "ai")
        #expect(ai.outputs[0].data == pdf.outputs[0].data)
    }

    /// dn_: the page is the image's size at that density (144 dpi: half as many points).
    @Test func theDensitySizesThePage() throws {
        let (_, pdf) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_pdf,dn_144")
        let (_, read) = try Harness.render(SourceImage(bytes: pdf.outputs[0].data, location: "out.pdf"), "f_png", engine: try Self.pdfReader())
        let back = try Harness.pixels(read.outputs[0].data)
        let (_, plain) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_png")
        let full = try Harness.pixels(plain.outputs[0].data)
        #expect(abs(back.width - full.width / 2) <= 1 && abs(back.height - full.height / 2) <= 1, "\(back.width)x\(back.height)")
    }
}

/// `f_jpc` (issue 30): the bare JPEG 2000 codestream, the JP2 file's `jp2c` box, read back by
/// libvips' JPEG 2000 loader (OpenJPEG) to the JP2's pixels.
@Suite struct CodestreamOutputTests {
    @Test func theCodestreamOfTheJP2() throws {
        // At q_95 libvips writes the JP2 with full chroma too, as the codestream always is.
        let (_, jpc) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_jpc,q_95")
        let (_, jp2) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_jp2,q_95")
        let stream = jpc.outputs[0].data, file = jp2.outputs[0].data
        #expect(Array(stream.prefix(4)) == [0xFF, 0x4F, 0xFF, 0x51] && Array(stream.suffix(2)) == [0xFF, 0xD9])
        #expect(Array(file[4..<8]) == Array("jP  ".utf8))
        #expect(JPEG2000Boxes.codestream(of: file) == stream)
        #expect(jpc.outputs[0].metadata.format == .jpc && OutputFormat.jpc.fileExtension == "jpc")
        let reader = try VipsEngine(settings: EngineSettings(allowedLoaders: [.jp2k]))
        let (_, a) = try Harness.render(SourceImage(bytes: stream, location: "out.jpc"), "f_png", engine: reader)
        let (_, b) = try Harness.render(SourceImage(bytes: file, location: "out.jp2"), "f_png", engine: reader)
        #expect(try Harness.pixels(a.outputs[0].data).pixels == (try Harness.pixels(b.outputs[0].data)).pixels)
        // At the default quality, where a JP2 is subsampled, the codestream is still read back.
        let (_, plain) = try Harness.render(ToneEffectTests.photo, "c_fit,w_200,h_200/f_jpc")
        let (_, read) = try Harness.render(SourceImage(bytes: plain.outputs[0].data, location: "out.jpc"), "f_png", engine: reader)
        #expect(read.outputs[0].metadata.width == plain.outputs[0].metadata.width)
    }

    @Test func boxesThatDoNotHoldACodestreamGiveNone() {
        #expect(JPEG2000Boxes.codestream(of: []) == nil)
        #expect(JPEG2000Boxes.codestream(of: [0, 0, 0, 12] + Array("jP  ".utf8) + [0x0D, 0x0A, 0x87, 0x0A]) == nil)
        // A box whose length runs past the file.
        #expect(JPEG2000Boxes.codestream(of: [0, 0, 1, 0] + Array("jp2c".utf8) + [0xFF, 0x4F, 0xFF, 0x51]) == nil)
        // A jp2c box to the end of the file (length 0).
        #expect(JPEG2000Boxes.codestream(of: [0, 0, 0, 0] + Array("jp2c".utf8) + [0xFF, 0x4F, 0xFF, 0x51, 0xFF, 0xD9]) == [0xFF, 0x4F, 0xFF, 0x51, 0xFF, 0xD9])
    }
}
