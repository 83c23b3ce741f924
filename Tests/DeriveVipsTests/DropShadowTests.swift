import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// `e_dropshadow` on a real photograph given transparency (Grace Hopper fitted into 120x120,
/// cut to an ellipse by r_max, as ToneEffectTests): what a user sees of the shadow is where the
/// photo is not, so the tests read the canvas around the ellipse. The shadow lies on the side
/// away from the light, further as the light sinks, softer as it spreads; the photo is every
/// pixel as it was and the light's side stays clear.
@Suite struct DropShadowTests {
    struct Render {
        var pixels: PixelBuffer
        var planned: Size?
        /// Where the photo sits on the grown canvas.
        var at: (x: Int, y: Int)
        var plain: PixelBuffer { ToneEffectTests.plain }

        /// The photo's own alpha at a canvas pixel (0 off the photo).
        func photoAlpha(_ x: Int, _ y: Int) -> Int {
            let (px, py) = (x - at.x, y - at.y)
            guard px >= 0, py >= 0, px < plain.width, py < plain.height else { return 0 }
            return Harness.pixel(plain, px, py)[3]
        }

        /// The shadow as seen: the alpha of every canvas pixel where the photo is transparent.
        var visibleShadow: [(x: Int, y: Int, alpha: Int)] {
            var found: [(Int, Int, Int)] = []
            for y in 0..<pixels.height {
                for x in 0..<pixels.width where photoAlpha(x, y) == 0 {
                    let a = Harness.pixel(pixels, x, y)[3]
                    if a > 0 { found.append((x, y, a)) }
                }
            }
            return found
        }

        /// The visible shadow's alpha-weighted centre, from the photo's centre.
        var shadowDisplacement: (dx: Double, dy: Double) {
            var (sx, sy, sw) = (0.0, 0.0, 0.0)
            for p in visibleShadow {
                sx += Double(p.x) * Double(p.alpha)
                sy += Double(p.y) * Double(p.alpha)
                sw += Double(p.alpha)
            }
            return (sx / sw - (Double(at.x) + Double(plain.width) / 2), sy / sw - (Double(at.y) + Double(plain.height) / 2))
        }
    }

    static func render(_ settings: String) throws -> Render {
        let (plan, result) = try Harness.render(ToneEffectTests.photo, "c_fit,w_120,h_120/r_max/e_dropshadow:\(settings)/f_png")
        let pixels = try Harness.pixels(result.outputs[0].data)
        let plain = ToneEffectTests.plain
        let setting = { (name: String, fallback: Int) in
            settings.split(separator: ";").first { $0.hasPrefix(name + "_") }.flatMap { Int($0.dropFirst(name.count + 1)) } ?? fallback
        }
        let cast = EffectGeometry.dropShadow(azimuth: setting("azimuth", 215), elevation: setting("elevation", 45),
                                             spread: setting("spread", 50), on: Size(plain.width, plain.height))
        let placement = cast.placement(on: Size(plain.width, plain.height))
        #expect(plan.outputs[0].size == placement.canvas && pixels.width == placement.canvas.width && pixels.height == placement.canvas.height)
        return Render(pixels: pixels, planned: plan.outputs[0].size, at: placement.image)
    }

    /// Every opaque pixel of the photo is at its place, as it was.
    static func expectPhotoUnchanged(_ r: Render, sourceLocation: SourceLocation = #_sourceLocation) {
        var changed = 0
        for y in 0..<r.plain.height {
            for x in 0..<r.plain.width where Harness.pixel(r.plain, x, y)[3] == 255 {
                if Harness.pixel(r.pixels, x + r.at.x, y + r.at.y) != Harness.pixel(r.plain, x, y) { changed += 1 }
            }
        }
        #expect(changed == 0, "\(changed) photo pixels changed", sourceLocation: sourceLocation)
    }

