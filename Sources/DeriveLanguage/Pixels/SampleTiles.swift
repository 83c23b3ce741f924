internal import CMetricKernels

/// Where `q_auto` cuts the tiles of its sample: an evenly spread grid, some of whose tiles give
/// way to the image's darkest and smoothest regions that still hold some structure (a
/// gradient, a dim glow). Encoders' blocks show first in smooth gradients and in dark areas,
/// and a whole-image score is pulled down most by its worst regions; a grid of 16 tiles often
/// misses a night sky's glow or a sky's gradient altogether (issue 29).
public enum SampleTiles {
    public struct Origin: Sendable, Hashable {
        public var x: Int
        public var y: Int

        public init(x: Int, y: Int) {
            self.x = x
            self.y = y
        }
    }

    /// Tiles in mosaic order (row by row, `across` to a row).
    public struct Layout: Sendable, Equatable {
        public var across: Int
        public var origins: [Origin]
    }

    /// What a tile holds, from its 16×16 blocks' luma (0–255).
    public struct Content: Sendable, Equatable {
        /// Mean luma.
        public var luma: Double
        /// Mean absolute difference of neighbouring luma values inside the blocks (texture,
        /// noise): low where an encoder keeps little but the block's mean.
        public var activity: Double
        /// Standard deviation of the blocks' means: zero for a flat fill or pure noise, more for
        /// a gradient or shapes, which is where flattened blocks show as steps.
        public var structure: Double
    }

    /// Side of the blocks statistics are kept for; tile corners lie on this grid.
    static let block = 16
    /// A tile of the image's darkest kind is wanted when its mean luma is at most this.
    static let dark = 64.0
    /// Structure (deviation of block means, luma levels) a region needs for its blocks to show.
    static let minimumStructure = 0.5

    /// The evenly spread grid `PerceptualReference` always cut: `count` tiles, at most four
    /// across, centred in equal parts of the image, corners on the 16-pixel grid.
    public static func grid(width: Int, height: Int, tileWidth: Int, tileHeight: Int, count: Int) -> Layout {
        let wanted = max(1, count * 128 * 128 / (tileWidth * tileHeight))
        var across = min(width / tileWidth, 4)
        let down = min(height / tileHeight, max(1, wanted / across))
        across = min(width / tileWidth, max(across, wanted / down))
        var origins: [Origin] = []
        func origin(_ index: Int, _ count: Int, _ extent: Int, _ tile: Int) -> Int {
            let centred = Double(extent - tile) * (Double(index) + 0.5) / Double(count)
            return min(extent - tile, (Int(centred) / block) * block)
        }
        for row in 0..<down {
            for column in 0..<across {
                origins.append(Origin(x: origin(column, across, width, tileWidth), y: origin(row, down, height, tileHeight)))
            }
        }
        return Layout(across: across, origins: origins)
    }

