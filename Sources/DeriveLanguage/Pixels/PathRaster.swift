import Foundation

/// A clipping path filled into a coverage mask, in pure Swift: libvips' SVG loader is an
/// untrusted loader that deployments keep blocked, and a path needs no more than this. Cubic
/// Béziers are flattened into segments; each pixel row is sampled on four sub-scanlines, where
/// the crossings of the segments that span the row (with their direction) give the spans inside
/// by the nonzero or the evenodd rule, and each span adds its exact horizontal coverage.
public enum PathRaster {
    static let subScanlines = 4
    /// Segments a path is flattened into at most, and rows they may span together: the work is
    /// proportional to the latter, which a path in a file could otherwise make unbounded.
    static let maxSegments = 500_000
    static let maxRowSpans = 20_000_000

    struct Edge {
        var x0, y0, x1, y1: Double
    }

    /// The mask (one byte per pixel, 255 inside) of `path` drawn on an image `width` × `height`.
    public static func mask(_ path: ClippingPath, width: Int, height: Int, evenOdd: Bool) throws(DeriveError) -> [UInt8] {
        try mask(path, width: width, height: height, evenOdd: evenOdd, window: (0, 0, width, height))
    }

    /// The same mask over a part of the image only (`window`, in the image's pixels): the
    /// path is placed on the whole image and only the window's pixels are filled and returned,
    /// row by row, so the work is the window's.
    static func mask(_ path: ClippingPath, width imageWidth: Int, height imageHeight: Int, evenOdd: Bool,
                     window: (left: Int, top: Int, width: Int, height: Int)) throws(DeriveError) -> [UInt8] {
        let edges = self.edges(path, width: Double(imageWidth), height: Double(imageHeight)).map {
            Edge(x0: $0.x0 - Double(window.left), y0: $0.y0 - Double(window.top), x1: $0.x1 - Double(window.left), y1: $0.y1 - Double(window.top))
        }
        let width = window.width, height = window.height
        // Each row's segments, so a sub-scanline looks only at those that can cross it.
        var byRow = [[Int32]](repeating: [], count: height)
        var spans = 0
        for (index, e) in edges.enumerated() {
            let top = max(0, Int(min(e.y0, e.y1).rounded(.down))), bottom = min(height, Int(max(e.y0, e.y1).rounded(.up)))
            guard top < bottom else { continue }
            spans += bottom - top
            guard spans <= maxRowSpans else {
                throw DeriveError(.limitExceeded, "fl_clip: the path \(Quoted(path.name)) is too intricate to fill (its segments cross more than \(maxRowSpans) rows)")
            }
            for row in top..<bottom { byRow[row].append(Int32(index)) }
        }
        var mask = [UInt8](repeating: 0, count: width * height)
        var row = [Double](repeating: 0, count: width + 1)
        let weight = 1 / Double(subScanlines)
        var crossings: [(x: Double, winding: Int)] = []
        for y in 0..<height where !byRow[y].isEmpty {
            for i in row.indices { row[i] = 0 }
            for k in 0..<subScanlines {
                let sy = Double(y) + (Double(k) + 0.5) * weight
                crossings.removeAll(keepingCapacity: true)
                for index in byRow[y] {
                    let e = edges[Int(index)]
                    guard (e.y0 <= sy && sy < e.y1) || (e.y1 <= sy && sy < e.y0) else { continue }
                    let t = (sy - e.y0) / (e.y1 - e.y0)
                    crossings.append((e.x0 + t * (e.x1 - e.x0), e.y1 > e.y0 ? 1 : -1))
                }
                crossings.sort { $0.x < $1.x }
                var winding = 0
                for (index, crossing) in crossings.enumerated() {
                    winding += evenOdd ? 1 : crossing.winding
                    let inside = evenOdd ? winding % 2 != 0 : winding != 0
                    guard inside, index + 1 < crossings.count else { continue }
                    cover(&row, from: crossing.x, to: crossings[index + 1].x, weight: weight, width: width)
                }
            }
            for x in 0..<width { mask[y * width + x] = UInt8(min(255, (row[x] * 255).rounded())) }
        }
        return mask
    }

    /// Adds `weight` × the part of each pixel between `a` and `b` (clipped to the row).
    static func cover(_ row: inout [Double], from a: Double, to b: Double, weight: Double, width: Int) {
        let a = max(0, min(Double(width), a)), b = max(0, min(Double(width), b))
        guard b > a else { return }
        let first = Int(a), last = min(width - 1, Int(b))
        if first == last {
            row[first] += (b - a) * weight
            return
        }
        row[first] += (Double(first + 1) - a) * weight
        if first + 1 < last { for x in (first + 1)..<last { row[x] += weight } }
        if last < width { row[last] += (b - Double(last)) * weight }
    }

    /// The path's segments in pixels: each cubic from knot to knot (and back to the first, every
    /// subpath being closed for the fill; an open one by a straight line) flattened into
    /// segments of about 2 px, fewer when the path would make more than `maxSegments`.
    static func edges(_ path: ClippingPath, width: Double, height: Double) -> [Edge] {
        func px(_ p: ClippingPath.Point) -> (x: Double, y: Double) { (p.x * width, p.y * height) }
        typealias Cubic = (p0: (x: Double, y: Double), p1: (x: Double, y: Double), p2: (x: Double, y: Double), p3: (x: Double, y: Double), steps: Int)
        var cubics: [Cubic] = []
        for subpath in path.subpaths where subpath.knots.count > 1 {
            let knots = subpath.knots
            for (i, from) in knots.enumerated() {
                let to = knots[(i + 1) % knots.count]
                let closing = i == knots.count - 1 && !subpath.closed
                let (p0, p3) = (px(from.anchor), px(to.anchor))
                let (p1, p2) = closing ? (p0, p3) : (px(from.after), px(to.before))
                let hull = hypot(p1.x - p0.x, p1.y - p0.y) + hypot(p2.x - p1.x, p2.y - p1.y) + hypot(p3.x - p2.x, p3.y - p2.y)
                cubics.append((p0, p1, p2, p3, max(1, min(256, Int(hull / 2)))))
            }
        }
        let total = cubics.reduce(0) { $0 + $1.steps }
        let scale = total > maxSegments ? Double(maxSegments) / Double(total) : 1
        var edges: [Edge] = []
        for c in cubics {
            let steps = max(1, Int(Double(c.steps) * scale))
            var previous = c.p0
            for s in 1...steps {
                let t = Double(s) / Double(steps), u = 1 - t
                let x = u * u * u * c.p0.x + 3 * u * u * t * c.p1.x + 3 * u * t * t * c.p2.x + t * t * t * c.p3.x
                let y = u * u * u * c.p0.y + 3 * u * u * t * c.p1.y + 3 * u * t * t * c.p2.y + t * t * t * c.p3.y
                if y != previous.y { edges.append(Edge(x0: previous.x, y0: previous.y, x1: x, y1: y)) }
                previous = (x, y)
            }
        }
        return edges
    }
}
