import Foundation

/// e_dropshadow as a shadow e_shadow's engine draws. Cloudinary documents the light (azimuth
/// 0–360, elevation 0–90, spread 0–100) but not how its shadow is drawn, and finds the object
/// with AI; Derive's approximation casts the image's own shape (its alpha, a rectangle when
/// opaque) as if it stood `dropShadowHeight` of the image's shorter side tall, lit from
/// `azimuth`, and moves that shape, so it is known from the image's size alone (the planner
/// must know the grown canvas before any pixel is read).
extension EffectGeometry {
    /// The height of the object that casts the shadow, as a fraction of the image's shorter
    /// side: at the default elevation (45°) the shadow moves this far.
    public static let dropShadowHeight = 0.1
    /// The sine of the elevation is taken as at least this (about 11.5°), so a light on the
    /// horizon casts a shadow of half the shorter side instead of an endless one; below it
    /// the shadow still lengthens as the elevation falls (as its cosine).
    public static let dropShadowLeastSine = 0.2
    /// The blur (sigma) at spread 100, as a fraction of the shorter side; it scales linearly
    /// with the spread, to none (a sharp edge) at 0.
    public static let dropShadowSoftness = 0.05

    /// The shadow a light at `azimuth` degrees (clockwise from the image's top: 0 behind the
    /// object, 90 at its right, 180 in front, 270 at its left) and `elevation` degrees above
    /// the ground casts on an image of `size`. It falls away from the light, at
    /// height × cos(elevation) / max(sin(elevation), 0.2): none at 90°, longer as the light
    /// sinks. The spread blurs it (sigma = spread % of 5 % of the shorter side), with a margin
    /// of two sigmas, as e_shadow keeps.
    public static func dropShadow(azimuth: Int, elevation: Int, spread: Int, on size: Size) -> CastShadow {
        let side = Double(min(size.width, size.height))
        let a = Double(azimuth) * .pi / 180, e = Double(elevation) * .pi / 180
        let length = side * dropShadowHeight * cos(e) / max(sin(e), dropShadowLeastSine)
        // The light's direction in image coordinates (y down) is (sin a, -cos a); the shadow
        // falls the opposite way.
        let x = Int((-sin(a) * length).rounded()), y = Int((cos(a) * length).rounded())
        let sigma = Double(spread) * side * dropShadowSoftness / 100
        return CastShadow(x: x, y: y, sigma: sigma, margin: Int((2 * sigma).rounded(.up)))
    }
}
