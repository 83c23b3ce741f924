import DeriveLanguage
@testable import DeriveVips
import Testing

/// Text decorations and spacing as rendered: underline and strikethrough add ink and keep the
/// width, letter spacing widens the text and adds none.
@Suite struct TextStyleVipsTests {
    static func render(underline: Bool = false, strikethrough: Bool = false, letterSpacing: Int? = nil) throws -> (width: Int, ink: Double) {
        // ink: the alpha summed over the image, in fully opaque pixels.
        var t = TextLayer(text: "Style", font: "DejaVu Sans", size: 40)
        t.underline = underline
        t.strikethrough = strikethrough
        t.letterSpacing = letterSpacing
        let image = try OperationRunner.text(t)
        return (image.size.width, try image.band(3).average() * Double(image.size.width * image.size.height) / 255)
    }

    @Test func decorationsAddInkAndSpacingWidens() throws {
        let plain = try Self.render()
        let underlined = try Self.render(underline: true), struck = try Self.render(strikethrough: true)
        let spaced = try Self.render(letterSpacing: 14)
        #expect(underlined.ink > plain.ink * 1.05, "underline \(underlined), plain \(plain)")
        #expect(struck.ink > plain.ink * 1.05, "strikethrough \(struck), plain \(plain)")
        // The line may reach a few pixels past the last glyph, no more.
        #expect(abs(struck.width - plain.width) <= 6, "strikethrough \(struck.width), plain \(plain.width)")
        #expect(spaced.width >= plain.width + 4 * 14 - 4, "spaced \(spaced.width), plain \(plain.width)")
    }
}
