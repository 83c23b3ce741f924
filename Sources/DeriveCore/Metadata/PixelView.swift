/// 8-bit interleaved pixels in memory someone else owns (a decoded libvips image), read
/// without copying.
public struct PixelView {
    public var width: Int
    public var height: Int
    public var bands: Int
    public var bytes: UnsafeRawBufferPointer

    public init(width: Int, height: Int, bands: Int, bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= width * height * bands, "pixel view larger than its memory")
        self.width = width
        self.height = height
        self.bands = bands
        self.bytes = bytes
    }

    /// Averages boxes of pixels down to `size` (area sampling), as RGB or, with `grey`, as one
    /// luminance band. Transparent pixels count as white, as they would look on a page.
    public func downsampled(to size: Size, grey: Bool = false) -> PixelBuffer {
        let outBands = grey ? 1 : 3
        var out = [UInt8](repeating: 0, count: size.width * size.height * outBands)
        let colourBands = bands == 2 || bands == 4 ? bands - 1 : bands
        let hasAlpha = colourBands != bands
        var sums = [Double](repeating: 0, count: size.width * 3)
        var counts = [Int](repeating: 0, count: size.width)
        var row = 0
        for oy in 0..<size.height {
            let yEnd = (oy + 1) * height / size.height
            for i in sums.indices { sums[i] = 0 }
            for i in counts.indices { counts[i] = 0 }
            let rowEnd = max(yEnd, row + 1)
            while row < rowEnd && row < height {
                var x = 0
                var base = row * width * bands
                for ox in 0..<size.width {
                    let xEnd = max((ox + 1) * width / size.width, x + 1)
                    while x < xEnd && x < width {
                        var r = Double(bytes[base]), g = r, b = r
                        if colourBands >= 3 {
                            g = Double(bytes[base + 1])
                            b = Double(bytes[base + 2])
                        }
                        if hasAlpha {
                            let a = Double(bytes[base + bands - 1]) / 255
                            r = r * a + 255 * (1 - a)
                            g = g * a + 255 * (1 - a)
                            b = b * a + 255 * (1 - a)
                        }
                        sums[ox * 3] += r
                        sums[ox * 3 + 1] += g
                        sums[ox * 3 + 2] += b
                        counts[ox] += 1
                        x += 1
                        base += bands
                    }
                }
                row += 1
            }
            for ox in 0..<size.width {
                let n = Double(max(1, counts[ox]))
                let r = sums[ox * 3] / n, g = sums[ox * 3 + 1] / n, b = sums[ox * 3 + 2] / n
                let i = (oy * size.width + ox) * outBands
                if grey {
                    out[i] = UInt8(min(255, (0.2126 * r + 0.7152 * g + 0.0722 * b).rounded()))
                } else {
                    out[i] = UInt8(min(255, r.rounded()))
                    out[i + 1] = UInt8(min(255, g.rounded()))
                    out[i + 2] = UInt8(min(255, b.rounded()))
                }
            }
        }
        return PixelBuffer(width: size.width, height: size.height, bands: outBands, pixels: out)
    }
}
