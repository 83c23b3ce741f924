import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_outline` on a real photograph with a shape: Grace Hopper fitted into 120x120 with round
/// corners (an opaque ellipse on transparency). An outer outline turns the transparent ring
/// just outside the ellipse into the colour and leaves the photo and the far corners alone; an
/// inner one draws inside the edge and leaves the middle and the outside alone.
@Suite struct OutlineTests {
    static func alpha(_ p: PixelBuffer, _ i: Int) -> UInt8 { p.pixels[i + 3] }

    /// Pixels of `changed` by where they are in `plain`: opaque photo, transparent near the
    /// ellipse (within `near` px of an opaque pixel), transparent far from it.
    static func regions(_ plain: PixelBuffer) -> (inside: [Int], near: [Int], far: [Int]) {
        var inside: [Int] = [], near: [Int] = [], far: [Int] = []
        let w = plain.width, h = plain.height
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                if plain.pixels[i + 3] == 255 { inside.append(i); continue }
                guard plain.pixels[i + 3] == 0 else { continue }
                var distance = Int.max
                for dy in -12...12 { for dx in -12...12 {
                    let (nx, ny) = (x + dx, y + dy)
                    if nx >= 0, ny >= 0, nx < w, ny < h, plain.pixels[(ny * w + nx) * 4 + 3] == 255 { distance = min(distance, max(abs(dx), abs(dy))) }
                } }
                if distance <= 2 { near.append(i) } else if distance == Int.max { far.append(i) }
            }
        }
        return (inside, near, far)
    }

    @Test func anOuterOutlineIsDrawnAroundTheShape() throws {
        let plain = ToneEffectTests.plain
        let outlined = try ToneEffectTests.pixels("e_outline:outer:6,co_red")
        #expect(outlined.width == plain.width && outlined.height == plain.height)
        let (inside, near, far) = Self.regions(plain)
        #expect(near.count > 100 && far.count > 50)
        // Just outside the ellipse: red and opaque.
        let red = near.filter { outlined.pixels[$0 + 3] > 200 && outlined.pixels[$0] > 200 && outlined.pixels[$0 + 1] < 60 }
        #expect(red.count > near.count * 9 / 10, "\(red.count) of \(near.count) near pixels red")
        // The photo unchanged, the far corners still transparent.
        #expect(inside.allSatisfy { Array(outlined.pixels[$0..<($0 + 4)]) == Array(plain.pixels[$0..<($0 + 4)]) })
        #expect(far.allSatisfy { outlined.pixels[$0 + 3] == 0 })
    }

    @Test func anInnerOutlineIsDrawnInsideTheEdge() throws {
        let plain = ToneEffectTests.plain
        let outlined = try ToneEffectTests.pixels("e_outline:inner:6,co_rgb:00ff00")
        let (inside, near, _) = Self.regions(plain)
        #expect(near.allSatisfy { outlined.pixels[$0 + 3] == plain.pixels[$0 + 3] }, "the outside changed")
        let green = inside.filter { outlined.pixels[$0 + 1] > 200 && outlined.pixels[$0] < 60 && outlined.pixels[$0 + 2] < 60 }
        #expect(green.count > 300 && green.count < inside.count / 2, "\(green.count) of \(inside.count) inside pixels green")
        // The middle of the photo is untouched.
        let middle = ((plain.height / 2) * plain.width + plain.width / 2) * 4
        #expect(Array(outlined.pixels[middle..<(middle + 4)]) == Array(plain.pixels[middle..<(middle + 4)]))
    }

    /// Grace Hopper's ellipse (as above) with a transparent 24x16 window cut in her middle: a
    /// hole the shape encloses, which the fill modes fill.
    static let holed: (source: SourceImage, plain: PixelBuffer, hole: [Int]) = {
        var p = ToneEffectTests.plain
        var hole: [Int] = []
        for y in (p.height / 2 - 8)..<(p.height / 2 + 8) {
            for x in (p.width / 2 - 12)..<(p.width / 2 + 12) {
                let i = (y * p.width + x) * 4
                p.pixels[i + 3] = 0
                hole.append(i)
            }
        }
        let png = try! VipsEncoder.save(VipsCall("pngsave_buffer").image("in", try! VImage.fromPixels(p.pixels, width: p.width, height: p.height, bands: 4)))
        return (SourceImage(bytes: png, location: "holed.png"), p, hole)
    }()

    static func holedPixels(_ chain: String?) throws -> PixelBuffer {
        let (_, result) = try Harness.render(Self.holed.source, "\(chain.map { $0 + "/" } ?? "")f_png")
        return try Harness.pixels(result.outputs[0].data)
    }

    /// Each mode on the holed photo: where the ring is (just outside the ellipse for outer and
    /// fill, just inside its edge for inner and inner_fill), whether the hole turns the colour
    /// (the fill modes) or stays transparent, and that the photo away from both is unchanged
    /// and the far corners stay transparent.
    @Test(arguments: [("outer", false, false), ("inner", true, false), ("inner_fill", true, true), ("fill", false, true)])
    func theFillModesAlsoFillTheEnclosedHole(mode: String, inside: Bool, fills: Bool) throws {
        let plain = try Self.holedPixels(nil)
        let outlined = try Self.holedPixels("e_outline:\(mode):4,co_rgb:00ff00")
        #expect(outlined.width == plain.width && outlined.height == plain.height)
        func green(_ i: Int) -> Bool { outlined.pixels[i + 3] > 200 && outlined.pixels[i + 1] > 200 && outlined.pixels[i] < 60 && outlined.pixels[i + 2] < 60 }
        // The hole's middle (away from its rim, where inner modes draw their ring anyway).
        let w = plain.width, cy = plain.height / 2, cx = w / 2
        let holeMiddle = (cy - 3..<cy + 3).flatMap { y in (cx - 6..<cx + 6).map { x in (y * w + x) * 4 } }
        #expect(holeMiddle.allSatisfy { plain.pixels[$0 + 3] == 0 })
        if fills {
            #expect(holeMiddle.allSatisfy(green), "the hole is not filled")
        } else {
            #expect(holeMiddle.allSatisfy { outlined.pixels[$0 + 3] == 0 }, "the hole changed")
        }
        let (_, near, far) = Self.regions(ToneEffectTests.plain)
        let nearGreen = near.filter(green).count
        if inside {
            #expect(near.allSatisfy { outlined.pixels[$0 + 3] == plain.pixels[$0 + 3] }, "the outside changed")
        } else {
            #expect(nearGreen > near.count * 9 / 10, "\(nearGreen) of \(near.count) pixels just outside are green")
        }
        #expect(far.allSatisfy { outlined.pixels[$0 + 3] == 0 })
        // Photo pixels away from the ellipse's edge and from the hole are as they were.
        let quarter = ((plain.height / 4) * w + w / 2) * 4
        #expect(Array(outlined.pixels[quarter..<(quarter + 4)]) == Array(plain.pixels[quarter..<(quarter + 4)]))
    }
}