    /// The grid with up to `count / 8` of its tiles (at least one) given to the darkest
    /// structured regions and as many to the smoothest, when the grid holds nothing as dark or
    /// as smooth: each replaces the grid tile nearest to it, so the sample still spreads over
    /// the image. On most photographs the grid already holds such tiles and stays as it was
    /// (the search's margins were measured on it).
    public static func layout(_ pixels: PixelBuffer, tileWidth: Int, tileHeight: Int, count: Int) -> Layout {
        var layout = grid(width: pixels.width, height: pixels.height, tileWidth: tileWidth, tileHeight: tileHeight, count: count)
        guard tileWidth >= block, tileHeight >= block else { return layout }
        let stats = BlockStatistics(pixels)
        let step = 2 * block
        var candidates: [(Origin, Content)] = []
        var y = 0
        while y + tileHeight <= pixels.height {
            var x = 0
            while x + tileWidth <= pixels.width {
                let origin = Origin(x: x, y: y)
                candidates.append((origin, stats.content(origin, width: tileWidth, height: tileHeight)))
                x += step
            }
            y += step
        }
        let structured = candidates.filter { $0.1.structure >= minimumStructure }
        guard !structured.isEmpty else { return layout }
        var grid = layout.origins.map { (origin: $0, content: stats.content($0, width: tileWidth, height: tileHeight)) }
        var replaced = Set<Int>()
        let perKind = max(1, count / 8)

        func overlaps(_ a: Origin, _ b: Origin) -> Bool {
            abs(a.x - b.x) < tileWidth && abs(a.y - b.y) < tileHeight
        }
        /// Puts `origin` in place of the nearest grid tile not yet replaced.
        func take(_ origin: Origin, _ content: Content) {
            let free = grid.indices.filter { !replaced.contains($0) }
            guard let nearest = free.min(by: {
                distance(grid[$0].origin, origin) < distance(grid[$1].origin, origin)
            }) else { return }
            replaced.insert(nearest)
            grid[nearest] = (origin, content)
        }
        /// Takes up to `perKind` tiles from the front of `ordered` that are `like` its first,
        /// unless the sample holds such a tile already.
        func pick(_ ordered: [(Origin, Content)], like: (Content) -> Bool) {
            if grid.contains(where: { like($0.content) && $0.content.structure >= minimumStructure }) { return }
            var taken = 0
            for (origin, content) in ordered where taken < perKind {
                guard like(content) else { break }
                // Not over another tile given to content.
                if replaced.contains(where: { overlaps(grid[$0].origin, origin) }) { continue }
                take(origin, content)
                taken += 1
            }
        }
        let darkest = structured.filter { $0.1.luma <= dark }.sorted { $0.1.luma < $1.1.luma }
        if let first = darkest.first {
            pick(darkest) { $0.luma <= first.1.luma + 8 }
        }
        let smoothest = structured.sorted { $0.1.activity < $1.1.activity }
        if let first = smoothest.first {
            pick(smoothest) { $0.activity <= first.1.activity * 1.25 + 0.1 }
        }
        layout.origins = grid.map(\.origin)
        return layout
    }

    static func distance(_ a: Origin, _ b: Origin) -> Int {
        (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)
    }

    /// Per 16×16 block of the image (whole blocks only): its mean luma and the mean absolute
    /// difference of neighbouring luma values inside it.
    struct BlockStatistics {
        let across: Int
        let down: Int
        var means: [Double]
        var activity: [Double]

        init(_ buffer: PixelBuffer) {
            let side = SampleTiles.block
            across = buffer.width / side
            down = buffer.height / side
            var means = [Double](repeating: 0, count: across * down)
            var activity = [Double](repeating: 0, count: across * down)
            // In C (CMetricKernels), for a megapixel in about a millisecond: every pixel is read.
            _ = buffer.pixels.withUnsafeBufferPointer { p in
                means.withUnsafeMutableBufferPointer { m in activity.withUnsafeMutableBufferPointer { a in
                    dmetric_block_statistics(p.baseAddress, buffer.width, buffer.height, Int32(buffer.bands), side, m.baseAddress, a.baseAddress)
                } }
            }
            self.means = means
            self.activity = activity
        }

        /// The content of the tile at `origin` (on the block grid), from the blocks it covers.
        func content(_ origin: Origin, width: Int, height: Int) -> Content {
            let side = SampleTiles.block
            let x0 = origin.x / side, y0 = origin.y / side
            let x1 = min(across, x0 + max(1, width / side)), y1 = min(down, y0 + max(1, height / side))
            var sum = 0.0, squares = 0.0, active = 0.0, n = 0.0
            for by in y0..<y1 {
                for bx in x0..<x1 {
                    let m = means[by * across + bx]
                    sum += m
                    squares += m * m
                    active += activity[by * across + bx]
                    n += 1
                }
            }
            guard n > 0 else { return Content(luma: 0, activity: 0, structure: 0) }
            let mean = sum / n
            return Content(luma: mean, activity: active / n, structure: max(0, squares / n - mean * mean).squareRoot())
        }
    }
}
