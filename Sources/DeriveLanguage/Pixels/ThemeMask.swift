/// Where `e_theme` changes an image: the page (its main background and what is drawn on it:
/// text, lines, icons, buttons) and not its photographs nor its panels. Cloudinary documents the
/// effect as changing "the main background color ... as if a theme change was applied" and its
/// photosensitivity as how readily areas count as photographic (0: none, 200: all); it does not
/// say how it finds them, so this is Derive's reading, on cells of a working copy of the image:
///
/// - a cell is **flat** by the share of its pixels within `tolerance` (each channel) of one of
///   its two most frequent colours, or, when those two are far apart (ink on a page), between
///   them (a stroke's antialiased edge): drawn areas are made of few exact colours and their
///   mixes, photographs change from pixel to pixel;
/// - a cell is **photographic** when that share is at most photosensitivity / 200 (so 100, the
///   default, asks for half of the cell in two colours), or when four of its eight neighbours
///   are; a joined area of photographic cells smaller than `photographCells` is dense ink taken
///   for texture and is not, and a larger one is a photograph whose whole bounding rectangle is
///   photographic (its smooth sky or gradient included);
/// - the **background** is every joined area of other cells at least half in the background
///   colour that covers a fiftieth of the image or more (a photograph's patch of shadow in that
///   colour is smaller);
/// - the rest are drawn in other colours: a joined area of them as large as `panelArea` is a
///   **panel** (a sidebar, a title bar), which keeps its colours with what is drawn on it;
///   smaller ones are **ink** (text, icons, buttons);
/// - the page is the background and the ink joined to it; in cells where it meets a photograph
///   or a panel only pixels in the background colour change. Photosensitivity 0 makes the
///   whole image page.
public enum ThemeMask {
    /// Cell side, in pixels of the working copy.
    public static let cell = 8
    /// How far (each channel, 0–255) a pixel may be from a cell colour and still count as it:
    /// JPEG's noise around flat fills stays within it.
    public static let tolerance = 2
    /// The share of a cell's pixels in the background colour that makes it show the background.
    public static let backgroundShare = 0.5
    /// The smallest joined area of background cells, as a share of all cells, that is a page's
    /// background rather than a patch of a photograph in that colour.
    public static let backgroundArea = 0.02
    /// The smallest joined area of photographic cells that is a photograph (smaller ones are
    /// dense text or a detailed icon).
    public static let photographCells = 6
    /// The smallest joined area of cells drawn in other colours, as a share of all cells, that
    /// is a panel rather than ink.
    public static let panelArea = 0.02

    /// A cell where page meets what is not: only pixels in the background colour change there.
    public static let edge: UInt8 = 128

