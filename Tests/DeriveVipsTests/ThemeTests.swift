import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_theme` on pixels: a page (white, with black strokes antialiased as text is, and a real
/// photograph set into it) takes the new background colour, its strokes keep their contrast,
/// and the photograph stays as it was; photosensitivity 0 changes the whole image and 200
/// nothing; a photograph on its own is left alone.
@Suite struct ThemeTests {
    static let size = (width: 480, height: 320)
    /// Where the photograph is set: 160x120 at (280, 176).
    static let photoBox = Rect(x: 280, y: 176, width: 160, height: 120)

    /// The page: white, rows of black dashes 3 px tall with a grey antialiased row above and
    /// below (as text's strokes are), and a real photograph in `photoBox`.
    static func page() throws -> (SourceImage, PixelBuffer) {
        let w = size.width, h = size.height
        var pixels = [UInt8](repeating: 255, count: w * h * 3)
        func set(_ x: Int, _ y: Int, _ v: UInt8) {
            let i = (y * w + x) * 3
            pixels[i] = v; pixels[i + 1] = v; pixels[i + 2] = v
        }
        for line in 0..<6 {
            let top = 24 + line * 20
            for x in 24..<440 where (x / 12) % 3 != 2 {
                set(x, top, 160)
                for y in (top + 1)...(top + 3) { set(x, y, 0) }
                set(x, top + 4, 160)
            }
        }
        let (_, rendered) = try Harness.render("photos/jolla-phone.jpg", "c_fill,w_\(photoBox.width),h_\(photoBox.height)/f_png")
        let photo = try Harness.pixels(rendered.outputs[0].data)
        for y in 0..<photoBox.height {
            for x in 0..<photoBox.width {
                let from = (y * photo.width + x) * photo.bands, to = ((photoBox.y + y) * w + photoBox.x + x) * 3
                for band in 0..<3 { pixels[to + band] = photo.pixels[from + band] }
            }
        }
        let buffer = PixelBuffer(width: w, height: h, bands: 3, pixels: pixels)
        return (try AutoQualityTests.png(buffer), buffer)
    }

    static func render(_ source: SourceImage, _ chain: String) throws -> PixelBuffer {
        let (_, result) = try Harness.render(source, chain + "/f_png")
        return try Harness.pixels(result.outputs[0].data)
    }

    static func pixel(_ p: PixelBuffer, _ x: Int, _ y: Int) -> [Int] {
        let i = (y * p.width + x) * p.bands
        return p.pixels[i..<(i + 3)].map(Int.init)
    }

    /// The mean absolute difference of the two images inside `box`, inset by `margin`.
    static func meanDifference(_ a: PixelBuffer, _ b: PixelBuffer, in box: Rect, margin: Int) -> Double {
        var total = 0, count = 0
        for y in (box.y + margin)..<(box.y + box.height - margin) {
            for x in (box.x + margin)..<(box.x + box.width - margin) {
                total += zip(pixel(a, x, y), pixel(b, x, y)).map { abs($0 - $1) }.reduce(0, +)
                count += 3
            }
        }
        return Double(total) / Double(count)
    }

    @Test func thePageTurnsDarkItsStrokesLightAndThePhotographStays() throws {
        let (source, original) = try Self.page()
        let p = try Self.render(source, "e_theme:color_black")
        #expect(Self.pixel(p, 2, 2).allSatisfy { $0 <= 3 }, "corner \(Self.pixel(p, 2, 2))")
        #expect(Self.pixel(p, 100, 200).allSatisfy { $0 <= 3 }, "page \(Self.pixel(p, 100, 200))")
        // A stroke's core (black) is now near white.
        #expect(Self.pixel(p, 40, 26).allSatisfy { $0 >= 240 }, "stroke \(Self.pixel(p, 40, 26))")
        let photo = Self.meanDifference(p, original, in: Self.photoBox, margin: 2 * ThemeMask.cell)
        #expect(photo < 1, "the photograph changed by \(photo) on average")
    }

    /// A background on the same side of mid grey (red, L 53, from white): shifted, not
    /// mirrored, so black strokes stay dark.
    @Test func aBackgroundOfTheSameLightnessSideKeepsTheStrokesDark() throws {
        let (source, original) = try Self.page()
        let p = try Self.render(source, "e_theme:color_red")
        #expect(zip(Self.pixel(p, 2, 2), [255, 0, 0]).allSatisfy { abs($0 - $1) <= 10 }, "corner \(Self.pixel(p, 2, 2))")
        #expect(Self.pixel(p, 40, 26).allSatisfy { $0 <= 60 }, "stroke \(Self.pixel(p, 40, 26))")
        #expect(Self.meanDifference(p, original, in: Self.photoBox, margin: 2 * ThemeMask.cell) < 1)
    }

    @Test func photosensitivityZeroChangesTheWholeImageAndTwoHundredNothing() throws {
        let (source, original) = try Self.page()
        let all = try Self.render(source, "e_theme:color_black:photosensitivity_0")
        #expect(Self.meanDifference(all, original, in: Self.photoBox, margin: 0) > 30)
        let none = try Self.render(source, "e_theme:color_black:photosensitivity_200")
        let whole = Rect(x: 0, y: 0, width: Self.size.width, height: Self.size.height)
        #expect(Self.meanDifference(none, original, in: whole, margin: 0) == 0)
    }

    /// A photograph with no page around it: nothing in it is a page's background, so it stays
    /// (its predominant colour's patches are a photograph's, too small and textured).
    @Test func aPhotographAloneIsLeftAlone() throws {
        let (_, plain) = try Harness.render("photos/kodak-pixpro-az521.jpg", "c_fit,w_800,h_800/f_png")
        let (_, themed) = try Harness.render("photos/kodak-pixpro-az521.jpg", "c_fit,w_800,h_800/e_theme:color_black/f_png")
        let a = try Harness.pixels(plain.outputs[0].data), b = try Harness.pixels(themed.outputs[0].data)
        var changed = 0
        for i in stride(from: 0, to: a.pixels.count, by: a.bands) where abs(Int(a.pixels[i]) - Int(b.pixels[i])) > 40 { changed += 1 }
        #expect(Double(changed) / Double(a.width * a.height) < 0.01, "\(changed) pixels changed")
    }

    /// A page larger than the working copy's 1024 px, at a width the shrunk copy's cells fall
    /// short of (2065 px: shrunk by 3 to 688, 86 cells of 24 px, 2064): every pixel is themed,
    /// the last column too.
    @Test func aLargePageIsThemedToItsLastColumn() throws {
        var pixels = [UInt8](repeating: 255, count: 2065 * 300 * 3)
        for y in stride(from: 40, to: 260, by: 30) {
            for x in 40..<2000 where (x / 40) % 2 == 0 { for row in y..<(y + 4) { for band in 0..<3 { pixels[(row * 2065 + x) * 3 + band] = 0 } } }
        }
        let source = try AutoQualityTests.png(PixelBuffer(width: 2065, height: 300, bands: 3, pixels: pixels))
        let p = try Self.render(source, "e_theme:color_black")
        #expect(p.width == 2065 && p.height == 300, "\(p.width)x\(p.height)x\(p.bands)")
        for (x, y) in [(0, 0), (2064, 0), (2064, 299), (1000, 150)] {
            #expect(Self.pixel(p, x, y).allSatisfy { $0 <= 3 }, "(\(x), \(y)) \(Self.pixel(p, x, y))")
        }
        #expect(Self.pixel(p, 81, 41).allSatisfy { $0 >= 240 }, "stroke \(Self.pixel(p, 81, 41))")
    }

    /// An image of a couple of cells is still a page.
    @Test func aTinyPageIsThemed() throws {
        let source = try AutoQualityTests.png(PixelBuffer(width: 8, height: 16, bands: 3, pixels: [UInt8](repeating: 255, count: 8 * 16 * 3)))
        #expect(Self.pixel(try Self.render(source, "e_theme:color_black"), 4, 8).allSatisfy { $0 <= 3 })
    }

    /// Alpha is kept as it was, transparent and opaque.
    @Test func alphaIsKept() throws {
        let (_, result) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/r_max/e_theme:color_black/f_png")
        let p = try Harness.pixels(result.outputs[0].data)
        #expect(p.bands == 4 && p.pixels[3] == 0 && p.pixels[(60 * p.width + 60) * 4 + 3] == 255)
    }
}
