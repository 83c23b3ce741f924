import DeriveLanguage
@testable import DeriveVips
import Testing

/// Alignment, line spacing, strokes, antialias_none and fl_text_no_trim as a user sees them:
/// white text of two lines ("Wide line", then "i") on Grace Hopper fitted into 240x240, placed
/// in the top-left corner 10 px in. The ink is found by comparing with the photo alone; the
/// photo far from the text (the lower half) must not change.
@Suite struct TextLayoutVipsTests {
    static let photo = "photos/grace_hopper_noexif.jpg"

    static func render(_ style: String, beside: String = "") throws -> PixelBuffer {
        let layer = "/l_text:DejaVu%20Sans_24\(style):Wide%20line%0Ai,co_white\(beside)/fl_layer_apply,g_north_west,x_10,y_10"
        let (_, result) = try Harness.render(photo, "c_fit,w_240,h_240\(layer)/f_png")
        return try Harness.pixels(result.outputs[0].data)
    }

    static let plain = Result { try Harness.pixels(Harness.render(photo, "c_fit,w_240,h_240/f_png").1.outputs[0].data) }

    /// Where the text changed the photo: the changed pixels, their box and each line's.
    struct Ink {
        var changed: [(x: Int, y: Int)] = []
        var rows: [Int] { Array(Set(changed.map(\.y))).sorted() }
        var box: Rect {
            let xs = changed.map(\.x), ys = changed.map(\.y)
            return Rect(x: xs.min()!, y: ys.min()!, width: xs.max()! - xs.min()! + 1, height: ys.max()! - ys.min()! + 1)
        }
        /// The rows after the first gap of untouched rows: the second line.
        var secondLine: [(x: Int, y: Int)] {
            let r = rows
            guard let gap = zip(r, r.dropFirst()).first(where: { $1 > $0 + 1 }) else { return [] }
            return changed.filter { $0.y > gap.0 }
        }
    }

    static func ink(_ image: PixelBuffer) throws -> Ink {
        let base = try plain.get()
        var ink = Ink()
        for y in 0..<image.height {
            for x in 0..<image.width where zip(Harness.pixel(image, x, y), Harness.pixel(base, x, y)).contains(where: { abs($0 - $1) > 24 }) {
                ink.changed.append((x, y))
            }
        }
        return ink
    }

    /// The lower half, far from the text, is the photo's.
    static func expectPhotoKeptFarFromTheText(_ image: PixelBuffer, _ label: String) throws {
        let base = try plain.get()
        var same = 0, total = 0
        for y in (image.height / 2)..<image.height {
            for x in 0..<image.width {
                total += 1
                if Harness.pixel(image, x, y) == Harness.pixel(base, x, y) { same += 1 }
            }
        }
        #expect(same == total, "\(label): \(total - same) pixels far from the text changed")
    }

    static func meanX(_ points: [(x: Int, y: Int)]) -> Double { Double(points.map(\.x).reduce(0, +)) / Double(max(1, points.count)) }

    /// The short second line sits at the left, middle or right of the first's width.
    @Test(arguments: [("", 0.0, 0.25), ("_left", 0.0, 0.25), ("_center", 0.35, 0.65), ("_right", 0.75, 1.0), ("_end", 0.75, 1.0)])
    func alignmentMovesTheShortLine(style: String, from: Double, to: Double) throws {
        let image = try Self.render(style)
        let ink = try Self.ink(image)
        let box = ink.box
        let position = (Self.meanX(ink.secondLine) - Double(box.x)) / Double(box.width)
        #expect((from...to).contains(position), "\(style): the second line's centre is at \(position) of the text's width")
        try Self.expectPhotoKeptFarFromTheText(image, style)
    }

