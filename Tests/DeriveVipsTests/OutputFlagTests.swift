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
