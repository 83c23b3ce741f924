import Foundation

/// Alpha masks for steps whose shape is pure geometry, computed here so they are exact and
/// testable: rounded corners, the ellipse of `r_max`, and the vignette's falloff. Values are
/// 0–255 coverage, anti-aliased across a one-pixel edge.
public enum Masks {
    public static func roundedCorners(width: Int, height: Int, radius: RoundCorners.Radius) -> [UInt8] {
        var mask = [UInt8](repeating: 255, count: width * height)
        switch radius {
        case .max:
            let cx = Double(width) / 2, cy = Double(height) / 2
            let rx = max(cx, 0.5), ry = max(cy, 0.5)
            let scale = min(rx, ry)
            for y in 0..<height {
                let ny = (Double(y) + 0.5 - cy) / ry
                for x in 0..<width {
                    let nx = (Double(x) + 0.5 - cx) / rx
                    // Distance to the ellipse edge in pixels, approximately: good enough for a
                    // one-pixel anti-aliased rim.
                    let edge = ((nx * nx + ny * ny).squareRoot() - 1) * scale
                    mask[y * width + x] = coverage(edge)
                }
            }
        case .corners(let radii):
            let limit = Double(min(width, height)) / 2
            let r = radii.map { min(Double($0.planned), limit) }
            // Corner centres: top-left, top-right, bottom-right, bottom-left.
            let corners: [(Double, Double, Double, Range<Int>, Range<Int>)] = [
                (r[0], r[0], r[0], 0..<Int(r[0].rounded(.up)), 0..<Int(r[0].rounded(.up))),
                (Double(width) - r[1], r[1], r[1], (width - Int(r[1].rounded(.up)))..<width, 0..<Int(r[1].rounded(.up))),
                (Double(width) - r[2], Double(height) - r[2], r[2], (width - Int(r[2].rounded(.up)))..<width, (height - Int(r[2].rounded(.up)))..<height),
                (r[3], Double(height) - r[3], r[3], 0..<Int(r[3].rounded(.up)), (height - Int(r[3].rounded(.up)))..<height),
            ]
            for (cx, cy, radius, xs, ys) in corners where radius > 0 {
                for y in ys {
                    for x in xs {
                        let dx = Double(x) + 0.5 - cx, dy = Double(y) + 0.5 - cy
                        // Only the quadrant outside the centre is rounded.
                        let outside = (x < width / 2 ? dx < 0 : dx > 0) && (y < height / 2 ? dy < 0 : dy > 0)
                        guard outside else { continue }
                        let edge = (dx * dx + dy * dy).squareRoot() - radius
                        mask[y * width + x] = min(mask[y * width + x], coverage(edge))
                    }
                }
            }
        }
        return mask
    }

    /// A multiplier: 255 in the middle, falling toward the corners; `strength` 0–100 is how dark
    /// the corners get.
    public static func vignette(width: Int, height: Int, strength: Int) -> [UInt8] {
        var mask = [UInt8](repeating: 255, count: width * height)
        let amount = Double(max(0, min(100, strength))) / 100
        let cx = Double(width) / 2, cy = Double(height) / 2
        for y in 0..<height {
            let ny = (Double(y) + 0.5 - cy) / cy
            for x in 0..<width {
                let nx = (Double(x) + 0.5 - cx) / cx
                let distance = ((nx * nx + ny * ny) / 2).squareRoot()
                let t = max(0, min(1, (distance - 0.4) / 0.6))
                mask[y * width + x] = UInt8((255 * (1 - amount * t * t)).rounded())
            }
        }
        return mask
    }

    static func coverage(_ signedDistance: Double) -> UInt8 {
        UInt8((max(0, min(1, 0.5 - signedDistance)) * 255).rounded())
    }
}

/// What `auto` quality and format resolve to until the perceptual search exists: fixed,
/// documented values, reported with every output that used them.
public enum AutoDefaults {
    public static func quality(_ level: AutoQuality, for format: OutputFormat) -> Int {
        switch (format, level) {
        case (.avif, .best): 64
        case (.avif, .good): 50
        case (.avif, .eco): 40
        case (.avif, .low): 30
        case (_, .best): 90
        case (_, .good): 80
        case (_, .eco): 70
        case (_, .low): 60
        }
    }

