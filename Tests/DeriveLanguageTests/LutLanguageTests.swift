@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// `l_lut:<file>` (issue 16, item 3): the step in strings and JSON, and the `.cube` and `.3dl`
/// readers and interpolation.
@Suite struct LutLanguageTests {
    @Test func stringAndJSONAndRoundTrip() throws {
        #expect(try ToneEffectTests.step("l_lut:looks:warm.cube") == .lut("looks/warm.cube"))
        #expect(try ToneEffectTests.step(json: #"{"lut": "looks/warm.cube"}"#) == .lut("looks/warm.cube"))
        try expectRoundTrip("c_scale,w_100/l_lut:film.3dl", printed: "c_scale,w_100/l_lut:film.3dl")
        #expect(CloudinaryParser().parse("l_lut:a::b").issues.map(\.reason) == ["l_lut:a::b: unknown to Cloudinary (a LUT is a file name such as l_lut:warm.cube or l_lut:folder:film.3dl)"])
        // A step, not a layer: no fl_layer_apply closes it, and a layer after it still pairs.
        #expect(CloudinaryParser().parse("l_lut:a.cube/l_logo/fl_layer_apply").issues.isEmpty)
    }

    @Test func bothFormatsReadTheSameTable() throws {
        let swap: (Double, Double, Double) -> (Double, Double, Double) = { r, g, b in (b, g, r) }
        let cube = try Lut3D.parse(Array(LutFiles.cube(5, swap).utf8), name: "swap.cube")
        let dl = try Lut3D.parse(Array(LutFiles.threeDL(5, swap).utf8), name: "swap.3dl")
        #expect(cube.size == 5 && dl.size == 5)
        #expect(zip(cube.table, dl.table).allSatisfy { abs($0 - $1) < 0.001 })
        var pixels: [UInt8] = [200, 100, 30, 255, 0, 0, 255, 128]
        cube.apply(to: &pixels, bands: 4)
        #expect(pixels == [30, 100, 200, 255, 255, 0, 0, 128])
    }

    /// Trilinear interpolation is exact on a linear map: inversion through a 2-point LUT.
    @Test func interpolationIsExactOnALinearMap() throws {
        let invert = try Lut3D.parse(Array(LutFiles.cube(2) { (1 - $0, 1 - $1, 1 - $2) }.utf8), name: "invert.cube")
        var pixels: [UInt8] = []
        for v in 0..<255 {
            pixels += [UInt8(v), UInt8(255 - v), UInt8((v * 7) % 256)]
        }
        let before = pixels
        invert.apply(to: &pixels, bands: 3)
        let worst = zip(pixels, before).map { (after: UInt8, original: UInt8) -> Int in abs(Int(after) - (255 - Int(original))) }.max() ?? 0
        #expect(worst <= 1)
    }

    @Test
    func aFileLargerThanTheCapIsRefusedBeforeItIsRead() {
        let bytes = [UInt8](repeating: 0x30, count: Lut3D.maxBytes + 1)
        do { _ = try Lut3D.parse(bytes, name: "huge.cube"); Issue.record("a LUT past the cap was read") } catch {
            #expect(error.code == .unsupportedFormat && error.detail.hasSuffix("l_lut reads at most 16 MiB"), "\(error)")
        }
    }

    @Test(arguments: [
        ("LUT_1D_SIZE 4\n0 0 0\n", "is a 1D LUT; l_lut takes 3D LUTs (LUT_3D_SIZE)"),
        ("LUT_3D_SIZE 2\n0 0 0\n", "has 1 entries; LUT_3D_SIZE 2 needs 8"),
        ("LUT_3D_SIZE 2\nred green blue\n", "cannot read the line \"red green blue\""),
        ("LUT_3D_SIZE 2\n0 0 0\u{0}\n", "is not text (a control byte at offset 19)"),
    ])
    func brokenCubesAreRefused(text: String, reason: String) {
        #expect(throws: DeriveError.self) { try Lut3D.parse(Array(text.utf8), name: "bad.cube") }
        do { _ = try Lut3D.parse(Array(text.utf8), name: "bad.cube") } catch {
            #expect(error.code == .unsupportedFormat && error.detail.hasSuffix(reason), "\(error)")
        }
    }
}
