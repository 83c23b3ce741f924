import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

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
