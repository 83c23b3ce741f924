import DeriveJobs
import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `l_lut:` on a real photograph, the LUT files in an overlay folder: an inverting .cube gives
/// what e_negate gives, a red-blue swap in .3dl swaps the photo's channels, and alpha stays.
@Suite struct LutTests {
    static func render(_ chain: String, files: [String: String]) throws -> PixelBuffer {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-luts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        let (_, result) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/r_max/\(chain)/f_png", overlays: FileOverlayLoader(root: folder))
        return try Harness.pixels(result.outputs[0].data)
    }

    @Test func anInvertingCubeIsANegativeAndASwapSwaps() throws {
        let invert = LutFiles.cube(2) { (1 - $0, 1 - $1, 1 - $2) }
        let swap = LutFiles.threeDL(9) { r, g, b in (b, g, r) }
        let files = ["invert.cube": invert, "swap.3dl": swap]
        let plain = ToneEffectTests.plain
        let negated = try ToneEffectTests.pixels("e_negate")
        let inverted = try Self.render("l_lut:invert.cube", files: files)
        #expect(inverted.width == plain.width && inverted.height == plain.height && inverted.bands == 4)
        #expect(ArtisticEffectVipsTests.alphas(inverted) == ArtisticEffectVipsTests.alphas(plain))
        var worst = 0
        for i in stride(from: 0, to: plain.pixels.count, by: 4) where plain.pixels[i + 3] == 255 {
            for c in 0..<3 { worst = max(worst, abs(Int(inverted.pixels[i + c]) - Int(negated.pixels[i + c]))) }
        }
        #expect(worst <= 1, "largest difference from e_negate: \(worst)")
        let swapped = try Self.render("l_lut:swap.3dl", files: files)
        var off = 0
        for i in stride(from: 0, to: plain.pixels.count, by: 4) where plain.pixels[i + 3] == 255 {
            if abs(Int(swapped.pixels[i]) - Int(plain.pixels[i + 2])) > 1 || abs(Int(swapped.pixels[i + 2]) - Int(plain.pixels[i])) > 1
                || abs(Int(swapped.pixels[i + 1]) - Int(plain.pixels[i + 1])) > 1 { off += 1 }
        }
        #expect(off == 0, "\(off) pixels not swapped")
    }

    @Test func aMissingOrBrokenLutFailsNamingIt() throws {
        #expect(throws: DeriveError.self) { try Self.render("l_lut:none.cube", files: [:]) }
        do {
            _ = try Self.render("l_lut:bad.cube", files: ["bad.cube": "LUT_3D_SIZE 2\n1 2\n"])
            Issue.record("a broken LUT was applied")
        } catch {
            let e = try #require(error as? DeriveError)
            #expect(e.code == .unsupportedFormat && e.detail.contains("l_lut:bad.cube"), "\(e)")
        }
    }
}
