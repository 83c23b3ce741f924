import Foundation

/// Effects that change the canvas (`e_shear`, `e_shadow`, `e_dropshadow`, `e_distort`): the
/// size they make and where the image lands on it, shared by the planner (which must know every
/// size) and the engine (which must make exactly that size).
public enum EffectGeometry {
    /// The canvas an effect makes from an image of `size`, nil when it keeps the size. Offsets
    /// must be pixels by now (the planner evaluates expressions first).
    public static func size(of effect: Effect, on size: Size) -> Size? {
        switch effect {
        case .declared(let d) where d.name == "shear": shear(x: d.number("x"), y: d.number("y"), on: size).canvas
        case .distort(let d): DistortGeometry.canvas(of: d, on: size)
        case .shadow, .declared: castShadow(of: effect, on: size)?.placement(on: size).canvas
        default: nil
        }
    }

    /// The shadow e_shadow or e_dropshadow casts on an image of `size`; nil for other effects.
    public static func castShadow(of effect: Effect, on size: Size) -> CastShadow? {
        switch effect {
        case .shadow(_, _, let x, let y):
            CastShadow(x: pixels(x, of: size.width), y: pixels(y, of: size.height), sigma: shadowSigma, margin: shadowMargin)
        case .declared(let d) where d.name == "dropshadow":
            dropShadow(azimuth: d.number("azimuth"), elevation: d.number("elevation"), spread: d.number("spread"), on: size)
        default: nil
        }
    }

    /// A length of a shadow's offset in pixels: fractions are of the image's side.
    public static func pixels(_ length: Length, of side: Int) -> Int {
        switch length {
        case .pixels(let p): p
        case .fraction(let f): Int((f * Double(side)).rounded())
        case .expression: Length.unevaluated()
        }
    }

    /// Shearing by `x` degrees along the x axis and `y` along the y axis maps (u, v) to
    /// (u + tan x · v, tan y · u + v): the bounding box grows by |tan x| · height in width and
    /// |tan y| · width in height.
    public static func shear(x: Int, y: Int, on size: Size) -> (canvas: Size, tx: Double, ty: Double) {
        let tx = tan(Double(x) * .pi / 180), ty = tan(Double(y) * .pi / 180)
        let w = Double(size.width), h = Double(size.height)
        return (Size(ResizeGeometry.px(w + abs(tx) * h), ResizeGeometry.px(h + abs(ty) * w)), tx, ty)
    }

    /// e_shadow's blur of the edge, in pixels (sigma), and the margin kept for it on every side.
    public static let shadowSigma = 4.0
    public static let shadowMargin = 8
}

/// A shadow as the engine draws it for e_shadow and e_dropshadow: the image's shape (its alpha;
/// a rectangle when opaque) moved by (x, y) pixels and blurred by a Gaussian of `sigma` pixels
/// (none at 0), beneath the image on a canvas grown by the offset and `margin` on every side.
public struct CastShadow: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public var sigma: Double
    public var margin: Int

    public init(x: Int, y: Int, sigma: Double, margin: Int) {
        self.x = x
        self.y = y
        self.sigma = sigma
        self.margin = margin
    }

    /// The canvas that holds an image of `size` and this shadow; the image sits at `image`,
    /// the shadow at `shadow`.
    public func placement(on size: Size) -> (canvas: Size, image: (x: Int, y: Int), shadow: (x: Int, y: Int)) {
        let canvas = Size(size.width + abs(x) + 2 * margin, size.height + abs(y) + 2 * margin)
        let image = (x: margin + max(0, -x), y: margin + max(0, -y))
        return (canvas, image, (image.x + x, image.y + y))
    }
}
