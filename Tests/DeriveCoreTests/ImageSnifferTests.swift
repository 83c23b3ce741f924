@testable import DeriveCore
import Foundation
import Testing

/// Header facts of the shared fixtures, as their README lists them.
@Suite struct ImageSnifferTests {
    static func facts(_ name: String) throws -> SourceFacts? {
        ImageSniffer.facts(of: [UInt8](try Data(contentsOf: Paths.fixture(name))))
    }

    @Test(arguments: [
        ("photos/apple-iphone-6_square_orient6.jpg", ImageFormat.jpeg, 2448, 2448, 6, 1, Optional(false)),
        ("photos/canon-sx60hs_orient6.jpg", .jpeg, 2048, 1536, 6, 1, false),
        ("photos/jolla-phone.jpg", .jpeg, 3264, 2448, 1, 1, false),
        ("photos/kodak-pixpro-az521.jpg", .jpeg, 4608, 3456, 1, 1, false),
        ("photos/grace_hopper_noexif.jpg", .jpeg, 512, 600, 1, 1, false),
        ("photos/coffee_noexif.png", .png, 600, 400, 1, 1, false),
        ("orientation/landscape_5.jpg", .jpeg, 1200, 1800, 5, 1, false),
        ("orientation/landscape_8.jpg", .jpeg, 1200, 1800, 8, 1, false),
        ("formats/jpeg-progressive.jpg", .jpeg, 650, 470, 1, 1, false),
        ("formats/jpeg-cmyk-swop-icc.jpg", .jpeg, 500, 333, 1, 1, false),
        ("formats/png-palette-trns.png", .png, 32, 32, 1, 1, true),
        ("formats/png-rgba16.png", .png, 32, 32, 1, 1, true),
        ("formats/gif-animated-cogs.gif", .gif, 85, 77, 1, 5, true),
        ("formats/webp-animated-9frames.webp", .webp, 80, 80, 1, 9, true),
        ("formats/webp-lossless-alpha.webp", .webp, 400, 301, 1, 1, true),
        ("formats/tiff-multipage-3pages.tif", .tiff, 10, 10, 1, 3, false),
        ("formats/avif-alpha.avif", .avif, 64, 64, 1, 1, true),
        ("formats/heic-1440x960.heic", .heif, 1440, 960, 1, 1, false),
        // JPEG XL keeps alpha in metadata past the size header, which only the engine reads.
        ("formats/jxl-alpha.jxl", .jxl, 50, 80, 1, 1, nil),
        ("hostile/bomb_sharp-giant-20000x14000.jpg", .jpeg, 20000, 14000, 1, 1, false),
        ("hostile/crafted_png-declared-30000x30000-one-row.png", .png, 30000, 30000, 1, 1, false),
        ("hostile/crafted_gif-screen-65535x65535-1px-frame.gif", .gif, 65535, 65535, 1, 1, false),
    ])
    func readsHeaderFacts(name: String, format: ImageFormat, width: Int, height: Int, orientation: Int, pages: Int, alpha: Bool?) throws {
        let facts = try #require(try Self.facts(name))
        #expect(facts.format == format && facts.width == width && facts.height == height)
        #expect(facts.orientation == orientation && facts.pages == pages)
        if let alpha { #expect(facts.hasAlpha == alpha) }
    }

    @Test func recognisesFormatsByContentNotName() throws {
        #expect(ImageSniffer.format(of: [UInt8](try Data(contentsOf: Paths.fixture("formats/svg-logo.svg")))) == .svg)
        #expect(ImageSniffer.format(of: [UInt8](try Data(contentsOf: Paths.fixture("formats/pdf-page-boxes.pdf")))) == .pdf)
        #expect(try Self.facts("hostile/crafted_text-file-named.jpg") == nil)
        #expect(try Self.facts("hostile/crafted_empty-zero-bytes.jpg") == nil)
        // Half a JPEG still has its header; the decoder, not the sniffer, finds the missing data.
        #expect(try Self.facts("hostile/crafted_jpeg-photo-cut-in-half.jpg")?.format == .jpeg)
    }

    /// Every orientation fixture reads as the 1800x1200 scene once oriented.
    @Test(arguments: 1...8)
    func orientationFixturesAreTheSameSceneOnceOriented(orientation: Int) throws {
        let facts = try #require(try Self.facts("orientation/landscape_\(orientation).jpg"))
        #expect(facts.orientation == orientation)
        #expect(facts.orientedSize == Size(1800, 1200))
    }
}
