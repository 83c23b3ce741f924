import DeriveJobs
import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// Every step of the language on a real photograph, checked on the pixels it produces.
@Suite struct StepTests {
    static let photo = "photos/grace_hopper_noexif.jpg"

    /// The photo fitted into 120x120 (102x120), then `chain`, as PNG pixels.
    static func pixels(_ chain: String, fixture: String = photo, overlays: any OverlayLoader = NoOverlays()) throws -> PixelBuffer {
        let (_, result) = try Harness.render(fixture, "c_fit,w_120,h_120/\(chain)/f_png", overlays: overlays)
        return try Harness.pixels(result.outputs[0].data)
    }

    static let plain: PixelBuffer = { try! pixels("a_0") }()

    @Test func colourEffects() throws {
        let gray = try Self.pixels("e_grayscale")
        for (x, y) in [(10, 10), (50, 60), (90, 100)] {
            let p = Harness.pixel(gray, x, y)
            #expect(abs(p[0] - p[1]) <= 1 && abs(p[1] - p[2]) <= 1)
        }
        let negated = try Self.pixels("e_negate")
        for (x, y) in [(10, 10), (50, 60)] {
            #expect(zip(Harness.pixel(negated, x, y), Harness.pixel(Self.plain, x, y)).allSatisfy { abs($0 + $1 - 255) <= 1 })
        }
        let sepia = try Self.pixels("e_sepia:100")
        #expect(Harness.mean(sepia, channel: 0) > Harness.mean(sepia, channel: 1) && Harness.mean(sepia, channel: 1) > Harness.mean(sepia, channel: 2))
        #expect(Harness.mean(try Self.pixels("e_brightness:40"), channel: 1) > Harness.mean(Self.plain, channel: 1) + 10)
        #expect(Harness.mean(try Self.pixels("e_brightness:-40"), channel: 1) < Harness.mean(Self.plain, channel: 1) - 10)
        // Contrast scales distances from mid-grey: -50 halves the spread exactly; +60 widens it
        // until the ends clip.
        let spread = Harness.standardDeviation(Self.plain)
        #expect(abs(Harness.standardDeviation(try Self.pixels("e_contrast:-50")) / spread - 0.5) < 0.02)
        #expect(Harness.standardDeviation(try Self.pixels("e_contrast:60")) > spread * 1.2)
        let desaturated = try Self.pixels("e_saturation:-100")
        let p = Harness.pixel(desaturated, 50, 60)
        #expect(abs(p[0] - p[2]) <= 3)
        let tinted = try Self.pixels("e_tint:80:red")
        #expect(Harness.mean(tinted, channel: 0) > Harness.mean(tinted, channel: 2) + 20)
        let colorized = try Self.pixels("e_colorize:70,co_blue")
        #expect(Harness.mean(colorized, channel: 2) > Harness.mean(colorized, channel: 0) + 60)
    }

    @Test func spatialEffects() throws {
        #expect(Harness.standardDeviation(try Self.pixels("e_blur:300")) < Harness.standardDeviation(Self.plain) * 0.8)
        #expect(Harness.standardDeviation(try Self.pixels("e_sharpen:600")) > Harness.standardDeviation(Self.plain))
        let pixelated = try Self.pixels("e_pixelate:10")
        #expect(Harness.pixel(pixelated, 20, 20) == Harness.pixel(pixelated, 29, 29))
        #expect(Harness.pixel(pixelated, 20, 20) == Harness.pixel(pixelated, 20, 25))
        let vignette = try Self.pixels("e_vignette:100")
        let cornerRatio = Double(Harness.pixel(vignette, 1, 1)[0] + 1) / Double(Harness.pixel(Self.plain, 1, 1)[0] + 1)
        let centreRatio = Double(Harness.pixel(vignette, 51, 60)[0] + 1) / Double(Harness.pixel(Self.plain, 51, 60)[0] + 1)
        #expect(cornerRatio < 0.3 && centreRatio > 0.9)
    }

    @Test func geometryOfRotationsFlipsAndBorders() throws {
        let turned = try Self.pixels("a_90")
        #expect(turned.width == Self.plain.height && turned.height == Self.plain.width)
        // Clockwise: the bottom-left pixel becomes the top-left.
        #expect(zip(Harness.pixel(turned, 0, 0), Harness.pixel(Self.plain, 0, Self.plain.height - 1)).allSatisfy { abs($0 - $1) <= 2 })
        let flipped = try Self.pixels("a_hflip")
        #expect(Harness.pixel(flipped, 0, 30) == Harness.pixel(Self.plain, Self.plain.width - 1, 30))
        let bordered = try Self.pixels("bo_5px_solid_red")
        #expect(bordered.width == Self.plain.width + 10 && Harness.pixel(bordered, 2, 50) == [255, 0, 0])
        let tilted = try Self.pixels("a_20,b_black")
        #expect(Harness.pixel(tilted, 0, 0) == [0, 0, 0])
    }