    /// One byte per cell (`cell` pixels of `image` a side, the last row and column partial):
    /// 255 where the theme applies, 0 where it does not, `edge` where page meets photograph or
    /// panel and only the background's own pixels change.
    public static func cells(of image: PixelBuffer, background: Color, photosensitivity: Int) -> PixelBuffer {
        let columns = (image.width + cell - 1) / cell, rows = (image.height + cell - 1) / cell
        guard columns > 0, rows > 0 else { return PixelBuffer(width: 0, height: 0, bands: 1, pixels: []) }
        if photosensitivity <= 0 {
            return PixelBuffer(width: columns, height: rows, bands: 1, pixels: [UInt8](repeating: 255, count: columns * rows))
        }
        let threshold = Double(photosensitivity) / 200
        var photographic = [Bool](repeating: false, count: columns * rows)
        var showsBackground = [Bool](repeating: false, count: columns * rows)
        let bg = (Int(background.red), Int(background.green), Int(background.blue))
        for row in 0..<rows {
            for column in 0..<columns {
                let x0 = column * cell, y0 = row * cell
                let x1 = min(image.width, x0 + cell), y1 = min(image.height, y0 + cell)
                var pixels: [(Int, Int, Int)] = []
                pixels.reserveCapacity(cell * cell)
                for y in y0..<y1 { for x in x0..<x1 { pixels.append(image.rgb(x, y)) } }
                let i = row * columns + column
                let near = pixels.filter { close($0, bg, within: 2 * tolerance) }.count
                showsBackground[i] = Double(near) >= backgroundShare * Double(pixels.count)
                photographic[i] = flatness(pixels) <= threshold
            }
        }
        let total = columns * rows
        let grid = (columns: columns, rows: rows)
        // A cell most of whose neighbours are photographic is too: a photograph's smooth
        // patches (a petal, a wall) are flat cells among textured ones.
        let surrounded = (0..<total).filter { i in
            !photographic[i] && neighbours(of: i, in: grid).filter { photographic[$0] }.count >= 4
        }
        for i in surrounded { photographic[i] = true }
        // Photographs are rectangles of photographic cells; a few such cells alone are dense ink.
        var photographs = [Bool](repeating: false, count: total)
        for area in areas(in: grid, where: { photographic[$0] }) where area.count >= photographCells {
            let xs = area.map { $0 % columns }, ys = area.map { $0 / columns }
            for r in ys.min()!...ys.max()! { for c in xs.min()!...xs.max()! { photographs[r * columns + c] = true } }
        }
        // At least 4 cells (fewer in an image of fewer cells), so a page needs some extent.
        func areaOf(_ share: Double) -> Int { max(min(4, total), Int((share * Double(total)).rounded(.up))) }
        // The background: areas of cells mostly in the background colour, large enough to be a
        // page's (not a photograph's patch of shadow or sky in that colour).
        let isBackground = (0..<total).map { showsBackground[$0] && !photographs[$0] }
        let seeds = areas(in: grid, where: { isBackground[$0] }).filter { $0.count >= areaOf(backgroundArea) }.flatMap { $0 }
        // Drawn in other colours: ink when small, a panel when large.
        var ink = [Bool](repeating: false, count: total)
        for area in areas(in: grid, where: { !isBackground[$0] && !photographs[$0] }) where area.count < areaOf(panelArea) {
            for i in area { ink[i] = true }
        }
        // The page: the background and the ink joined to it (the cells the flood marks).
        var isPage = [Bool](repeating: false, count: total)
        _ = flood(from: seeds, in: grid, marked: &isPage, passes: { isBackground[$0] || ink[$0] })
        // Where page meets photograph or panel, a cell holds some of each: there only the
        // background's own pixels change (`edge`), so neither keeps a strip of the other.
        let pixels = (0..<total).map { i -> UInt8 in
            neighbours(of: i, in: grid).contains { isPage[$0] != isPage[i] } ? edge : (isPage[i] ? 255 : 0)
        }
        return PixelBuffer(width: columns, height: rows, bands: 1, pixels: pixels)
    }

    typealias Grid = (columns: Int, rows: Int)

    /// The eight cells around cell `i` that are inside the grid.
    static func neighbours(of i: Int, in grid: Grid) -> [Int] {
        let column = i % grid.columns, row = i / grid.columns
        var around: [Int] = []
        for r in max(0, row - 1)...min(grid.rows - 1, row + 1) {
            for c in max(0, column - 1)...min(grid.columns - 1, column + 1) where r != row || c != column { around.append(r * grid.columns + c) }
        }
        return around
    }

    /// The joined areas (through 4-neighbours) of the cells where `inside` holds.
    static func areas(in grid: Grid, where inside: (Int) -> Bool) -> [[Int]] {
        var seen = [Bool](repeating: false, count: grid.columns * grid.rows)
        var found: [[Int]] = []
        for start in 0..<seen.count where inside(start) && !seen[start] {
            found.append(flood(from: [start], in: grid, marked: &seen, passes: inside))
        }
        return found
    }

