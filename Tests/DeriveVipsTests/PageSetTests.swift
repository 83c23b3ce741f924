import DeriveLanguage
@testable import DeriveVips
import Testing

/// `pg_` page sets through the real engine: the output animates the pages asked for, in order.
@Suite struct PageSetTests {
    /// Frame `k` of an encoded output, read back through the engine as a still PNG.
    static func frame(_ k: Int, of data: [UInt8]) throws -> PixelBuffer {
        let png = try Harness.render(SourceImage(bytes: data, location: "output"), "pg_\(k)/f_png").1.outputs[0]
        return try Harness.pixels(png.data)
    }

    @Test(arguments: [
        // (fixture, chain before the page set, page set, output format, pages it selects, tolerance)
        // Flattened, so that colours under transparent pixels (which encoders drop) do not count.
        ("formats/webp-animated-9frames.webp", "c_scale,w_40/b_white", "pg_2-4", "f_webp,fl_lossless", [2, 3, 4], 0.5),
        ("formats/webp-animated-9frames.webp", "c_scale,w_40/b_white", "pg_7;2;5", "f_webp,fl_lossless", [7, 2, 5], 0.5),
        ("formats/webp-animated-9frames.webp", "c_scale,w_40/b_white", "pg_1-2;8-", "f_gif", [1, 2, 8, 9], 12.0),
        ("formats/gif-animated-cogs.gif", "c_fill,w_48,h_40/b_white", "pg_4-", "f_webp,fl_lossless", [4, 5], 0.5),
        // A multi-page TIFF of an animation's frames.
        ("formats/webp-animated-9frames.webp", "c_scale,w_40/b_white", "pg_2-4", "f_tiff", [2, 3, 4], 0.5),
    ])
    func anOutputAnimatesTheSelectedPagesInOrder(fixture: String, chain: String, pages: String, format: String,
                                                 selected: [Int], tolerance: Double) throws {
        let source = try Harness.source(fixture)
        let (plan, result) = try Harness.render(source, "\(chain)/\(pages),\(format)")
        #expect(plan.outputs[0].keepsAnimation)
        #expect(plan.outputs[0].operations.first == .selectPages(selected))
        let output = result.outputs[0]
        #expect(output.metadata.frames == selected.count)
        #expect(try Harness.header(output.data).0.facts.pages == selected.count)
        // Each frame is the page rendered alone by pg_<n>, and not the frame beside it.
        var alone: [Int: PixelBuffer] = [:]
        let sourcePages = plan.source.pages
        for page in 1...sourcePages {
            alone[page] = try Harness.pixels(Harness.render(source, "\(chain)/pg_\(page),f_png").1.outputs[0].data)
        }
        for (k, page) in selected.enumerated() {
            let frame = try Self.frame(k + 1, of: output.data)
            let reference = try #require(alone[page])
            #expect(frame.width == reference.width && frame.height == reference.height)
            let differences = (1...sourcePages).map { Harness.difference(frame, alone[$0]!) }
            #expect(differences[page - 1] <= tolerance, "frame \(k + 1) vs page \(page): \(differences)")
            #expect(differences.enumerated().min { $0.element < $1.element }?.offset == page - 1,
                    "frame \(k + 1) is closest to page \(page): \(differences)")
        }
    }

    /// A TIFF source without f_ keeps its format: pg_3;1 of a three-page TIFF (made here from
    /// the WebP's frames 1 to 3, as the fixture's pages differ in size) is a two-page TIFF whose
    /// pages are its third and first, lossless.
    @Test func aTIFFsPageSetIsATIFFOfThosePages() throws {
        let made = try Harness.render("formats/webp-animated-9frames.webp", "c_scale,w_40/b_white/pg_1-3,f_tiff").1.outputs[0]
        #expect(try Harness.header(made.data).0.facts.pages == 3)
        let source = SourceImage(bytes: made.data, location: "three-pages.tif")
        let (plan, result) = try Harness.render(source, "pg_3;1")
        #expect(plan.outputs[0].encoding.format == .tiff)
        let output = result.outputs[0]
        #expect(output.metadata.format == .tiff && output.metadata.frames == 2)
        #expect(try Harness.header(output.data).0.facts.pages == 2)
        for (k, page) in [3, 1].enumerated() {
            let frame = try Self.frame(k + 1, of: output.data), original = try Self.frame(page, of: made.data)
            #expect(Harness.difference(frame, original) == 0, "page \(k + 1) is not the source's page \(page)")
        }
        #expect(Harness.difference(try Self.frame(1, of: output.data), try Self.frame(1, of: made.data)) > 1)
    }

    /// The pages of a document become frames only when they have one size: libvips reads them
    /// as one strip (this TIFF's third page is 20x20, its others 10x10), and fails with decode_failed.
    @Test func documentPagesOfDifferentSizesAreRefusedWhenDecoded() throws {
        #expect(throws: DeriveError.self) { try Harness.render("formats/tiff-multipage-3pages.tif", "pg_1;3,f_gif") }
    }

    /// The delays of the frames taken go with them.
    @Test func theSelectedFramesKeepTheirDelays() throws {
        let source = try Harness.source("formats/gif-animated-cogs.gif")
        let sourceDelays = try AnimationTests.delays(source.bytes)
        let output = try Harness.render(source, "pg_5;1,f_gif").1.outputs[0]
        #expect(try AnimationTests.delays(output.data) == [sourceDelays[4], sourceDelays[0]])
    }

    /// `f_auto` writes a format that animates; a still format is refused when planning.
    @Test func formatAutoAnimatesAndAStillFormatIsRefused() throws {
        let auto = try Harness.render("formats/webp-animated-9frames.webp", "c_scale,w_40/pg_2-3,f_auto").1.outputs[0]
        #expect(auto.metadata.frames == 2)
        #expect(auto.metadata.format.canAnimate)
        #expect(throws: ValidationError.self) { try Harness.render("formats/webp-animated-9frames.webp", "pg_2-3,f_jpg") }
    }
}
