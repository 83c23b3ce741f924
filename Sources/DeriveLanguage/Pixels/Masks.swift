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

/// The threshold maps of `e_ordered_dither`, numbered as Cloudinary's SDK numbers them (its
/// `Dither` qualifiers, after ImageMagick's thresholds.xml, whose levels the halftone and circle
/// maps below are): 0 threshold 1x1 (no dither), 1 checkerboard 2x1, 2–5 ordered (Bayer) 2x2,
/// 3x3, 4x4 and 8x8, 6–8 halftone 4x4, 6x6 and 8x8 (angled), 9–12 halftone 4x4, 6x6, 8x8 and
/// 16x16 (orthogonal), 13–18 circles 5x5, 6x6 and 7x7, black then white.
public enum DitherMaps {
    /// The map as an n x n tile of 8-bit thresholds (a channel above its threshold turns 255,
    /// else 0), or nil for a level Cloudinary does not have.
    public static func tile(level: Int) -> (size: Int, thresholds: [UInt8])? {
        let levels: [[Int]]
        switch level {
        case 0: levels = [[1]]
        case 1: levels = [[1, 2], [2, 1]]
        case 3: levels = [[3, 7, 4], [6, 1, 9], [2, 8, 5]]
        case 2, 4, 5: levels = bayer(order: level == 2 ? 1 : level == 4 ? 2 : 3).map { $0.map { $0 + 1 } }
        case 6...18: levels = halftones[level - 6]
        default: return nil
        }
        // Levels 1...k over k + 1 steps: a map of k cells gives k + 1 shades of each channel
        // (thresholds.xml's divisor is the largest level plus one for every map).
        let steps = Double(levels.flatMap { $0 }.max()! + 1)
        return (levels.count, levels.flatMap { $0 }.map { UInt8((Double($0) / steps * 255).rounded()) })
    }

