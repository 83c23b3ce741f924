@testable import DeriveLanguage
import Testing

/// Where `q_auto` cuts its sample: the grid, and tiles given to dark and smooth regions.
@Suite struct SampleTilesTests {
    /// A busy, bright image (seeded noise) with, optionally, a dark smooth gradient in the top
    /// left corner, between the grid's tiles.
    static func image(width: Int = 1200, height: Int = 900, darkCorner: Bool) -> PixelBuffer {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Int(state >> 58)  // 0–63
                var value = 120 + noise
                if darkCorner && x < 120 && y < 120 {
                    value = 4 + (x + y) / 12  // a dim glow, 4–23
                }
                for band in 0..<3 { pixels[(y * width + x) * 3 + band] = UInt8(value) }
            }
        }
        return PixelBuffer(width: width, height: height, bands: 3, pixels: pixels)
    }

    /// The grid as `PerceptualReference` always cut it: four across, centred in equal parts,
    /// corners on the 16-pixel grid.
    @Test func theGridIsEvenlySpread() {
        let grid = SampleTiles.grid(width: 1200, height: 900, tileWidth: 128, tileHeight: 128, count: 16)
        #expect(grid.across == 4)
        #expect(grid.origins.count == 16)
        #expect(Set(grid.origins.map(\.x)) == [128, 400, 656, 928])
        #expect(Set(grid.origins.map(\.y)) == [96, 288, 480, 672])
        #expect(grid.origins.allSatisfy { $0.x % 16 == 0 && $0.y % 16 == 0 })
    }

    /// Nothing darker or smoother than what the grid holds: the grid as it was.
    @Test func aUniformImageKeepsTheGrid() {
        let layout = SampleTiles.layout(Self.image(darkCorner: false), tileWidth: 128, tileHeight: 128, count: 16)
        #expect(layout == SampleTiles.grid(width: 1200, height: 900, tileWidth: 128, tileHeight: 128, count: 16))
    }

    /// A dark smooth region the grid misses gets tiles of its own (for 16 tiles and JPEG's 8),
    /// in place of grid tiles: as many tiles as before, on the 16-pixel grid, inside the image.
    @Test(arguments: [16, 8])
    func aDarkSmoothCornerIsSampled(count: Int) {
        let pixels = Self.image(darkCorner: true)
        let grid = SampleTiles.grid(width: 1200, height: 900, tileWidth: 128, tileHeight: 128, count: count)
        #expect(!grid.origins.contains { $0.x < 120 && $0.y < 120 }, "the grid alone misses the corner")
        let layout = SampleTiles.layout(pixels, tileWidth: 128, tileHeight: 128, count: count)
        #expect(layout.across == grid.across)
        #expect(layout.origins.count == grid.origins.count)
        #expect(layout.origins.contains { $0.x < 64 && $0.y < 64 }, "\(layout.origins)")
        #expect(layout.origins.allSatisfy { $0.x % 16 == 0 && $0.y % 16 == 0 && $0.x + 128 <= 1200 && $0.y + 128 <= 900 })
        // Most of the grid stays.
        #expect(Set(layout.origins).intersection(grid.origins).count >= grid.origins.count * 3 / 4, "\(layout.origins)")
    }

    /// The statistics behind the choice: a flat fill has neither activity nor structure, a
    /// gradient has structure without activity, noise has activity.
    @Test func blockStatisticsTellFlatGradientAndNoiseApart() {
        let width = 128, height = 128
        func content(_ value: (Int, Int) -> Int) -> SampleTiles.Content {
            var pixels = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height { for x in 0..<width { pixels[y * width + x] = UInt8(value(x, y)) } }
            let stats = SampleTiles.BlockStatistics(PixelBuffer(width: width, height: height, bands: 1, pixels: pixels))
            return stats.content(.init(x: 0, y: 0), width: width, height: height)
        }
        let flat = content { _, _ in 90 }
        #expect(flat.luma == 90 && flat.activity == 0 && flat.structure == 0)
        let gradient = content { x, _ in 40 + x / 4 }
        #expect(gradient.structure > 5 && gradient.activity < 0.2, "\(gradient)")
        let checks = content { x, y in (x + y) % 2 == 0 ? 60 : 200 }
        #expect(checks.activity == 140 && checks.structure == 0, "\(checks)")
    }
}
