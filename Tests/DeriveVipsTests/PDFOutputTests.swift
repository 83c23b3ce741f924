import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

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