    /// Levels 6–18, row by row as ImageMagick's thresholds.xml gives them (h4x4a, h6x6a, h8x8a,
    /// h4x4o, h6x6o, h8x8o, h16x16o, c5x5b, c5x5w, c6x6b, c6x6w, c7x7b, c7x7w).
    static let halftones: [[[Int]]] = [
        [[4, 2, 7, 5], [3, 1, 8, 6], [7, 5, 4, 2], [8, 6, 3, 1]],
        [[14, 13, 10, 8, 2, 3], [16, 18, 12, 7, 1, 4], [15, 17, 11, 9, 6, 5],
         [8, 2, 3, 14, 13, 10], [7, 1, 4, 16, 18, 12], [9, 6, 5, 15, 17, 11]],
        [[13, 7, 8, 14, 17, 21, 22, 18], [6, 1, 3, 9, 28, 31, 29, 23], [5, 2, 4, 10, 27, 32, 30, 24],
         [16, 12, 11, 15, 20, 26, 25, 19], [17, 21, 22, 18, 13, 7, 8, 14], [28, 31, 29, 23, 6, 1, 3, 9],
         [27, 32, 30, 24, 5, 2, 4, 10], [20, 26, 25, 19, 16, 12, 11, 15]],
        [[7, 13, 11, 4], [12, 16, 14, 8], [10, 15, 6, 2], [5, 9, 3, 1]],
        [[7, 17, 27, 14, 9, 4], [21, 29, 33, 31, 18, 11], [24, 32, 36, 34, 25, 22],
         [19, 30, 35, 28, 20, 10], [8, 15, 26, 16, 6, 2], [5, 13, 23, 12, 3, 1]],
        [[7, 21, 33, 43, 36, 19, 9, 4], [16, 27, 51, 55, 49, 29, 14, 11], [31, 47, 57, 61, 59, 45, 35, 23],
         [41, 53, 60, 64, 62, 52, 40, 38], [37, 44, 58, 63, 56, 46, 30, 22], [15, 28, 48, 54, 50, 26, 17, 10],
         [8, 18, 34, 42, 32, 20, 6, 2], [5, 13, 25, 39, 24, 12, 3, 1]],
        [[4, 12, 24, 44, 72, 100, 136, 152, 150, 134, 98, 70, 42, 23, 11, 3],
         [7, 16, 32, 52, 76, 104, 144, 160, 158, 142, 102, 74, 50, 31, 15, 6],
         [19, 27, 40, 60, 92, 132, 168, 180, 178, 166, 130, 90, 58, 39, 26, 18],
         [36, 48, 56, 80, 124, 176, 188, 204, 203, 187, 175, 122, 79, 55, 47, 35],
         [64, 68, 84, 116, 164, 200, 212, 224, 223, 211, 199, 162, 114, 83, 67, 63],
         [88, 96, 112, 156, 192, 216, 232, 240, 239, 231, 214, 190, 154, 111, 95, 87],
         [108, 120, 148, 184, 208, 228, 244, 252, 251, 243, 226, 206, 182, 147, 119, 107],
         [128, 140, 172, 196, 219, 235, 247, 256, 255, 246, 234, 218, 194, 171, 139, 127],
         [126, 138, 170, 195, 220, 236, 248, 253, 254, 245, 233, 217, 193, 169, 137, 125],
         [106, 118, 146, 183, 207, 227, 242, 249, 250, 241, 225, 205, 181, 145, 117, 105],
         [86, 94, 110, 155, 191, 215, 229, 238, 237, 230, 213, 189, 153, 109, 93, 85],
         [62, 66, 82, 115, 163, 198, 210, 221, 222, 209, 197, 161, 113, 81, 65, 61],
         [34, 46, 54, 78, 123, 174, 186, 202, 201, 185, 173, 121, 77, 53, 45, 33],
         [20, 28, 37, 59, 91, 131, 167, 179, 177, 165, 129, 89, 57, 38, 25, 17],
         [8, 13, 29, 51, 75, 103, 143, 159, 157, 141, 101, 73, 49, 30, 14, 5],
         [1, 9, 21, 43, 71, 99, 135, 151, 149, 133, 97, 69, 41, 22, 10, 2]],
        [[1, 21, 16, 15, 4], [5, 17, 20, 19, 14], [6, 21, 25, 24, 12], [7, 18, 22, 23, 11], [2, 8, 9, 10, 3]],
        [[25, 21, 10, 11, 22], [20, 9, 6, 7, 12], [19, 5, 1, 2, 13], [18, 8, 4, 3, 14], [24, 17, 16, 15, 23]],
        [[1, 5, 14, 13, 12, 4], [6, 22, 28, 27, 21, 11], [15, 29, 35, 34, 26, 20],
         [16, 30, 36, 33, 25, 19], [7, 23, 31, 32, 24, 10], [2, 8, 17, 18, 9, 3]],
        [[36, 32, 23, 24, 25, 33], [31, 15, 9, 10, 16, 26], [22, 8, 2, 3, 11, 17],
         [21, 7, 1, 4, 12, 18], [30, 14, 6, 5, 13, 27], [35, 29, 20, 19, 28, 34]],
        [[3, 9, 18, 28, 17, 8, 2], [10, 24, 33, 39, 32, 23, 7], [19, 34, 44, 48, 43, 31, 16],
         [25, 40, 45, 49, 47, 38, 27], [20, 35, 41, 46, 42, 29, 15], [11, 21, 36, 37, 28, 22, 6],
         [4, 12, 13, 26, 14, 5, 1]],
        [[47, 41, 32, 22, 33, 42, 48], [40, 26, 17, 11, 18, 27, 43], [31, 16, 6, 2, 7, 19, 34],
         [25, 10, 5, 1, 3, 12, 23], [30, 15, 9, 4, 8, 20, 35], [39, 29, 14, 13, 21, 28, 44],
         [46, 38, 37, 24, 36, 45, 49]],
    ]

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