    @Test func transparencySteps() throws {
        let circle = try Self.pixels("r_max")
        #expect(circle.bands == 4 && Harness.pixel(circle, 0, 0)[3] == 0 && Harness.pixel(circle, 51, 60)[3] == 255)
        let corners = try Self.pixels("r_20,b_rgb:00ff00")
        #expect(Harness.pixel(corners, 0, 0) == [0, 255, 0] && Harness.pixel(corners, 60, 60) != [0, 255, 0])
        let faded = try Self.pixels("o_50")
        #expect(abs(Harness.pixel(faded, 40, 40)[3] - 128) <= 1)
        let flattened = try Self.pixels("r_max/b_yellow")
        #expect(flattened.bands == 3 && Harness.pixel(flattened, 0, 0) == [255, 255, 0])
        let padded = try Self.pixels("c_pad,w_160,h_160")
        #expect(padded.bands == 4 && Harness.pixel(padded, 2, 80)[3] == 0 && Harness.pixel(padded, 80, 80)[3] == 255)
        let paddedJPEG = try Harness.pixels(Harness.render(Self.photo, "c_fit,w_120,h_120/c_pad,w_160,h_160/f_jpg").1.outputs[0].data)
        #expect(Harness.pixel(paddedJPEG, 2, 80).allSatisfy { $0 > 250 })
    }

    @Test func trimRemovesAUniformBorder() throws {
        let trimmed = try Self.pixels("c_lpad,w_200,h_200,b_white/e_trim")
        #expect(abs(trimmed.width - Self.plain.width) <= 2 && abs(trimmed.height - Self.plain.height) <= 2)
        // And what follows a trim is planned on the trimmed size.
        let (plan, result) = try Harness.render(Self.photo, "c_fit,w_120,h_120/c_lpad,w_200,h_200,b_white/e_trim/c_scale,w_50/f_png")
        #expect(plan.outputs[0].size == nil)
        #expect(result.outputs[0].metadata.width == 50)
    }

    @Test func imageAndTextOverlays() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-overlays-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("brand"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(contentsOf: Paths.fixture("formats/png-palette-trns.png")).write(to: folder.appendingPathComponent("brand/logo.png"))
        let loader = FileOverlayLoader(root: folder)
        let logo = try Self.pixels("l_brand:logo/c_scale,w_20/fl_layer_apply,g_south_east,x_4,y_4", overlays: loader)
        #expect(logo.width == Self.plain.width)
        // The logo's 20x20 sits 4 pixels in from the bottom-right corner; outside it nothing changed.
        var changedInside = 0
        for y in (logo.height - 24)..<(logo.height - 4) {
            for x in (logo.width - 24)..<(logo.width - 4) where Harness.pixel(logo, x, y) != Harness.pixel(Self.plain, x, y) { changedInside += 1 }
        }
        #expect(changedInside > 100)
        #expect(Harness.pixel(logo, 10, 10) == Harness.pixel(Self.plain, 10, 10))
        #expect(throws: DeriveError.self) { try Self.pixels("l_nope/fl_layer_apply", overlays: loader) }
        // An overlay that is not an image is named in the error, not taken for the source, and
        // the failing output is named too.
        try Data("not an image".utf8).write(to: folder.appendingPathComponent("brand/broken.png"))
        do {
            _ = try Self.pixels("l_brand:broken/fl_layer_apply", overlays: loader)
            Issue.record("a broken overlay was accepted")
        } catch let error as DeriveError {
            #expect(error.detail.hasPrefix(#"outputs[0] "default": overlay ""#) && error.detail.contains("broken.png"), "\(error)")
        }

        let text = try Self.pixels("l_text:DejaVu%20Sans_24_bold:HI,co_rgb:ff00ff/fl_layer_apply,g_north")
        var magenta = 0
        for y in 0..<30 {
            for x in 0..<text.width {
                let p = Harness.pixel(text, x, y)
                if p[0] > 200 && p[1] < 60 && p[2] > 200 { magenta += 1 }
            }
        }
        #expect(magenta > 40)
    }

    /// `c_fit,w_<n>` beside `l_text` sets the text in lines no wider than n, as Cloudinary does,
    /// instead of rendering one line and shrinking it.
    @Test func textBesideCFitWrapsToTheWidth() throws {
        _ = Self.plain
        let words = "one two three four five six seven"
        let line = try OperationRunner.text(TextLayer(text: words, font: "DejaVu Sans", size: 24))
        let wrapped = try OperationRunner.text(TextLayer(text: words, font: "DejaVu Sans", size: 24, width: 120))
        #expect(line.width > 120)
        #expect(wrapped.width <= 120 && wrapped.height >= 2 * line.height, "\(wrapped.width)x\(wrapped.height) vs \(line.width)x\(line.height)")
        // Through the whole pipeline the glyphs keep their size: the tallest letters are as tall
        // as unwrapped ones, so the overlay covers more rows than one line would.
        let chain = "l_text:DejaVu%20Sans_24:one%20two%20three%20four%20five%20six%20seven,co_rgb:ff00ff,c_fit,w_90/fl_layer_apply,g_north"
        let text = try Self.pixels(chain)
        let rows = (0..<text.height).filter { y in (0..<text.width).contains { x in
            let p = Harness.pixel(text, x, y)
            return p[0] > 200 && p[1] < 60 && p[2] > 200
        } }
        #expect((rows.max() ?? 0) > line.height, "magenta rows \(rows.min() ?? -1)...\(rows.max() ?? -1)")
    }

