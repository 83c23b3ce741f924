import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `fl_clip` on real photographs: Grace Hopper with Photoshop paths written into an APP13
/// segment here (a diamond, and a square ring of two squares wound the same way), and imbo's
/// JPEG with Photoshop's own paths House and Panda.
@Suite struct ClipTests {
    static let diamond = PhotoshopPathFiles.Polygon([(0.5, 0.1), (0.9, 0.5), (0.5, 0.9), (0.1, 0.5)])
    static let ring = PhotoshopPathFiles.Polygon([(0.1, 0.1), (0.9, 0.1), (0.9, 0.9), (0.1, 0.9)])
    static let hole = PhotoshopPathFiles.Polygon([(0.3, 0.3), (0.7, 0.3), (0.7, 0.7), (0.3, 0.7)])

    static func source() throws -> SourceImage {
        let photo = try [UInt8](Data(contentsOf: Paths.fixture(ToneEffectTests.photo)))
        let resources = PhotoshopPathFiles.resources([("Diamond", [diamond]), ("Ring", [ring, hole])])
        return SourceImage(bytes: PhotoshopPathFiles.jpeg(photo, resources: resources), location: "hopper-with-paths.jpg")
    }

    static func render(_ chain: String, source: SourceImage? = nil) throws -> PixelBuffer {
        try Harness.pixels(Harness.render(source ?? Self.source(), "\(chain)/f_png").1.outputs[0].data)
    }

    static func alpha(_ p: PixelBuffer, _ fx: Double, _ fy: Double) -> Int {
        let px = Harness.pixel(p, Int(fx * Double(p.width)), Int(fy * Double(p.height)))
        return px.count == 4 ? px[3] : 255
    }

    /// Inside the diamond the photo is as it was; outside it, transparent.
    @Test(arguments: ["fl_clip", "fl_clip,pg_1", "fl_clip,pg_name:Diamond"])
    func clipsToTheDiamond(clip: String) throws {
        let plain = try Self.render("c_scale,w_200")
        let clipped = try Self.render("\(clip)/c_scale,w_200")
        #expect(clipped.width == plain.width && clipped.height == plain.height && clipped.bands == 4)
        for corner in [(0.05, 0.05), (0.95, 0.05), (0.05, 0.95), (0.95, 0.95), (0.2, 0.2)] {
            #expect(Self.alpha(clipped, corner.0, corner.1) == 0, "\(clip) at \(corner)")
        }
        var same = 0, total = 0
        for y in Int(0.4 * Double(plain.height))..<Int(0.6 * Double(plain.height)) {
            for x in Int(0.4 * Double(plain.width))..<Int(0.6 * Double(plain.width)) {
                total += 1
                let c = Harness.pixel(clipped, x, y)
                if c[3] == 255 && Array(c.prefix(3)) == Array(Harness.pixel(plain, x, y).prefix(3)) { same += 1 }
            }
        }
        #expect(same == total, "\(clip): \(total - same) pixels in the middle are not the photo's")
    }

    /// Two squares wound the same way: nonzero fills the inner one, evenodd leaves it a hole.
    @Test func theFillRuleDecidesTheHole() throws {
        let nonzero = try Self.render("fl_clip,pg_2/c_scale,w_200"), evenodd = try Self.render("fl_clip_evenodd,pg_2/c_scale,w_200")
        #expect(Self.alpha(nonzero, 0.5, 0.5) == 255 && Self.alpha(evenodd, 0.5, 0.5) == 0)
        #expect(Self.alpha(nonzero, 0.2, 0.5) == 255 && Self.alpha(evenodd, 0.2, 0.5) == 255)
        #expect(Self.alpha(nonzero, 0.05, 0.5) == 0 && Self.alpha(evenodd, 0.05, 0.5) == 0)
    }

    /// A source without paths, or without the path asked for, fails the job permanently and
    /// says what the source has.
    @Test(arguments: [
        ("fl_clip", nil, "fl_clip: the source has no Photoshop paths (8BIM resources 2000–2997 in a JPEG's APP13 or a TIFF's Photoshop tag), not a path to clip to"),
        ("fl_clip,pg_name:Circle", "paths", #"fl_clip: the source has the paths 1 "Diamond", 2 "Ring", not the path "Circle" to clip to"#),
    ])
    func aMissingPathFailsClearly(clip: String, withPaths: String?, message: String) throws {
        let source = withPaths == nil ? try Harness.source(ToneEffectTests.photo) : try Self.source()
        do {
            _ = try Self.render(clip, source: source)
            Issue.record("clipped without the path")
        } catch let error as DeriveError {
            #expect(error.code == .invalidJob && !error.isRetryable)
            #expect(error.detail.contains(message), "\(error.detail)")
        }
    }

    /// Photoshop's own paths: the panda keeps part of the photo and clears the rest, and what
    /// it keeps is the photo's.
    @Test(arguments: ["pg_name:Panda", "pg_name:House"])
    func clipsARealPhotoshopPath(path: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/jpeg-with-multiple-paths.jpg")))
        let source = SourceImage(bytes: bytes, location: "jpeg-with-multiple-paths.jpg")
        let plain = try Self.render("c_scale,w_256", source: source), clipped = try Self.render("fl_clip,\(path)/c_scale,w_256", source: source)
        var clear = 0, kept = 0, keptSame = 0
        for y in 0..<clipped.height {
            for x in 0..<clipped.width {
                let c = Harness.pixel(clipped, x, y)
                if c[3] == 0 { clear += 1 }
                if c[3] == 255 {
                    kept += 1
                    if zip(c.prefix(3), Harness.pixel(plain, x, y).prefix(3)).allSatisfy({ abs($0 - $1) <= 1 }) { keptSame += 1 }
                }
            }
        }
        let total = clipped.width * clipped.height
        #expect(clear > total / 20 && kept > total / 20, "\(path): \(clear) clear, \(kept) kept of \(total)")
        #expect(keptSame == kept, "\(path): \(kept - keptSame) kept pixels differ from the photo")
    }
}
