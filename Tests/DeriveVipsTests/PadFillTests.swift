import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `b_blurred` and `b_auto` on a real photograph: Grace Hopper's portrait padded to a 400x100
/// banner. The photo in the middle is exactly what a colour pad places there; the bars beside
/// it are the blurred photo (many colours, soft) or one colour taken from it.
@Suite struct PadFillTests {
    static func render(_ chain: String) throws -> PixelBuffer {
        try Harness.pixels(Harness.render(ToneEffectTests.photo, chain + "/f_png").1.outputs[0].data)
    }

    /// The columns of the left bar (the photo is 85 px wide in the middle of 400).
    static let bar = 0..<150
    static func barColours(_ p: PixelBuffer) -> Set<[Int]> {
        Set(bar.flatMap { x in (0..<p.height).map { y in Array(Harness.pixel(p, x, y).prefix(3)) } })
    }

    static func middleIsThePhoto(_ p: PixelBuffer, _ plain: PixelBuffer) -> Bool {
        (170..<230).allSatisfy { x in (0..<p.height).allSatisfy { y in Harness.pixel(p, x, y).prefix(3) == Harness.pixel(plain, x, y).prefix(3) } }
    }

    @Test func blurredBarsAreTheSoftenedPhoto() throws {
        let plain = try Self.render("c_pad,w_400,h_100,b_black")
        let blurred = try Self.render("c_pad,w_400,h_100,b_blurred")
        #expect(blurred.width == 400 && blurred.height == 100)
        #expect(Self.middleIsThePhoto(blurred, plain))
        #expect(Self.barColours(plain).count == 1)
        #expect(Self.barColours(blurred).count > 200, "\(Self.barColours(blurred).count) colours in the bar")
        // Stronger blur: smoother bars (smaller differences between neighbours).
        func roughness(_ p: PixelBuffer) -> Double {
            var sum = 0
            for x in 1..<150 { for y in 0..<p.height { sum += abs(Harness.pixel(p, x, y)[1] - Harness.pixel(p, x - 1, y)[1]) } }
            return Double(sum) / Double(149 * p.height)
        }
        let strong = try Self.render("c_pad,w_400,h_100,b_blurred:1000")
        #expect(roughness(strong) < roughness(blurred), "\(roughness(strong)) vs \(roughness(blurred))")
        // Darker with a negative brightness.
        let dark = try Self.render("c_pad,w_400,h_100,b_blurred:100:-50")
        func barLuma(_ p: PixelBuffer) -> Double {
            Double(Self.bar.flatMap { x in (0..<p.height).map { Harness.pixel(p, x, $0)[1] } }.reduce(0, +)) / Double(Self.bar.count * p.height)
        }
        #expect(barLuma(dark) < barLuma(blurred) * 0.6, "\(barLuma(dark)) vs \(barLuma(blurred))")
    }

    @Test func autoBarsAreOneColourFromThePhoto() throws {
        let plain = try Self.render("c_pad,w_400,h_100,b_black")
        // The border colour: the median of the fitted photo's outermost ring, per channel.
        let fitted = try Self.render("c_fit,w_400,h_100")
        var ring: [[Int]] = []
        for x in 0..<fitted.width { ring.append(Harness.pixel(fitted, x, 0)); ring.append(Harness.pixel(fitted, x, fitted.height - 1)) }
        for y in 0..<fitted.height { ring.append(Harness.pixel(fitted, 0, y)); ring.append(Harness.pixel(fitted, fitted.width - 1, y)) }
        let median = (0..<3).map { c in ring.map { $0[c] }.sorted()[ring.count / 2] }
        for (mode, check) in [("b_auto", { (c: [Int]) in (0..<3).allSatisfy { abs(c[$0] - median[$0]) <= 12 } }),
                              ("b_auto:border_contrast", { (c: [Int]) in c == [0, 0, 0] || c == [255, 255, 255] })] {
            let padded = try Self.render("c_pad,w_400,h_100,\(mode)")
            #expect(Self.middleIsThePhoto(padded, plain), "\(mode)")
            let colours = Self.barColours(padded)
            #expect(colours.count == 1 && check(colours.first!), "\(mode): \(colours.prefix(3)), border median \(median)")
        }
    }

    /// The mean colour of a column of the bars.
    static func column(_ p: PixelBuffer, _ x: Int) -> [Double] {
        (0..<3).map { c in Double((0..<p.height).map { Harness.pixel(p, x, $0)[c] }.reduce(0, +)) / Double(p.height) }
    }