    /// `b_<colour>,c_pad,w_1.0` puts a transparent image on the colour, though it cannot pad.
    @Test func aOneDimensionPadKeepsItsColour() throws {
        let flattened = try Self.pixels("r_max/b_yellow,c_pad,w_1.0")
        #expect(flattened.bands == 3 && Harness.pixel(flattened, 0, 0) == [255, 255, 0])
        #expect(flattened.width == Self.plain.width && flattened.height == Self.plain.height)
    }

    @Test func validateStepsFailTheJobPermanently() throws {
        #expect(throws: ValidationError.self) {
            _ = try Harness.render(Self.photo, #"[{"validate": {"minWidth": 4000}}]"#)
        }
    }
}

@Suite struct BreakpointEngineTests {
    @Test func byteSpacedBreakpointsAreFoundByEncoding() throws {
        let (_, result) = try Harness.render("photos/jolla-phone.jpg",
            #"{"chain": [], "format": "jpeg", "quality": 70, "breakpoints": {"minWidth": 200, "maxWidth": 1200, "bytes": 25000, "maxCount": 6}}"#)
        let outputs = result.outputs
        #expect(outputs.count >= 3 && outputs.count <= 6)
        let widths = outputs.compactMap(\.breakpointWidth)
        #expect(widths == widths.sorted() && widths.last == 1200 && widths.first! >= 200)
        for (smaller, larger) in zip(outputs, outputs.dropFirst()) {
            #expect(larger.metadata.bytes - smaller.metadata.bytes >= 25000)
        }
        for output in outputs { #expect(output.metadata.width == output.breakpointWidth) }
    }

    @Test func stepSpacedBreakpointsFollowThePlan() throws {
        let (plan, result) = try Harness.render("photos/jolla-phone.jpg",
            #"{"chain": "c_fill,ar_1:1,w_900", "format": "webp", "breakpoints": {"minWidth": 300, "maxWidth": 1000, "step": 300}}"#)
        #expect(result.outputs.map(\.breakpointWidth) == [300, 600, 900])
        #expect(result.outputs.map { Size($0.metadata.width, $0.metadata.height) } == plan.outputs.map { $0.size! })
    }
}

@Suite struct MetadataTests {
    @Test func sourceAndOutputsRecordWhatTransformsMDLists() throws {
        let source = try Harness.source("photos/kodak-pixpro-az521.jpg")
        let (_, result) = try Harness.render(source, "c_fill,w_300,h_200/f_webp")
        let s = result.source
        #expect(s.sha256 == ContentHashReference.sha256(source.bytes))
        #expect(s.bytes == 2808284 && s.inspection.facts.width == 4608 && s.inspection.colorSpace == "srgb")
        #expect(s.inspection.exif["make"] == "EASTMAN KODAK COMPANY" && s.inspection.exif["takenAt"] == "2013:07:31 11:41:31")
        let o = result.outputs[0]
        #expect(o.metadata.sha256 == ContentHashReference.sha256(o.data) && o.metadata.bytes == o.data.count)
        #expect(o.metadata.blurhash.count == 28 && o.metadata.dominantColor.hasPrefix("#"))
        #expect(o.identity == (try Harness.outputs("c_fill,w_300,h_200/f_webp"))[0].identity)
        let adobe = try Harness.render("formats/jpeg-icc-adobergb.jpg", "w_10/f_jpg").1.source.inspection
        #expect(adobe.iccDescription == "Adobe RGB (1998)")
    }

    @Test func perceptualHashesFindTheSamePictureAtAnotherSize() throws {
        let small = try Harness.render("orientation/landscape_1.jpg", "w_100/f_jpg").1.source.perceptualHash
        let rotated = try Harness.render("orientation/landscape_6.jpg", "w_100/f_jpg").1.source.perceptualHash
        let other = try Harness.render("photos/jolla-phone.jpg", "w_100/f_jpg").1.source.perceptualHash
        #expect(DifferenceHash.distance(small, rotated)! <= 6)
        #expect(DifferenceHash.distance(small, other)! > 16)
    }
}

/// Independent SHA-256 for checking the OpenSSL-backed content hashes.
enum ContentHashReference {
    static func sha256(_ bytes: [UInt8]) -> String { DeriveLanguage.SHA256.hex(bytes) }
}
