import Foundation

/// `e_distort`'s geometry, shared by the planner (the canvas) and the engine (where each output
/// pixel comes from). Points are continuous coordinates: pixel (i, j) covers [i, i+1) × [j, j+1).
public enum DistortGeometry {
    /// The canvas a distortion makes from an image of `size`; nil when the corners are not a
    /// quadrilateral it can draw (see `problem`) or the arc is 0°.
    public static func canvas(of distortion: Distortion, on size: Size) -> Size? {
        switch distortion {
        case .corners(let corners): Perspective(corners: corners, on: size)?.canvas
        case .arc(let degrees): Arc(degrees: degrees, on: size)?.canvas
        }
    }

    /// The corners as points in pixels: fractions are of the width (x) and height (y).
    public static func points(_ corners: [Length], on size: Size) -> [(x: Double, y: Double)] {
        guard corners.count == 8 else { return [] }
        return (0..<4).map { (corners[2 * $0].resolve(against: size.width), corners[2 * $0 + 1].resolve(against: size.height)) }
    }

    /// Why four points cannot be the image's new corners, or nil: a perspective maps a
    /// rectangle to a convex quadrilateral, so the corners must turn the same way at each
    /// vertex, without three in a line (which would squash the image to nothing).
    public static func problem(_ points: [(x: Double, y: Double)]) -> String? {
        guard points.count == 4 else { return "must be four points: x1:y1:x2:y2:x3:y3:x4:y4" }
        let turns = (0..<4).map { i -> Double in
            let a = points[i], b = points[(i + 1) % 4], c = points[(i + 2) % 4]
            return (b.x - a.x) * (c.y - b.y) - (b.y - a.y) * (c.x - b.x)
        }
        if turns.allSatisfy({ $0 > 1e-9 }) || turns.allSatisfy({ $0 < -1e-9 }) { return nil }
        return "must make a convex quadrilateral (top-left, top-right, bottom-right, bottom-left in turn), without three in a line"
    }

    /// The image warped so its corners land on four points; the canvas is their bounding box.
    public struct Perspective: Sendable {
        public let canvas: Size
        /// Where the canvas's (0, 0) is in the corners' coordinates.
        public let origin: (x: Double, y: Double)
        /// Row by row, the 3x3 matrix taking a canvas point (x, y, 1) to the image's (u·w, v·w, w).
        public let inverse: [Double]

        public init?(corners: [Length], on size: Size) {
            let points = DistortGeometry.points(corners, on: size)
            guard DistortGeometry.problem(points) == nil else { return nil }
            let xs = points.map(\.x), ys = points.map(\.y)
            let left = xs.min()!.rounded(.down), top = ys.min()!.rounded(.down)
            canvas = Size(max(1, Int(xs.max()!.rounded(.up) - left)), max(1, Int(ys.max()!.rounded(.up) - top)))
            origin = (left, top)
            let w = Double(size.width), h = Double(size.height)
            let source = [(0.0, 0.0), (w, 0), (w, h), (0, h)]
            guard let m = Homography.solve(from: points.map { ($0.x - left, $0.y - top) }, to: source) else { return nil }
            inverse = m
        }

        /// The image's point that lands at canvas point (x, y), or nil when it is off the image.
        public func source(x: Double, y: Double, imageSize: Size) -> (u: Double, v: Double)? {
            let m = inverse
            let d = m[6] * x + m[7] * y + m[8]
            guard d > 0 else { return nil }
            let u = (m[0] * x + m[1] * y + m[2]) / d, v = (m[3] * x + m[4] * y + m[5]) / d
            let e = 1e-9
            guard u >= -e, v >= -e, u <= Double(imageSize.width) + e, v <= Double(imageSize.height) + e else { return nil }
            return (u, v)
        }
    }

