import Foundation

/// Effects that change the canvas (`e_shear`, `e_shadow`, `e_distort`): the size they make and where the
/// image lands on it, shared by the planner (which must know every size) and the engine
/// (which must make exactly that size).
public enum EffectGeometry {
    /// The canvas an effect makes from an image of `size`, nil when it keeps the size. Offsets
    /// must be pixels by now (the planner evaluates expressions first).
    public static func size(of effect: Effect, on size: Size) -> Size? {
        switch effect {
        case .shear(let x, let y): shear(x: x, y: y, on: size).canvas
        case .distort(let d): DistortGeometry.canvas(of: d, on: size)
        case .shadow(_, _, let x, let y): shadow(x: pixels(x, of: size.width), y: pixels(y, of: size.height), on: size).canvas
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

    /// The blur of a shadow's edge, in pixels (sigma), and the margin kept for it on every side.
    public static let shadowSigma = 4.0
    public static let shadowMargin = 8

    /// A shadow offset by (x, y): the canvas holds the image and its shadow with a margin for
    /// the blur on every side; the image sits at `image`, the shadow at `shadow`.
    public static func shadow(x: Int, y: Int, on size: Size) -> (canvas: Size, image: (x: Int, y: Int), shadow: (x: Int, y: Int)) {
        let m = shadowMargin
        let canvas = Size(size.width + abs(x) + 2 * m, size.height + abs(y) + 2 * m)
        let image = (x: m + max(0, -x), y: m + max(0, -y))
        return (canvas, image, (image.x + x, image.y + y))
    }
}