    /// justify: text wrapped at 140 px sets its first line out to the width, where left-aligned
    /// it stops at its last word.
    @Test func justifySpreadsAWrappedLine() throws {
        func firstLine(_ style: String) throws -> Rect {
            let (_, result) = try Harness.render(Self.photo, "c_fit,w_240,h_240/l_text:DejaVu%20Sans_20\(style):Some%20words%20of%20a%20text%20that%20wraps,co_white,c_fit,w_140/fl_layer_apply,g_north_west,x_10,y_10/f_png")
            let ink = try Self.ink(Harness.pixels(result.outputs[0].data))
            let rows = ink.rows
            let end = zip(rows, rows.dropFirst()).first { $1 > $0 + 1 }?.0 ?? rows.last!
            let line = ink.changed.filter { $0.y <= end }
            return Rect(x: line.map(\.x).min()!, y: 0, width: line.map(\.x).max()! - line.map(\.x).min()! + 1, height: 1)
        }
        let left = try firstLine(""), justified = try firstLine("_justify")
        #expect(justified.x == left.x)
        #expect(justified.width > left.width + 8 && justified.width <= 140, "justified \(justified.width), left \(left.width)")
    }

    /// line_spacing_<n> moves the second line n pixels; the first stays where it was.
    @Test(arguments: [12, -8])
    func lineSpacingMovesTheSecondLine(spacing: Int) throws {
        let plain = try Self.ink(Self.render("")), spaced = try Self.ink(Self.render("_line_spacing_\(spacing)"))
        #expect(abs(spaced.box.height - (plain.box.height + spacing)) <= 1, "height \(spaced.box.height), unspaced \(plain.box.height)")
        #expect(spaced.box.y == plain.box.y && spaced.box.width == plain.box.width)
        try Self.expectPhotoKeptFarFromTheText(try Self.render("_line_spacing_\(spacing)"), "line_spacing_\(spacing)")
    }

    /// A 3 px black stroke: the text's box grows by the stroke on every side (the layer is
    /// placed by its outer edge), dark pixels ring the white letters.
    @Test func strokeOutlinesTheLetters() throws {
        let image = try Self.render("_stroke", beside: ",bo_3px_solid_black")
        let base = try Self.plain.get()
        let plain = try Self.ink(Self.render("")), stroked = try Self.ink(image)
        #expect(abs(stroked.box.width - (plain.box.width + 6)) <= 2 && abs(stroked.box.height - (plain.box.height + 6)) <= 2,
                "stroked \(stroked.box), plain \(plain.box)")
        let dark = stroked.changed.filter { p in Harness.pixel(image, p.x, p.y).prefix(3).allSatisfy { $0 < 40 } && Harness.pixel(base, p.x, p.y).prefix(3).contains { $0 >= 40 } }
        #expect(dark.count > stroked.changed.count / 4, "only \(dark.count) of \(stroked.changed.count) changed pixels turned black")
        try Self.expectPhotoKeptFarFromTheText(image, "stroke")
    }

    /// antialias_none: every pixel the text touches is pure white, none half-covered.
    @Test func antialiasNoneLeavesNoPartlyCoveredPixels() throws {
        let smooth = try Self.render(""), hard = try Self.render("_antialias_none")
        func partial(_ image: PixelBuffer) throws -> Int {
            try Self.ink(image).changed.filter { p in Harness.pixel(image, p.x, p.y).prefix(3).contains { $0 < 250 } }.count
        }
        #expect(try partial(hard) == 0)
        #expect(try partial(smooth) > 20)
        try Self.expectPhotoKeptFarFromTheText(hard, "antialias_none")
    }

    /// fl_text_no_trim: a tenth of the size (2 px at 24) of margin, so the ink sits 2 px further in.
    @Test func noTrimLeavesAMargin() throws {
        let plain = try Self.ink(Self.render("")), untrimmed = try Self.ink(Self.render("", beside: ",fl_text_no_trim"))
        // Within a pixel: the faintest edge pixels are found against another part of the photo.
        #expect(abs(untrimmed.box.x - (plain.box.x + 2)) <= 1 && abs(untrimmed.box.y - (plain.box.y + 2)) <= 1, "untrimmed \(untrimmed.box), plain \(plain.box)")
        #expect(abs(untrimmed.box.width - plain.box.width) <= 1 && abs(untrimmed.box.height - plain.box.height) <= 1, "untrimmed \(untrimmed.box), plain \(plain.box)")
    }
}
