import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_distort` on a real photograph (Grace Hopper fitted into 120x120, opaque): the canvas is
/// the size the planner gave, what the warped image does not cover is transparent, what it
/// covers is the photo (its mean colour kept), and corners left where they were leave the photo
/// as it was.
@Suite struct DistortTests {
    static func render(_ base: String, _ effect: String?) throws -> (PixelBuffer, Size?) {
        let (plan, result) = try Harness.render(ToneEffectTests.photo, "\(base)\(effect.map { "/" + $0 } ?? "")/f_png")
        return (try Harness.pixels(result.outputs[0].data), plan.outputs[0].size)
    }

    static func distortion(_ chain: String) throws -> Distortion {
        guard case .effect(.distort(let d))? = CloudinaryParser().parse(chain).steps.first else { throw DeriveError(.internalError, chain) }
        return d
    }

    /// Every covered point of `warped` at `points` (fractions of its canvas) shows the photo's
    /// pixel that `source` says lands there (the nearest of its 3x3 neighbourhood, within a few
    /// levels: bilinear sampling blends neighbours).
    static func expectLandsWhereTheGeometrySays(_ warped: PixelBuffer, _ plain: PixelBuffer, points: [(Double, Double)],
                                                 source: (Double, Double) -> (u: Double, v: Double)?, sourceLocation: SourceLocation = #_sourceLocation) {
        for (fx, fy) in points {
            let x = Int(fx * Double(warped.width - 1)), y = Int(fy * Double(warped.height - 1))
            guard let s = source(Double(x) + 0.5, Double(y) + 0.5) else {
                Issue.record("\(x),\(y) is off the image", sourceLocation: sourceLocation)
                continue
            }
            let got = Harness.pixel(warped, x, y)
            let u = min(plain.width - 1, Int(s.u)), v = min(plain.height - 1, Int(s.v))
            var best = Int.max
            for dy in -1...1 {
                for dx in -1...1 {
                    let p = Harness.pixel(plain, min(plain.width - 1, max(0, u + dx)), min(plain.height - 1, max(0, v + dy)))
                    best = min(best, (0..<3).map { abs(p[$0] - got[$0]) }.max()!)
                }
            }
            #expect(got[3] == 255 && best <= 12, "\(x),\(y) from \(u),\(v): off by \(best)", sourceLocation: sourceLocation)
        }
    }

    static let inside: [(Double, Double)] = [(0.5, 0.5), (0.4, 0.3), (0.6, 0.7), (0.35, 0.6), (0.65, 0.4)]

    /// Each case: the corners, a canvas point (as fractions of the canvas) the image leaves
    /// empty, and one it covers.
    @Test(arguments: [
        // A trapezoid narrower at the top (a wall seen from below): the top corners are empty.
        ("e_distort:20p:0p:80p:0p:100p:100p:0p:100p", (0.03, 0.03), (0.5, 0.9)),
        // Cloudinary's documentation example, on the photo's own scale (percentages).
        ("e_distort:13p:12p:93p:30p:87p:77p:12p:82p", (0.98, 0.98), (0.5, 0.5)),
        // Corners pulled outwards: the canvas grows beyond the photo.
        ("e_distort:-20:-10:130:0:120:130:0:120", (0.98, 0.02), (0.5, 0.5)),
    ] as [(String, (Double, Double), (Double, Double))])
    func perspectiveFillsTheQuadrilateralAndLeavesTheRestTransparent(chain: String, empty: (Double, Double), covered: (Double, Double)) throws {
        let (plain, _) = try ShapeEffectTests.render(nil)
        let (warped, planned) = try ShapeEffectTests.render(chain)
        #expect(planned == Size(warped.width, warped.height) && warped.bands == 4, "planned \(String(describing: planned)), made \(warped.width)x\(warped.height)")
        let at = { (f: (Double, Double)) in (Int(f.0 * Double(warped.width - 1)), Int(f.1 * Double(warped.height - 1))) }
        #expect(ShapeEffectTests.alpha(warped, at(empty).0, at(empty).1) == 0, "empty point \(at(empty))")
        #expect(ShapeEffectTests.alpha(warped, at(covered).0, at(covered).1) == 255, "covered point \(at(covered))")
        // Inside, each pixel is the photo's that the perspective puts there.
        guard case .corners(let corners) = try Self.distortion(chain),
              let p = DistortGeometry.Perspective(corners: corners, on: Size(plain.width, plain.height)) else { throw DeriveError(.internalError, chain) }
        Self.expectLandsWhereTheGeometrySays(warped, plain, points: Self.inside) { p.source(x: $0, y: $1, imageSize: Size(plain.width, plain.height)) }
    }

    /// Corners where they were: the photo, pixel for pixel within rounding.
    @Test func cornersInPlaceLeaveThePhoto() throws {
        let (plain, _) = try ShapeEffectTests.render(nil)
        let (same, planned) = try ShapeEffectTests.render("e_distort:0p:0p:100p:0p:100p:100p:0p:100p")
        #expect(planned == Size(plain.width, plain.height) && same.width == plain.width && same.height == plain.height)
        var worst = 0
        for y in 0..<plain.height {
            for x in 0..<plain.width {
                let p = Harness.pixel(plain, x, y), q = Harness.pixel(same, x, y)
                worst = max(worst, (0..<3).map { abs(p[$0] - q[$0]) }.max()!)
            }
        }
        #expect(worst <= 2, "largest change \(worst)")
    }

    /// An arc upwards (a frown) of a landscape strip: the top edge's middle at the top of the
    /// canvas, the ring's inside and the top corners transparent; downwards (a smile) the other
    /// way up. Each covered pixel is the photo's that the arc puts there; 0° changes nothing.
    @Test(arguments: [120, -120, 300])
    func arcBendsThePhoto(degrees: Int) throws {
        let base = "c_fill,w_160,h_60"
        let (plain, _) = try Self.render(base, nil)
        let (bent, planned) = try Self.render(base, "e_distort:arc:\(degrees)")
        #expect(planned == Size(bent.width, bent.height) && bent.bands == 4, "planned \(String(describing: planned)), made \(bent.width)x\(bent.height)")
        let mid = bent.width / 2, top = 2, bottom = bent.height - 3
        let (near, far) = degrees > 0 ? (top, bottom) : (bottom, top)
        #expect(ShapeEffectTests.alpha(bent, mid, near) == 255, "the arc's middle")
        #expect(ShapeEffectTests.alpha(bent, 1, near) == 0, "the corner beside it")
        #expect(ShapeEffectTests.alpha(bent, mid, far) == 0, "inside the ring")
        let arc = try #require(DistortGeometry.Arc(degrees: degrees, on: Size(plain.width, plain.height)))
        let along = degrees > 0 ? [(0.5, 0.05), (0.3, 0.2), (0.7, 0.2)] : [(0.5, 0.95), (0.3, 0.8), (0.7, 0.8)]
        Self.expectLandsWhereTheGeometrySays(bent, plain, points: along) { arc.source(x: $0, y: $1) }
        let (flat, _) = try Self.render(base, "e_distort:arc:0")
        #expect(flat.width == plain.width && flat.height == plain.height && Harness.difference(flat, plain) < 1)
    }
}