    /// The shadow's side follows the azimuth (the light's bearing, clockwise from the top): it
    /// falls away from the light, black and half opaque, and the canvas strip on the light's
    /// side of the photo stays transparent.
    @Test(arguments: [
        // azimuth, the direction the shadow falls (x right, y down), the light's sides.
        (0, (0.0, 1.0), ["top"]), (90, (-1.0, 0.0), ["right"]), (180, (0.0, -1.0), ["bottom"]),
        (270, (1.0, 0.0), ["left"]), (215, (0.574, -0.819), ["left", "bottom"]),
    ])
    func theShadowFallsAwayFromTheLight(azimuth: Int, direction: (Double, Double), lit: [String]) throws {
        let r = try Self.render("azimuth_\(azimuth);elevation_30")
        Self.expectPhotoUnchanged(r)
        let shadow = r.visibleShadow
        #expect(shadow.count > 200, "\(shadow.count) shadow pixels")
        #expect(shadow.allSatisfy { p in Harness.pixel(r.pixels, p.x, p.y).prefix(3).allSatisfy { $0 < 8 } }, "the shadow is black")
        #expect(shadow.map(\.alpha).max() ?? 0 <= 128)
        let d = r.shadowDisplacement, length = hypot(d.dx, d.dy)
        let cosine = (d.dx * direction.0 + d.dy * direction.1) / length
        #expect(length > 5 && cosine > 0.9, "the shadow's centre moved \(d) from the photo's")
        for side in lit {
            let strip: [(Int, Int)] = switch side {
            case "top": (0..<r.at.y).flatMap { y in (0..<r.pixels.width).map { ($0, y) } }
            case "bottom": ((r.at.y + r.plain.height)..<r.pixels.height).flatMap { y in (0..<r.pixels.width).map { ($0, y) } }
            case "left": (0..<r.at.x).flatMap { x in (0..<r.pixels.height).map { (x, $0) } }
            default: ((r.at.x + r.plain.width)..<r.pixels.width).flatMap { x in (0..<r.pixels.height).map { (x, $0) } }
            }
            #expect(!strip.isEmpty && strip.allSatisfy { Harness.pixel(r.pixels, $0.0, $0.1)[3] == 0 }, "the \(side) strip has shadow")
        }
    }

    /// A lower light moves the shadow further from the photo (and grows the canvas); straight
    /// overhead (90) it stays beneath, around the photo's edge only.
    @Test func aLowerElevationMovesTheShadowFurther() throws {
        let distances = try [75, 45, 30, 15].map { elevation in
            let r = try Self.render("azimuth_0;elevation_\(elevation)")
            Self.expectPhotoUnchanged(r)
            return r.shadowDisplacement.dy
        }
        #expect(zip(distances, distances.dropFirst()).allSatisfy { $0 < $1 } && distances[0] > 0, "\(distances)")
        let overhead = try Self.render("azimuth_0;elevation_90;spread_0")
        Self.expectPhotoUnchanged(overhead)
        #expect(overhead.pixels.width == overhead.plain.width && overhead.visibleShadow.isEmpty)
    }

    /// A point light (spread 0) draws a sharp edge: the shadow is all at its full half opacity
    /// but for the ellipse's anti-aliased rim. An area light (100) spreads it into a wide
    /// penumbra of partial alpha, and further from the photo.
    @Test func spreadChangesTheEdgesSharpness() throws {
        func penumbra(_ r: Render) -> (partial: Int, total: Int) {
            let shadow = r.visibleShadow
            return (shadow.filter { $0.alpha > 12 && $0.alpha < 115 }.count, shadow.count)
        }
        let point = try Self.render("azimuth_0;elevation_30;spread_0")
        let area = try Self.render("azimuth_0;elevation_30;spread_100")
        Self.expectPhotoUnchanged(point)
        Self.expectPhotoUnchanged(area)
        let (p, a) = (penumbra(point), penumbra(area))
        #expect(Double(p.partial) < 0.25 * Double(p.total), "point light: \(p)")
        #expect(Double(a.partial) > 0.5 * Double(a.total) && a.partial > 3 * p.partial, "area light: \(a), point: \(p)")
        #expect(point.visibleShadow.map(\.alpha).max() ?? 0 >= 127)
    }

    /// An opaque image casts its rectangle: below the photo (light from behind) a band as deep
    /// as the offset, black and half opaque with a spread of 0, and nothing above it.
    @Test func anOpaqueImageCastsItsRectangle() throws {
        let (plain, _) = try ShapeEffectTests.render(nil)
        let (shadowed, planned) = try ShapeEffectTests.render("e_dropshadow:azimuth_0;elevation_45;spread_0")
        let cast = EffectGeometry.dropShadow(azimuth: 0, elevation: 45, spread: 0, on: Size(plain.width, plain.height))
        #expect(cast.x == 0 && cast.y > 5 && planned == Size(plain.width, plain.height + cast.y))
        #expect(shadowed.width == plain.width && shadowed.height == plain.height + cast.y && shadowed.bands == 4)
        for y in 0..<plain.height {
            for x in 0..<plain.width where Array(Harness.pixel(shadowed, x, y).prefix(3)) != Array(Harness.pixel(plain, x, y).prefix(3)) {
                Issue.record("photo pixel \(x),\(y) changed")
                return
            }
        }
        for y in plain.height..<shadowed.height {
            for x in [0, plain.width / 2, plain.width - 1] {
                let p = Harness.pixel(shadowed, x, y)
                #expect(p[3] >= 127 && p[3] <= 128 && p[0] < 8, "\(x),\(y): \(p)")
            }
        }
    }
}