    /// The cells reached from `starts` through 4-neighbours that `passes`, each marked once.
    static func flood(from starts: [Int], in grid: Grid, marked: inout [Bool], passes: (Int) -> Bool) -> [Int] {
        var stack: [Int] = []
        var reached: [Int] = []
        for i in starts where !marked[i] {
            marked[i] = true
            stack.append(i)
        }
        while let i = stack.popLast() {
            reached.append(i)
            let column = i % grid.columns, row = i / grid.columns
            for (dc, dr) in [(1, 0), (-1, 0), (0, 1), (0, -1)] {
                let c = column + dc, r = row + dr
                guard c >= 0, c < grid.columns, r >= 0, r < grid.rows else { continue }
                let j = r * grid.columns + c
                if !marked[j] && passes(j) {
                    marked[j] = true
                    stack.append(j)
                }
            }
        }
        return reached
    }

    /// The share of `pixels` within `tolerance` of one of their two most frequent colours
    /// (colours counted at 5 bits a channel to find them, then matched at full precision).
    static func flatness(_ pixels: [(Int, Int, Int)]) -> Double {
        guard !pixels.isEmpty else { return 1 }
        func key(_ p: (Int, Int, Int)) -> Int { (p.0 >> 3) << 10 | (p.1 >> 3) << 5 | (p.2 >> 3) }
        var counts: [Int: Int] = [:]
        for p in pixels { counts[key(p), default: 0] += 1 }
        // The first colour: the mean of the most frequent bucket.
        func mean(of bucket: Int, among candidates: [(Int, Int, Int)]) -> (Int, Int, Int) {
            let members = candidates.filter { key($0) == bucket }
            let n = max(1, members.count)
            return (members.reduce(0) { $0 + $1.0 } / n, members.reduce(0) { $0 + $1.1 } / n, members.reduce(0) { $0 + $1.2 } / n)
        }
        let first = mean(of: counts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!.key, among: pixels)
        let rest = pixels.filter { !close($0, first, within: tolerance) }
        guard !rest.isEmpty else { return 1 }
        var restCounts: [Int: Int] = [:]
        for p in rest { restCounts[key(p), default: 0] += 1 }
        let second = mean(of: restCounts.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }!.key, among: rest)
        var outside = rest.filter { !close($0, second, within: tolerance) }
        // Ink on a page: when the two colours are far apart, a pixel between them (on the
        // segment joining them) is a stroke's antialiased edge, a mix of the two.
        if max(abs(first.0 - second.0), abs(first.1 - second.1), abs(first.2 - second.2)) > contrast {
            outside = outside.filter { !onSegment($0, first, second) }
        }
        return 1 - Double(outside.count) / Double(pixels.count)
    }

    /// How far apart (each channel's largest difference) a cell's two colours must be for the
    /// pixels between them to count as antialiased edges.
    public static let contrast = 64

    /// Whether `p` is within `2 × tolerance` (each channel) of the mix of `a` and `b` nearest it.
    static func onSegment(_ p: (Int, Int, Int), _ a: (Int, Int, Int), _ b: (Int, Int, Int)) -> Bool {
        let d = (Double(b.0 - a.0), Double(b.1 - a.1), Double(b.2 - a.2))
        let v = (Double(p.0 - a.0), Double(p.1 - a.1), Double(p.2 - a.2))
        let t = max(0, min(1, (v.0 * d.0 + v.1 * d.1 + v.2 * d.2) / (d.0 * d.0 + d.1 * d.1 + d.2 * d.2)))
        let limit = Double(2 * tolerance)
        return abs(v.0 - t * d.0) <= limit && abs(v.1 - t * d.1) <= limit && abs(v.2 - t * d.2) <= limit
    }

    static func close(_ a: (Int, Int, Int), _ b: (Int, Int, Int), within t: Int) -> Bool {
        abs(a.0 - b.0) <= t && abs(a.1 - b.1) <= t && abs(a.2 - b.2) <= t
    }
}
