import DeriveLanguage
import Foundation
import DeriveTestSupport
@testable import DeriveVips
import Testing

/// `q_auto` and `f_auto` measured by SSIMULACRA 2, on real photos and generated graphics.
@Suite struct AutoQualityTests {
    /// A flat graphic: a few solid colours, hard edges, a diagonal (a logo or a chart).
    static func graphic(width: Int = 400, height: Int = 300) throws -> SourceImage {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let colour: [UInt8]
                if (x - 300) * (x - 300) + (y - 150) * (y - 150) < 60 * 60 { colour = [220, 40, 40] }
                else if x < 200 && (x / 40 + y / 40) % 2 == 0 { colour = [30, 90, 200] }
                else if y > x / 2 + 200 { colour = [20, 160, 60] }
                else { colour = [250, 250, 245] }
                pixels += colour
            }
        }
        let image = try VImage.fromPixels(pixels, width: width, height: height, bands: 3)
            .interpreted(as: "srgb")
        var choices: [String] = []
        let png = try VipsEncoder.write(image, settings: EncodingSettings(OutputSettings(format: .png)), quality: 100, choices: &choices)
        return SourceImage(bytes: png, location: "graphic.png")
    }

    /// Saturated red and blue stripes and blocks: colour edges that 4:2:0 smears.
    static func stripes() throws -> VImage {
        _ = try Harness.engine()
        var pixels: [UInt8] = []
        for y in 0..<240 {
            for x in 0..<320 {
                pixels += (x / 10 + y / 30) % 2 == 0 ? [230, 20, 30] : [20, 40, 220]
            }
        }
        return try VImage.fromPixels(pixels, width: 320, height: 240, bands: 3).interpreted(as: "srgb").inMemory()
    }

    /// The first output of rendering `chain`.
    static func render(_ source: SourceImage, _ chain: String) throws -> RenderedOutput {
        try #require(try Harness.render(source, chain).1.outputs.first)
    }

    static func quality(_ output: RenderedOutput) throws -> Int {
        try #require(output.metadata.quality)
    }

    /// A busy photograph and a flat graphic need different JPEG qualities for the same
    /// target; each is recorded with its score and encodes.
    @Test func photoAndGraphicGetDifferentQualities() throws {
        let photo = try Self.render(try Harness.source("photos/coffee_noexif.png"), "q_auto:good,f_jpg")
        let graphic = try Self.render(try Self.graphic(), "q_auto:good,f_jpg")
        #expect(try Self.quality(photo) != Self.quality(graphic))
        for output in [photo, graphic] {
            let note = try #require(output.metadata.choices.first { $0.hasPrefix("quality auto:good") })
            #expect(note.contains("SSIMULACRA 2 target 72.0"), "\(note)")
            #expect(note.contains("encodes"), "\(note)")
        }
    }

    /// The encoding chosen scores at least the level's target against the pixels it was made
    /// from, for every searched format; a lower level never picks a higher quality.
    @Test(arguments: [OutputFormat.jpeg, .webp, .avif, .jxl])
    func chosenEncodingMeetsItsTarget(format: OutputFormat) throws {
        _ = try Harness.engine()
        let reference = try Self.photoImage()
        let encoder = AutoEncoder(settings: EngineSettings(qualityMaxEncodes: 8))
        var qualities: [Int] = []
        for level in [AutoQuality.best, .good, .low] {
            let encoded = try encoder.search(reference, encoding: EncodingSettings(OutputSettings(format: format, quality: .auto(level))),
                                             level: level, animated: false)
            let score = try Ssimulacra2.score(reference: try PerceptualReference.metricPixels(reference),
                                              distorted: try PerceptualReference.decodedPixels(encoded.data, format: format))
            #expect(score >= QualitySearch.target(level, for: format), "\(format) \(level): \(score), \(encoded.choices)")
            #expect(encoded.encodes <= 8)
            qualities.append(try #require(encoded.quality))
        }
        #expect(qualities == qualities.sorted(by: >), "\(format): \(qualities)")
    }

    /// The photo at 400×267: small enough to be searched whole.
    static func photoImage() throws -> VImage {
        let source = try Harness.source("photos/coffee_noexif.png")
        return try withBytes(source.bytes) { (buffer) throws(DeriveError) -> VImage in
            try VipsDecoder.header(buffer, format: .png).resized(to: Size(400, 267)).standardised().inMemory()
        }
    }

    /// The search's JPEG candidates are coded by libjpeg-turbo directly (without optimised
    /// Huffman tables) and decoded by it directly: the pixels must be exactly those jpegsave's
    /// encoding decodes to with jpegload, at every quality, chroma mode and progression, or
    /// the search would score something other than what it stores.
    @Test func directJPEGCandidatesHaveJpegsavesPixels() throws {
        let coffee = try Harness.source("photos/coffee_noexif.png")
        let photo = try withBytes(coffee.bytes) { (buffer) throws(DeriveError) -> VImage in
            try VipsDecoder.header(buffer, format: .png).resized(to: Size(800, 534)).standardised().inMemory()
        }
        let reference = try PerceptualReference(photo, sampling: .jpeg)
        #expect(!reference.isFull, "a sample, whose candidates take the direct path")
        for chroma in [ChromaSubsampling.auto, .full] {
            for progressive in [false, true] {
                for quality in [30, 75, 89, 95] {
                    var settings = EncodingSettings(OutputSettings(format: .jpeg))
                    settings.chromaSubsampling = chroma
                    settings.progressive = progressive
                    let direct = try #require(reference.directJPEG(quality: quality, encoding: settings))
                    var choices: [String] = []
                    let saved = try VipsEncoder.write(reference.sample, settings: settings, quality: quality, choices: &choices)
                    let directPixels = try PerceptualReference.decodedPixels(direct, format: .jpeg)
                    let savedPixels = try withBytes(saved) { (buffer) throws(DeriveError) -> PixelBuffer in
                        try PerceptualReference.metricPixels(
                            try VipsCall("jpegload_buffer").blob("buffer", buffer).run(failing: .encodeFailed).image("out"))
                    }
                    #expect(directPixels.pixels == savedPixels.pixels, "q\(quality) \(chroma) progressive \(progressive)")
                }
            }
        }
    }

    /// Lossless WebP wins on a flat graphic, where it is smaller than any lossy encoding
    /// that meets the target.
    @Test func flatGraphicGoesLosslessInWebP() throws {
        let output = try Self.render(try Self.graphic(), "q_auto:good,f_webp")
        #expect(output.metadata.quality == nil)
        #expect(output.metadata.choices.contains { $0.contains("lossless webp") }, "\(output.metadata.choices)")
    }

    /// `f_auto` picks the smallest allowed format and says why.
    @Test func formatAutoPicksTheSmallestAndSaysWhy() throws {
        let output = try Self.render(try Harness.source("photos/coffee_noexif.png"), "f_auto,q_auto")
        let note = try #require(output.metadata.choices.first { $0.hasPrefix("format auto →") })
        #expect(note.contains("smallest"), "\(note)")
        // A photograph: AVIF is searched, WebP and JPEG predicted not to win (issue 40).
        #expect(note.contains("avif"), "\(note)")
        #expect(output.metadata.choices.contains { $0.hasPrefix("webp, jpeg not tried: a photograph") }, "\(output.metadata.choices)")
        #expect(output.metadata.format == .avif)
        // A graphic searches every format.
        let graphic = try Self.render(try Self.graphic(), "f_auto,q_auto")
        let all = try #require(graphic.metadata.choices.first { $0.hasPrefix("format auto →") })
        for format in ["avif", "webp", "jpeg"] { #expect(all.contains(format), "\(all)") }
    }

    /// Alpha keeps a format with alpha; JPEG is left out and the note says so.
    @Test func formatAutoKeepsAlpha() throws {
        let output = try Self.render(try Harness.source("formats/png-palette-trns.png"), "f_auto,q_auto")
        #expect(output.metadata.format != .jpeg)
        #expect(output.metadata.hasAlpha)
        #expect(output.metadata.choices.contains { $0.contains("jpeg left out: the image has alpha") }, "\(output.metadata.choices)")
    }

    /// Animation keeps an animated format with every frame.
    @Test(arguments: ["formats/gif-animated-cogs.gif", "formats/webp-animated-9frames.webp"])
    func formatAutoKeepsAnimation(fixture: String) throws {
        let output = try Self.render(try Harness.source(fixture), "f_auto,q_auto")
        #expect(output.metadata.format.canAnimate)
        #expect(output.metadata.frames > 1)
        #expect(output.metadata.choices.contains { $0.contains("animated") }, "\(output.metadata.choices)")
    }

    /// Saturated colour edges need whole chroma: JPEG 4:2:0 misses the target below 90, so
    /// the search goes on with 4:4:4 and lands well below 90, where 4:2:0 at 90 would be
    /// the only way to meet it.
    @Test func saturatedEdgesGetWholeChromaInJPEG() throws {
        let image = try Self.stripes()
        var choices: [String] = []
        let png = try VipsEncoder.write(image, settings: EncodingSettings(OutputSettings(format: .png)), quality: 100, choices: &choices)
        let output = try Self.render(SourceImage(bytes: png, location: "stripes.png"), "q_auto,f_jpg")
        let note = try #require(output.metadata.choices.first { $0.hasPrefix("quality auto:good") })
        #expect(note.contains("without chroma subsampling"), "\(note)")
        #expect(try Self.quality(output) < 90, "\(note)")
    }

    /// Halving the chroma alone scores at least what a 4:2:0 JPEG of the same pixels does, so
    /// the search may skip 4:2:0 when that bound is already near the target.
    @Test func halvedChromaBoundsWhatSubsampledJPEGReaches() throws {
        let image = try Self.stripes()
        let reference = try PerceptualReference(image)
        let bound = try #require(try reference.subsampledChromaScore())
        var choices: [String] = []
        var settings = EncodingSettings(OutputSettings(format: .jpeg))
        settings.chromaSubsampling = .half
        let jpeg = try VipsEncoder.write(image, settings: settings, quality: 95, choices: &choices)
        let score = try reference.score(jpeg, format: .jpeg)
        #expect(score <= bound + 0.5, "4:2:0 at 95 scored \(score), halved chroma alone \(bound)")
        #expect(bound < 90, "saturated stripes lose to halved chroma: \(bound)")
        let grey = try PerceptualReference(try VImage.fromPixels([UInt8](repeating: 128, count: 64 * 64 * 3), width: 64, height: 64, bands: 3)
            .interpreted(as: "srgb"))
        #expect(try grey.subsampledChromaScore() == 100)
    }

    /// `DERIVE_QUALITY_MAX_ENCODES` caps one output's trials, every format of `f_auto`
    /// together.
    @Test func theEncodeCapHoldsForAWholeOutput() throws {
        var settings = Harness.allLoaders
        settings.qualityMaxEncodes = 5
        let (_, result) = try Harness.render(try Harness.source("photos/coffee_noexif.png"), "f_auto,q_auto", engine: try VipsEngine(settings: settings))
        let note = try #require(result.outputs.first?.metadata.choices.first { $0.hasPrefix("format auto →") })
        let spent = try #require(note.split(separator: ";").last?.split(separator: " ").first.flatMap { Int($0) })
        // One more only when a search met no target and measured the top of its range.
        #expect(spent <= 6, "\(note)")
    }

    /// `DERIVE_AUTO_FORMATS` narrows the choice.
    @Test func formatAutoUsesOnlyTheAllowedFormats() throws {
        var settings = Harness.allLoaders
        settings.autoFormats = [.jpeg]
        let (_, result) = try Harness.render(try Harness.source("photos/coffee_noexif.png"), "f_auto,q_auto", engine: try VipsEngine(settings: settings))
        #expect(result.outputs.first?.metadata.format == .jpeg)
    }

    /// Byte-spaced breakpoints with q_auto: the size probes reuse the widest's quality; every
    /// width kept is searched and says so.
    @Test func breakpointsSearchEachWidthTheyKeep() throws {
        let (_, result) = try Harness.render("photos/coffee_noexif.png",
            #"{"chain": [], "format": "webp", "quality": "auto", "breakpoints": {"minWidth": 150, "maxWidth": 600, "bytes": 15000, "maxCount": 4}}"#)
        #expect(result.outputs.count >= 2)
        for output in result.outputs {
            #expect(output.metadata.choices.contains { $0.hasPrefix("quality auto:good →") }, "\(output.metadata.choices)")
        }
        // The narrower widths start where the widest one's search ended.
        let widest = try #require(result.outputs.max { ($0.breakpointWidth ?? 0) < ($1.breakpointWidth ?? 0) })
        for output in result.outputs where output.breakpointWidth != widest.breakpointWidth {
            #expect(output.metadata.choices.contains { $0.contains("started at q\(widest.metadata.quality ?? 0), a wider breakpoint's") },
                    "\(output.metadata.choices)")
        }
    }

    /// Outputs larger than the sample are searched on a mosaic of tiles, then encoded whole:
    /// 16 tiles, or 8 for JPEG, whose encoder costs less than the metric.
    @Test func largeOutputsAreSearchedOnASample() throws {
        let source = try Harness.source("orientation/landscape_1.jpg")
        for (format, tiles) in [("jpg", 8), ("webp", 16)] {
            let output = try Self.render(source, "q_auto,f_\(format)")
            // The search's note, or when its choice missed on the whole image, the note of what
            // the sample chose.
            #expect(output.metadata.choices.contains { $0.contains("sample of \(tiles) 128×128 tiles") }, "\(output.metadata.choices)")
            #expect(output.metadata.width == 1800)
        }
    }

    // MARK: The whole image's score (issue 29)

    static func toLinear(_ v: Double) -> Double {
        let c = v / 255
        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }

    static func toSRGB(_ l: Double) -> UInt8 {
        let c = max(0, min(1, l))
        let v = c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1 / 2.4) - 0.055
        return UInt8((v * 255).rounded())
    }

    /// The shared fixture's waterfall, 1024 wide, taken down seven stops of exposure in
    /// linear light, with a full moon and its glow above it: a near-black night photograph
    /// (mean pixel value about 4), where a grid of tiles sees almost nothing but black.
    static func nearBlackPhotograph() throws -> (SourceImage, PixelBuffer) {
        _ = try Harness.engine()
        let source = try Harness.source("orientation/landscape_1.jpg")
        let photo = try withBytes(source.bytes) { (buffer) throws(DeriveError) -> VImage in
            try VipsDecoder.header(buffer, format: .jpeg).resized(to: Size(1024, 683)).standardised().inMemory()
        }
        var pixels = try PerceptualReference.metricPixels(photo)
        let linear = (0..<256).map { toLinear(Double($0)) / 128 }
        for y in 0..<pixels.height {
            for x in 0..<pixels.width {
                let dx = Double(x - 800), dy = Double(y - 120)
                let d = (dx * dx + dy * dy).squareRoot()
                let moon = d <= 36 ? 0.8 : 0.03 * exp(-(d - 36) / 60)
                for band in 0..<3 {
                    let i = (y * pixels.width + x) * 3 + band
                    pixels.pixels[i] = toSRGB(linear[Int(pixels.pixels[i])] + moon)
                }
            }
        }
        return (try png(pixels), pixels)
    }

    /// A smooth sky: a diagonal gradient between two blues, no texture at all, 1024×768.
    static func smoothGradient() throws -> (SourceImage, PixelBuffer) {
        _ = try Harness.engine()
        let width = 1024, height = 768
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        let top = [40.0, 90, 170], bottom = [170.0, 205, 240]
        for y in 0..<height {
            for x in 0..<width {
                let t = (Double(y) / Double(height)) * 0.8 + (Double(x) / Double(width)) * 0.2
                for band in 0..<3 { pixels[(y * width + x) * 3 + band] = UInt8((top[band] + (bottom[band] - top[band]) * t).rounded()) }
            }
        }
        let buffer = PixelBuffer(width: width, height: height, bands: 3, pixels: pixels)
        return (try png(buffer), buffer)
    }

    static func png(_ pixels: PixelBuffer) throws -> SourceImage {
        let image = try VImage.fromPixels(pixels.pixels, width: pixels.width, height: pixels.height, bands: 3).interpreted(as: "srgb")
        var choices: [String] = []
        return SourceImage(bytes: try VipsEncoder.write(image, settings: EncodingSettings(OutputSettings(format: .png)), quality: 100, choices: &choices),
                           location: "generated.png")
    }

    /// The kinds of image a sample misjudges: `f_auto,q_auto` keeps its target on the whole
    /// image, scored here independently of the search, and the output was verified on the
    /// whole image (or searched again there).
    @Test(arguments: ["near-black photograph", "smooth gradient"])
    func darkAndSmoothImagesMeetTheTargetWholeImage(kind: String) throws {
        let (source, pixels) = kind == "smooth gradient" ? try Self.smoothGradient() : try Self.nearBlackPhotograph()
        let output = try Self.render(source, "f_auto,q_auto")
        let score = try Ssimulacra2.score(reference: pixels, distorted: try PerceptualReference.decodedPixels(output.data, format: output.metadata.format))
        let target = QualitySearch.target(.good, for: output.metadata.format)
        #expect(score >= target, "\(kind): \(output.metadata.format) scored \(score) whole, \(output.metadata.choices)")
        if output.metadata.quality != nil {
            #expect(output.metadata.choices.contains { $0.contains("verified on the whole image") || $0.contains("searched again on the whole image") },
                    "\(output.metadata.choices)")
        }
    }

    /// A search on a sample is always followed by the output's own score on the whole image:
    /// the score recorded is the whole image's, measured again here; an output below the
    /// target's slack would have been searched again.
    @Test(arguments: [OutputFormat.jpeg, .webp, .avif])
    func aSampledChoiceIsVerifiedOnTheWholeImage(format: OutputFormat) throws {
        _ = try Harness.engine()
        let source = try Harness.source("orientation/landscape_1.jpg")
        let image = try withBytes(source.bytes) { (buffer) throws(DeriveError) -> VImage in
            try VipsDecoder.header(buffer, format: .jpeg).resized(to: Size(900, 600)).standardised().inMemory()
        }
        let encoded = try AutoEncoder(settings: EngineSettings()).search(
            image, encoding: EncodingSettings(OutputSettings(format: format, quality: .auto(.good))), level: .good, animated: false)
        #expect(encoded.choices.contains { $0.contains("on a sample of") }, "\(encoded.choices)")
        let verification = try #require(encoded.verification, "searched on a sample and never scored whole: \(encoded.choices)")
        let whole = try Ssimulacra2.score(reference: try PerceptualReference.metricPixels(image),
                                          distorted: try PerceptualReference.decodedPixels(encoded.data, format: format))
        #expect(abs(verification.score - whole) < 0.001, "recorded \(verification.score), measured \(whole)")
        #expect(encoded.score == verification.score)
        #expect(whole >= QualitySearch.target(.good, for: format) - AutoEncoder.verificationSlack, "\(encoded.choices)")
    }

    /// An output that misses on the whole image (here: a photograph at the bottom of the
    /// format's range, as if the sample had misjudged it) is searched again there, starting
    /// from the encode just scored: the quality goes up, the target is met on the whole image,
    /// and the choices say so.
    @Test(arguments: [OutputFormat.jpeg, .avif])
    func aMissOnTheWholeImageIsSearchedAgain(format: OutputFormat) throws {
        _ = try Harness.engine()
        let source = try Harness.source("orientation/landscape_1.jpg")
        let image = try withBytes(source.bytes) { (buffer) throws(DeriveError) -> VImage in
            try VipsDecoder.header(buffer, format: .jpeg).resized(to: Size(900, 600)).standardised().inMemory()
        }
        let pixels = try PerceptualReference.metricPixels(image)
        let encoder = AutoEncoder(settings: EngineSettings())
        let reference = try PerceptualReference(image, sampling: format == .jpeg ? .jpeg : .standard)
        let low = QualitySearch.range(for: format).lowerBound
        var settings = EncodingSettings(OutputSettings(format: format, quality: .auto(.good)))
        var choices: [String] = []
        let poor = try VipsEncoder.write(image, settings: settings, quality: low, choices: &choices)
        settings.format = format
        let chosen = VipsEncoder.Encoded(data: poor, format: format, quality: low, choices: ["quality auto:good → \(low)"], score: 80, encodes: 3)
        let result = try encoder.verified(chosen, quality: low, whole: try reference.whole(), settings: settings, level: .good, sampled: "a test's")
        let verification = try #require(result.verification)
        #expect(verification.searchedAgain)
        #expect(try #require(result.quality) > low)
        let whole = try Ssimulacra2.score(reference: pixels, distorted: try PerceptualReference.decodedPixels(result.data, format: format))
        #expect(whole >= QualitySearch.target(.good, for: format), "\(result.choices)")
        #expect(abs(whole - verification.score) < 0.001)
        #expect(result.choices.contains { $0.contains("searched again on the whole image") }, "\(result.choices)")
        #expect(result.encodes > chosen.encodes)
    }

    /// A logo: four overlapping discs and a bar on white, 800×600, few colours, hard edges.
    static func logo() throws -> SourceImage {
        _ = try Harness.engine()
        let width = 800, height = 600
        let discs: [(Int, Int, Int, [UInt8])] = [(220, 200, 130, [33, 150, 243]), (420, 260, 110, [244, 67, 54]),
                                                  (560, 380, 150, [76, 175, 80]), (300, 420, 90, [255, 193, 7])]
        var pixels = [UInt8](repeating: 255, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                var colour: [UInt8] = [255, 255, 255]
                for (cx, cy, r, c) in discs where (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r { colour = c }
                if y >= 540 && y < 556 && x >= 80 && x < 720 { colour = [40, 40, 40] }
                for band in 0..<3 { pixels[(y * width + x) * 3 + band] = colour[band] }
            }
        }
        return try png(PixelBuffer(width: width, height: height, bands: 3, pixels: pixels))
    }

    /// `f_auto` keeps a graphic lossless when lossless costs at most three times the smallest
    /// lossy encoding: lossy edges ring where SSIMULACRA 2 forgives them and Butteraugli does
    /// not. The lossless output is the graphic's pixels exactly.
    @Test func formatAutoKeepsAGraphicLosslessWithinThreeTimes() throws {
        let source = try Self.logo()
        let output = try Self.render(source, "f_auto,q_auto")
        let note = try #require(output.metadata.choices.first { $0.hasPrefix("format auto →") })
        #expect(note.contains("lossless within 3x of the smallest"), "\(note)")
        #expect(output.metadata.quality == nil, "\(output.metadata.choices)")
        let original = try withBytes(source.bytes) { (buffer) throws(DeriveError) -> PixelBuffer in
            try PerceptualReference.metricPixels(try VipsCall("pngload_buffer").blob("buffer", buffer).run(failing: .decodeFailed).image("out"))
        }
        #expect(try PerceptualReference.decodedPixels(output.data, format: output.metadata.format).pixels == original.pixels)
    }
}