    /// b_auto's gradients on the banner: the photo in the middle as a colour pad places it; the
    /// bars run from the colour of the photo's left side to its right side's (horizontal), each
    /// end within a few levels of what GradientPad reads from the photo, changing steadily
    /// between; vertical gradients change down the bars and not across; _contrast ends are
    /// black or white.
    @Test(arguments: ["b_auto:border_gradient", "b_auto:predominant_gradient", "b_auto:border_gradient:4", "b_auto:predominant_gradient:2:vertical",
                      "b_auto:border_gradient_contrast:2:diagonal_desc"])
    func gradientBarsRunBetweenTheColoursOfThePhotosSides(fill: String) throws {
        let plain = try Self.render("c_pad,w_400,h_100,b_black")
        let padded = try Self.render("c_pad,w_400,h_100,\(fill)")
        #expect(padded.width == 400 && padded.height == 100)
        #expect(Self.middleIsThePhoto(padded, plain), "\(fill)")
        guard case .resize(let r)? = CloudinaryParser().parse("c_pad,w_400,h_100,\(fill)").steps.first, case .gradient(let g)? = r.padFill else {
            Issue.record("\(fill) did not parse to a gradient")
            return
        }
        // The colours as the engine reads them, from the fitted photo's preview.
        let fitted = try Harness.render(ToneEffectTests.photo, "c_fit,w_400,h_100/f_png").1.outputs[0].data
        let preview = try withBytes(fitted) { (buffer) throws(DeriveError) -> PixelBuffer in
            let image = try VipsDecoder.header(buffer, format: .png)
            return try image.resized(to: VipsEngine.previewSize(image.frameSize)).cast("uchar").pixelBuffer()
        }
        let stops = GradientPad.colors(of: preview, gradient: g)
        func near(_ got: [Int], _ c: Color, _ tolerance: Int = 10) -> Bool {
            abs(got[0] - Int(c.red)) <= tolerance && abs(got[1] - Int(c.green)) <= tolerance && abs(got[2] - Int(c.blue)) <= tolerance
        }
        switch g.direction {
        case .horizontal:
            #expect(near(Harness.pixel(padded, 0, 50), stops.first!) && near(Harness.pixel(padded, 399, 50), stops.last!),
                    "\(Harness.pixel(padded, 0, 50)) .. \(Harness.pixel(padded, 399, 50)) vs \(stops)")
            // Down a column, one colour.
            #expect(Set((0..<100).map { Array(Harness.pixel(padded, 20, $0).prefix(3)) }).count == 1)
        case .vertical:
            #expect(near(Harness.pixel(padded, 10, 0), stops.first!) && near(Harness.pixel(padded, 10, 99), stops.last!),
                    "\(Harness.pixel(padded, 10, 0)) .. \(Harness.pixel(padded, 10, 99)) vs \(stops)")
            #expect(Set((0..<150).map { Array(Harness.pixel(padded, $0, 30).prefix(3)) }).count == 1)
        case .diagonalDesc, .diagonalAsc:
            #expect(near(Harness.pixel(padded, 0, 0), stops.first!) && near(Harness.pixel(padded, 399, 99), stops.last!))
            #expect(stops.allSatisfy { $0 == .black || $0 == .white })
        }
        if stops.first != stops.last, g.direction == .horizontal, g.colors == 2 {
            // Steady: each channel moves monotonically along the left bar.
            for c in 0..<3 where stops.first!.components[c] != stops.last!.components[c] {
                let up = stops.last!.components[c] > stops.first!.components[c]
                let values = (0..<150).map { Self.column(padded, $0)[c] }
                #expect(zip(values, values.dropFirst()).allSatisfy { up ? $1 >= $0 - 0.5 : $1 <= $0 + 0.5 }, "channel \(c)")
            }
        }
    }
}

extension Color {
    var components: [Int] { [Int(red), Int(green), Int(blue)] }

}

/// b_auto with a palette (issue 30), on the same banner as PadFillTests.
@Suite struct AutoPaletteTests {
    /// b_auto with a palette (issue 30): the bars are the palette colour nearest the one the
    /// photo gives (farthest with _contrast); a gradient runs between palette colours only.
    @Test func aPaletteRestrictsThePaddingsColours() throws {
        let palette = [[255, 0, 0], [0, 128, 0], [0, 0, 255], [255, 255, 255]]
        func distance(_ a: [Int], _ c: [Int]) -> Int {
            var sum = 0
            for i in 0..<3 { sum += (a[i] - c[i]) * (a[i] - c[i]) }
            return sum
        }
        func nearest(_ c: [Int]) -> [Int] { palette.min { distance($0, c) < distance($1, c) }! }
        let free = try PadFillTests.render("c_pad,w_400,h_100,b_auto")
        let restricted = try PadFillTests.render("c_pad,w_400,h_100,b_auto:border:palette_red_green_blue_white")
        let own = try #require(PadFillTests.barColours(free).first)
        #expect(PadFillTests.barColours(restricted) == [nearest(own)], "\(PadFillTests.barColours(restricted)), photo's \(own)")
        let contrast = try PadFillTests.render("c_pad,w_400,h_100,b_auto:border_contrast:palette_red_green_blue_white")
        #expect(PadFillTests.barColours(contrast).count == 1 && PadFillTests.barColours(contrast).first != nearest(own))
        let gradient = try PadFillTests.render("c_pad,w_400,h_100,b_auto:predominant_gradient:palette_red_green_blue_white")
        // Both ends of the gradient are palette colours.
        #expect(palette.contains(Array(Harness.pixel(gradient, 0, 50).prefix(3))) && palette.contains(Array(Harness.pixel(gradient, 399, 50).prefix(3))),
                "\(Harness.pixel(gradient, 0, 50)) .. \(Harness.pixel(gradient, 399, 50))")
    }
}
