@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Photoshop paths read from a file's bytes (`fl_clip`, issue 16, item 3): a JPEG written here,
/// a TIFF header, and a real JPEG with two paths from imbo's tests.
@Suite struct ClippingPathTests {
    static let diamond = PhotoshopPathFiles.Polygon([(0.5, 0.1), (0.9, 0.5), (0.5, 0.9), (0.1, 0.5)])
    static let square = PhotoshopPathFiles.Polygon([(0.25, 0.25), (0.75, 0.25), (0.75, 0.75), (0.25, 0.75)])
    static var resources: [UInt8] {
        PhotoshopPathFiles.resources([("Diamond", [diamond]), ("Square", [square])], clippingPath: "Square")
    }

    @Test func readsThePathsOfAJPEGsAPP13() throws {
        let jpeg = PhotoshopPathFiles.jpeg([0xFF, 0xD8, 0xFF, 0xD9], resources: Self.resources)
        let found = PhotoshopPaths.read(jpeg)
        #expect(found.paths.map(\.name) == ["Diamond", "Square"])
        #expect(found.paths.map(\.id) == [2000, 2001])
        #expect(found.clippingPathName == "Square")
        let knots = try #require(found.paths.first?.subpaths.first)
        #expect(knots.closed)
        let expected: [(Double, Double)] = [(0.5, 0.1), (0.9, 0.5), (0.5, 0.9), (0.1, 0.5)]
        #expect(knots.knots.count == 4)
        // 8.24 fixed point: within 2^-24.
        for (knot, (x, y)) in zip(knots.knots, expected) { #expect(abs(knot.anchor.x - x) < 1e-7 && abs(knot.anchor.y - y) < 1e-7) }
        // Photoshop's marked clipping path is the default; a number or a name chooses another.
        #expect(found.path()?.name == "Square")
        #expect(found.path(number: 1)?.name == "Diamond")
        #expect(found.path(name: "Diamond")?.id == 2000)
        #expect(found.path(number: 3) == nil && found.path(name: "Circle") == nil)
    }

    @Test func readsThePathsOfATIFFsPhotoshopTag() {
        let found = PhotoshopPaths.read(PhotoshopPathFiles.tiffHeader(resources: Self.resources))
        #expect(found.paths.map(\.name) == ["Diamond", "Square"])
    }

    /// The square from 25% to 75% filled on 200x100: 50..<150 by 25..<75 inside, nothing
    /// outside; a diamond's slanted edge covers pixels in part.
    @Test func fillsThePathIntoAMask() throws {
        let found = PhotoshopPaths.read(PhotoshopPathFiles.jpeg([0xFF, 0xD8, 0xFF, 0xD9], resources: Self.resources))
        let square = try PathRaster.mask(try #require(found.path(number: 2)), width: 200, height: 100, evenOdd: false)
        #expect(square[30 * 200 + 60] == 255 && square[74 * 200 + 149] == 255 && square[25 * 200 + 50] == 255)
        #expect(square[24 * 200 + 60] == 0 && square[30 * 200 + 49] == 0 && square[75 * 200 + 100] == 0 && square[30 * 200 + 150] == 0)
        #expect(square.filter { $0 == 255 }.count == 100 * 50)
        let diamond = try PathRaster.mask(try #require(found.path(number: 1)), width: 200, height: 100, evenOdd: false)
        #expect(diamond[50 * 200 + 100] == 255 && diamond[5 * 200 + 5] == 0)
        #expect(diamond.contains { $0 > 0 && $0 < 255 }, "no partly covered pixel on the slanted edges")
        // Half the image's area, within the edges' antialiasing.
        let area = diamond.reduce(0) { $0 + Double($1) / 255 }
        #expect(abs(area - 0.32 * 20000) < 200, "\(area)")
    }

    /// Two squares wound the same way: nonzero fills the inner one, evenodd leaves it a hole.
    @Test func theFillRuleDecidesTheHole() throws {
        let outer = PhotoshopPathFiles.Polygon([(0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9)])
        let inner = PhotoshopPathFiles.Polygon([(0.3, 0.3), (0.7, 0.3), (0.7, 0.7), (0.3, 0.7)])
        let path = PhotoshopPaths.read(PhotoshopPathFiles.jpeg([0xFF, 0xD8, 0xFF, 0xD9], resources: PhotoshopPathFiles.resources([("Ring", [outer, inner])]))).paths[0]
        #expect(try PathRaster.mask(path, width: 100, height: 100, evenOdd: false)[50 * 100 + 50] == 255)
        #expect(try PathRaster.mask(path, width: 100, height: 100, evenOdd: true)[50 * 100 + 50] == 0)
        #expect(try PathRaster.mask(path, width: 100, height: 100, evenOdd: true)[20 * 100 + 50] == 255)
    }

    /// A path in a file may zig-zag from top to bottom thousands of times: the fill refuses it
    /// (limit_exceeded, permanent) rather than work without bound.
    @Test func anIntricatePathIsRefused() {
        let zigzag = PhotoshopPathFiles.Polygon((0..<30_000).map { i in (Double(i) / 30_000, i % 2 == 0 ? 0.0 : 1.0) })
        let path = PhotoshopPaths.read(PhotoshopPathFiles.jpeg([0xFF, 0xD8, 0xFF, 0xD9], resources: PhotoshopPathFiles.resources([("Saw", [zigzag])]))).paths[0]
        #expect(path.subpaths[0].knots.count == 30_000)
        do {
            _ = try PathRaster.mask(path, width: 1000, height: 1000, evenOdd: false)
            Issue.record("filled without a limit")
        } catch {
            #expect(error.code == .limitExceeded && !error.isRetryable && error.detail.contains("too intricate"))
        }
    }

    /// Sources are untrusted: damaged resources (bytes changed, cut short) are read as far as
    /// they make sense and filled without crashing.
    @Test func damagedResourcesNeverCrash() {
        var random = SeededRandom(seed: 16)
        let jpeg = PhotoshopPathFiles.jpeg([0xFF, 0xD8, 0xFF, 0xD9], resources: Self.resources)
        let tiff = PhotoshopPathFiles.tiffHeader(resources: Self.resources)
        for round in 0..<1500 {
            var bytes = round % 2 == 0 ? jpeg : tiff
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if random.chance(0.3) { bytes.removeLast(Int.random(in: 0..<bytes.count, using: &random)) }
            for path in PhotoshopPaths.read(bytes).paths {
                _ = try? PathRaster.mask(path, width: 40, height: 30, evenOdd: random.chance(0.5))
            }
        }
    }

    @Test func aFileWithoutPathsHasNone() throws {
        #expect(PhotoshopPaths.read(try [UInt8](Data(contentsOf: Paths.fixture("photos/grace_hopper_noexif.jpg")))).paths.isEmpty)
        #expect(PhotoshopPaths.read(Array("GIF89a".utf8)).paths.isEmpty)
        // A resource cut short is read as far as it goes, never past the end.
        var cut = Self.resources
        cut.removeLast(40)
        #expect(PhotoshopPaths.read(PhotoshopPathFiles.jpeg([0xFF, 0xD8, 0xFF, 0xD9], resources: cut)).paths.map(\.name) == ["Diamond"])
    }

    /// imbo's tests/Fixtures/jpeg-with-multiple-paths.jpg (MIT), whose paths its own tests name
    /// House and Panda.
    @Test func readsARealPhotoshopFile() throws {
        let bytes = try [UInt8](Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/jpeg-with-multiple-paths.jpg")))
        let found = PhotoshopPaths.read(bytes)
        #expect(found.paths.map(\.name) == ["House", "Panda"])
        for path in found.paths {
            let anchors = path.subpaths.flatMap(\.knots).map(\.anchor)
            #expect(anchors.count >= 3)
            #expect(anchors.allSatisfy { (-0.01...1.01).contains($0.x) && (-0.01...1.01).contains($0.y) }, "\(path.name)")
        }
    }
}

/// `fl_clip` and `fl_clip_evenodd`, with `pg_` choosing the path, in strings and JSON.
@Suite struct ClipLanguageTests {
    @Test(arguments: [
        ("fl_clip", #"{"clip": true}"#, ClipSetting()),
        ("fl_clip_evenodd", #"{"clip": {"evenOdd": true}}"#, ClipSetting(evenOdd: true)),
        ("fl_clip,pg_2", #"{"clip": {"path": 2}}"#, ClipSetting(number: 2)),
        ("fl_clip_evenodd,pg_name:Panda", #"{"clip": {"evenOdd": true, "path": "Panda"}}"#, ClipSetting(evenOdd: true, name: "Panda")),
        ("fl_clip,pg_name:Path%201", #"{"clip": {"path": "Path 1"}}"#, ClipSetting(name: "Path 1")),
    ])
    func stringAndJSONMeanTheSameClip(text: String, json: String, clip: ClipSetting) throws {
        #expect(try canonical(string: text).encoding.clip == clip)
        #expect(try canonical(json: #"{"source": "https://x/a.jpg", "outputs": [{"name": "default", "chain": [], \#(json.dropFirst().dropLast())}]}"#).encoding.clip == clip)
    }

    @Test(arguments: [
        ("fl_clip/c_scale,w_100", "c_scale,w_100/fl_clip"),
        ("c_scale,w_100/fl_clip_evenodd,pg_2/f_png", "c_scale,w_100/f_png/fl_clip_evenodd,pg_2"),
        ("fl_clip,pg_name:Path%201/pg_3", "pg_3/fl_clip,pg_name:Path%201"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("fl_clip,pg_0", "pg_0: unknown to Cloudinary (beside fl_clip, pg chooses the clipping path: pg_<number> or pg_name:<name>)"),
        ("fl_clip.clip_evenodd", "fl_clip and fl_clip_evenodd together: a path is filled by one rule"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.contains(reason), "\(issues)")
    }

    /// JSON refuses the path names and numbers strings refuse, naming the field.
    @Test(arguments: [#"{"path": ""}"#, #"{"path": 0}"#])
    func jsonRefusesAPathThatNamesNone(clip: String) {
        let job = #"{"source": "https://x/a.jpg", "outputs": [{"name": "default", "chain": [], "clip": \#(clip)}]}"#
        let error = #expect(throws: ValidationError.self) { try canonical(json: job) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("outputs[0].clip.path: "), "\(String(describing: error))")
    }
}
