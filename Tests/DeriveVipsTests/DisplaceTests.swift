import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_displace,fl_layer_apply,x_,y_` (issue 30): the layer is a displacement map whose red
/// moves the image's pixels horizontally and green vertically, by x_ and y_ pixels at the
/// extremes (Cloudinary's "Displacement maps": with a positive x_, red 0–127 moves right,
/// 128–255 left).
@Suite struct DisplaceTests {
    /// A grey ramp, 100x40: column i has the value 2i, every row alike.
    static func ramp() throws -> VImage {
        var bytes: [UInt8] = []
        for _ in 0..<40 { for x in 0..<100 { bytes += Array(repeating: UInt8(2 * x), count: 3) } }
        return try VImage.fromPixels(bytes, width: 100, height: 40, bands: 3)
    }

    /// A map of one colour (RGB or RGBA), 40x40.
    static func map(_ pixel: [UInt8]) throws -> VImage {
        let raw = try VImage.fromPixels(Array((0..<1600).map { _ in pixel }.joined()), width: 40, height: 40, bands: pixel.count)
        // sRGB, as the engine's layers are (so a fourth band is alpha).
        return try VipsCall("copy").image("in", raw).enumeration("interpretation", "srgb").run().image("out")
    }

    static func value(_ image: VImage, _ x: Int, _ y: Int) throws -> Int {
        Harness.pixel(try image.pixelBuffer(), x, y)[0]
    }

    /// Red 0 with x_10 reads each pixel from 10 to its left (the ramp moves right by 10); red
    /// 255 from 10 to its right; outside the map (columns 40 and on) nothing moves.
    @Test(arguments: [(UInt8(0), -10), (UInt8(255), 10)])
    func redMovesPixelsByTheWholeAmountAtItsExtremes(red: UInt8, read: Int) throws {
        let base = try Self.ramp()
        let moved = try OperationRunner.displaced(base, by: try Self.map([red, 128, 0]), at: (0, 0), amount: (x: 10, y: 0))
        #expect(moved.width == 100 && moved.height == 40 && moved.bands == 3)
        for x in [15, 20, 30] {
            #expect(try Self.value(moved, x, 20) == 2 * (x + read), "column \(x)")
        }
        // At the left edge the ramp's first column is repeated (red 0 reads from x < 0).
        if read < 0 { #expect(try Self.value(moved, 2, 20) == 0) }
        for x in [45, 60, 99] { #expect(try Self.value(moved, x, 20) == 2 * x, "column \(x) is outside the map") }
    }

    /// A negative x_ turns the direction round; the middle grey moves nothing; a transparent
    /// map moves nothing; green moves vertically (a ramp across rows).
    @Test func directionNeutralAndTransparency() throws {
        let base = try Self.ramp()
        let reversed = try OperationRunner.displaced(base, by: try Self.map([0, 128, 0]), at: (0, 0), amount: (x: -10, y: 0))
        #expect(try Self.value(reversed, 20, 20) == 60)
        let neutral = try OperationRunner.displaced(base, by: try Self.map([128, 128, 0]), at: (0, 0), amount: (x: 10, y: 10))
        #expect(abs(try Self.value(neutral, 20, 20) - 40) <= 1)
        let clear = try OperationRunner.displaced(base, by: try Self.map([0, 0, 0, 0]), at: (0, 0), amount: (x: 10, y: 10))
        let (a, b) = (try clear.pixelBuffer().pixels, try base.pixelBuffer().pixels)
        let differing = zip(a, b).filter { $0.0 != $0.1 }.count
        #expect(differing == 0, "\(differing) bytes differ under a transparent map")
        // Rows: the ramp turned, value 2y at row y (100 rows, 40 columns).
        var bytes: [UInt8] = []
        for y in 0..<100 { for _ in 0..<40 { bytes += Array(repeating: UInt8(2 * y), count: 3); _ = y } }
        let tall = try VImage.fromPixels(bytes, width: 40, height: 100, bands: 3)
        let down = try OperationRunner.displaced(tall, by: try Self.map([128, 0, 0]), at: (0, 30), amount: (x: 0, y: 5))
        #expect(try Self.value(down, 20, 50) == 90, "row 50 reads row 45: the rows move down by 5")
        #expect(try Self.value(down, 20, 80) == 160, "row 80 is below the map")
    }

    /// Through the language and the engine: the coffee photo as the map over the top-left
    /// 60x60 of Grace Hopper. Outside the map nothing changes; under it the photo moves; and the
    /// map is not drawn (the result is nearer the photo than the map drawn over it).
    @Test func aChainDisplacesUnderTheMapOnly() throws {
        let plain = try LayerBlendTests.render("")
        let over = try LayerBlendTests.render("fl_layer_apply,g_north_west")
        let displaced = try LayerBlendTests.render("e_displace,fl_layer_apply,g_north_west,x_8,y_8")
        let outside = LayerBlendTests.count(displaced, plain, inSquare: false) { LayerBlendTests.rgb($0) == LayerBlendTests.rgb($1) }
        #expect(outside.hits == outside.of, "\(outside.of - outside.hits) pixels outside the map changed")
        let changed = LayerBlendTests.count(displaced, plain, inSquare: true) { d, p in (0..<3).contains { abs(d[$0] - p[$0]) > 4 } }
        #expect(changed.hits > changed.of / 10, "only \(changed.hits) of \(changed.of) pixels moved")
        let nearPhoto = LayerBlendTests.count(displaced, plain, inSquare: true) { d, p in (0..<3).allSatisfy { abs(d[$0] - p[$0]) <= 40 } }
        let nearMap = LayerBlendTests.count(displaced, over, inSquare: true) { d, o in (0..<3).allSatisfy { abs(d[$0] - o[$0]) <= 40 } }
        #expect(nearPhoto.hits > nearMap.hits)
    }
}