    /// The image bent into an arc: its middle row along a circle of radius width / angle (so the
    /// middle row keeps its length), its top edge on the outer circle and its bottom edge on the
    /// inner one, the arc centred on the vertical (ImageMagick's Arc distortion, which
    /// Cloudinary's matches). A negative angle is the same bent the other way: the circle's
    /// centre above, the image upright (a smile).
    public struct Arc: Sendable {
        public let canvas: Size
        /// The circle's centre on the canvas, for the frown; a smile mirrors it vertically.
        public let centre: (x: Double, y: Double)
        public let outer: Double
        public let inner: Double
        /// The angle in radians (positive) and whether the arc curves downwards.
        public let angle: Double
        public let smile: Bool
        public let imageSize: Size

        public init?(degrees: Int, on size: Size) {
            guard degrees != 0, Distortion.arcRange.contains(degrees) else { return nil }
            angle = Double(abs(degrees)) * .pi / 180
            smile = degrees < 0
            imageSize = size
            let w = Double(size.width), h = Double(size.height)
            let middle = w / angle
            outer = middle + h / 2
            inner = max(0, middle - h / 2)
            // The sector's extremes: its four corners, and the outer circle where it crosses an
            // axis (angles from the vertical, clockwise).
            var points: [(Double, Double)] = []
            var angles = [-angle / 2, angle / 2]
            for axis in [0, Double.pi / 2, -Double.pi / 2, Double.pi] where abs(axis) <= angle / 2 + 1e-12 { angles.append(axis) }
            for a in angles {
                for r in [outer, inner] { points.append((r * sin(a), -r * cos(a))) }
            }
            let xs = points.map(\.0), ys = points.map(\.1)
            let (minX, maxX, minY, maxY) = (xs.min()!, xs.max()!, ys.min()!, ys.max()!)
            canvas = Size(max(1, Int((maxX - minX).rounded(.up))), max(1, Int((maxY - minY).rounded(.up))))
            // Centred on the canvas (which rounds the extent up).
            centre = (-minX + (Double(canvas.width) - (maxX - minX)) / 2, -minY + (Double(canvas.height) - (maxY - minY)) / 2)
        }

        /// The image's point that lands at canvas point (x, y), or nil when it is off the image.
        public func source(x: Double, y: Double) -> (u: Double, v: Double)? {
            let dx = x - centre.x
            let up = smile ? y - (Double(canvas.height) - centre.y) : centre.y - y
            let r = (dx * dx + up * up).squareRoot()
            let a = atan2(dx, up)
            let w = Double(imageSize.width), h = Double(imageSize.height)
            let u = w / 2 + a / angle * w
            var v = (outer - r) / (outer - inner) * h
            if smile { v = h - v }
            let e = 1e-9
            guard u >= -e, u <= w + e, v >= -e, v <= h + e else { return nil }
            return (u, v)
        }
    }
}

/// A plane perspective transform from four point correspondences.
public enum Homography {
    /// The 3x3 matrix (row by row, last entry 1) taking each `from` point to its `to` point, or
    /// nil when the points are degenerate.
    public static func solve(from: [(Double, Double)], to: [(Double, Double)]) -> [Double]? {
        guard from.count == 4, to.count == 4 else { return nil }
        // u = (a x + b y + c) / (g x + h y + 1), v = (d x + e y + f) / (g x + h y + 1).
        var rows: [[Double]] = []
        for ((x, y), (u, v)) in zip(from, to) {
            rows.append([x, y, 1, 0, 0, 0, -x * u, -y * u, u])
            rows.append([0, 0, 0, x, y, 1, -x * v, -y * v, v])
        }
        guard let solution = gaussian(rows) else { return nil }
        return solution + [1]
    }

    /// Solves n equations in n unknowns (each row the coefficients and the constant) by Gaussian
    /// elimination with partial pivoting.
    static func gaussian(_ input: [[Double]]) -> [Double]? {
        var m = input
        let n = m.count
        for col in 0..<n {
            let pivot = (col..<n).max { abs(m[$0][col]) < abs(m[$1][col]) }!
            guard abs(m[pivot][col]) > 1e-12 else { return nil }
            m.swapAt(col, pivot)
            for row in 0..<n where row != col {
                let f = m[row][col] / m[col][col]
                if f == 0 { continue }
                for k in col...n { m[row][k] -= f * m[col][k] }
            }
        }
        return (0..<n).map { m[$0][n] / m[$0][$0] }
    }
}