    /// WebP holds alpha and animation and is smaller than JPEG and PNG at equal quality.
    public static let format = OutputFormat.webp
}

/// The threshold maps of `e_ordered_dither`, numbered as Cloudinary's SDK numbers them (after
/// ImageMagick's thresholds.xml): 0 threshold 1x1 (no dither), 1 checkerboard 2x1, 2–5 ordered
/// (Bayer) 2x2, 3x3, 4x4 and 8x8. Cloudinary's 6–18 are halftone and circle maps, which Derive
/// does not draw.
public enum DitherMaps {
    public static let supported = 0...5

    /// The map as an n x n tile of 8-bit thresholds (a channel above its threshold turns 255,
    /// else 0), or nil for a level Derive does not draw.
    public static func tile(level: Int) -> (size: Int, thresholds: [UInt8])? {
        let levels: [[Int]]
        switch level {
        case 0: levels = [[1]]
        case 1: levels = [[1, 2], [2, 1]]
        case 3: levels = [[3, 7, 4], [6, 1, 9], [2, 8, 5]]
        case 2, 4, 5: levels = bayer(order: level == 2 ? 1 : level == 4 ? 2 : 3).map { $0.map { $0 + 1 } }
        default: return nil
        }
        // Levels 1...k over k + 1 steps: a map of k cells gives k + 1 shades of each channel.
        let steps = Double(levels.flatMap { $0 }.max()! + 1)
        return (levels.count, levels.flatMap { $0 }.map { UInt8((Double($0) / steps * 255).rounded()) })
    }

    /// The Bayer index matrix of size 2^order: M(2n) = [4M, 4M + 2; 4M + 3, 4M + 1].
    static func bayer(order: Int) -> [[Int]] {
        var m = [[0]]
        for _ in 0..<order {
            let n = m.count
            var next = Array(repeating: Array(repeating: 0, count: 2 * n), count: 2 * n)
            for y in 0..<n {
                for x in 0..<n {
                    next[y][x] = 4 * m[y][x]
                    next[y][x + n] = 4 * m[y][x] + 2
                    next[y + n][x] = 4 * m[y][x] + 3
                    next[y + n][x + n] = 4 * m[y][x] + 1
                }
            }
            m = next
        }
        return m
    }
}

extension Masks {
    /// Diagonal stripes for e_assist_colorblind: 255 on the stripes, 0 between, `period` pixels
    /// apart (half of each period is stripe); `rising` runs them bottom-left to top-right, else
    /// top-left to bottom-right, so reds and greens get stripes of different directions.
    /// The definition: DeriveVips draws the same pattern lazily with libvips, and its tests
    /// compare against this.
    public static func stripes(width: Int, height: Int, period: Int = 8, rising: Bool) -> [UInt8] {
        var mask = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let d = rising ? x + y : x - y + period * height
                if d % period < period / 2 { mask[y * width + x] = 255 }
            }
        }
        return mask
    }

    /// e_gradient_fade's opacity, 0 (transparent) to 255: over a band from the faded edge (the
    /// top or left for a positive length, the bottom or right for a negative one; `vertical`
    /// says which axis), opacity rises from 0 at the edge to 255 at the band's end as t^(s/20),
    /// s the strength (20, the default, is linear; higher keeps more of the band faint; 0 does
    /// nothing); symmetric fades the opposite edge the same way.
    public static func gradientFade(width: Int, height: Int, band: Int, vertical: Bool, fromEnd: Bool, symmetric: Bool, strength: Int) -> [UInt8] {
        let length = vertical ? height : width
        let exponent = Double(strength) / 20
        let profile: [UInt8] = (0..<length).map { i in
            func opacity(_ d: Int) -> Double {
                guard band > 0, d < band else { return 1 }
                return pow((Double(d) + 0.5) / Double(band), exponent)
            }
            var o = opacity(fromEnd ? length - 1 - i : i)
            if symmetric { o = min(o, opacity(fromEnd ? i : length - 1 - i)) }
            return UInt8((min(1, max(0, o)) * 255).rounded())
        }
        var mask = [UInt8](repeating: 255, count: width * height)
        for y in 0..<height {
            for x in 0..<width { mask[y * width + x] = profile[vertical ? y : x] }
        }
        return mask
    }
}
