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
        bands == 2 || bands == 4 ? downsampledInGeneral(to: size, grey: grey) : downsampledOpaque(to: size, grey: grey)
    }

    /// `downsampled` for any band count, alpha included.
    func downsampledInGeneral(to size: Size, grey: Bool) -> PixelBuffer {
        let colorBands = bands == 2 || bands == 4 ? bands - 1 : bands
        let outBands = grey ? 1 : 3
        var out = [UInt8](repeating: 0, count: size.width * size.height * outBands)
        let hasAlpha = colorBands != bands
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
                        if colorBands >= 3 {
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
                out.withUnsafeMutableBufferPointer { out in
                    Self.store(sums[ox * 3] / n, sums[ox * 3 + 1] / n, sums[ox * 3 + 2] / n, grey: grey,
                               at: out.baseAddress! + (oy * size.width + ox) * outBands)
                }
            }
        }
        return PixelBuffer(width: size.width, height: size.height, bands: outBands, pixels: out)
    }
    /// `downsampled` without alpha, on every output's preview: the same boxes and the same
    /// results (sums of whole numbers are exact in either form), summed as integers through
    /// pointers, several times faster than the general loop.
    func downsampledOpaque(to size: Size, grey: Bool) -> PixelBuffer {
        let outBands = grey ? 1 : 3, bands = self.bands, width = self.width, height = self.height
        let colour = bands >= 3
        var sums = [Int](repeating: 0, count: size.width * 3)
        var counts = [Int](repeating: 0, count: size.width)
        let pixels = [UInt8](unsafeUninitializedCapacity: size.width * size.height * outBands) { out, initialised in
            sums.withUnsafeMutableBufferPointer { sums in counts.withUnsafeMutableBufferPointer { counts in
                let sums = sums.baseAddress!, counts = counts.baseAddress!, out = out.baseAddress!
                let source = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
                // The first column of each output box, worked out once.
                let columnEnds = (0..<size.width).map { ($0 + 1) * width / size.width }
                var row = 0
                for oy in 0..<size.height {
                    sums.update(repeating: 0, count: size.width * 3)
                    counts.update(repeating: 0, count: size.width)
                    let rowEnd = max((oy + 1) * height / size.height, row + 1)
                    while row < rowEnd && row < height {
                        var x = 0
                        var p = source + row * width * bands
                        for ox in 0..<size.width {
                            let xEnd = min(width, max(columnEnds[ox], x + 1)), start = x
                            var r = 0, g = 0, b = 0
                            if colour {
                                while x < xEnd {
                                    r += Int(p[0]); g += Int(p[1]); b += Int(p[2])
                                    p += bands
                                    x += 1
                                }
                            } else {
                                while x < xEnd {
                                    r += Int(p[0])
                                    p += bands
                                    x += 1
                                }
                                (g, b) = (r, r)
                            }
                            sums[ox * 3] += r
                            sums[ox * 3 + 1] += g
                            sums[ox * 3 + 2] += b
                            counts[ox] += x - start
                        }
                        row += 1
                    }
                    for ox in 0..<size.width {
                        let n = Double(max(1, counts[ox]))
                        Self.store(Double(sums[ox * 3]) / n, Double(sums[ox * 3 + 1]) / n, Double(sums[ox * 3 + 2]) / n, grey: grey,
                                   at: out + (oy * size.width + ox) * outBands)
                    }
                }
            } }
            initialised = size.width * size.height * outBands
        }
        return PixelBuffer(width: size.width, height: size.height, bands: outBands, pixels: pixels)
    }

    /// One box's mean colour, rounded, as RGB or as its luminance.
    @inline(__always)
    static func store(_ r: Double, _ g: Double, _ b: Double, grey: Bool, at out: UnsafeMutablePointer<UInt8>) {
        if grey {
            out[0] = UInt8(min(255, (0.2126 * r + 0.7152 * g + 0.0722 * b).rounded()))
        } else {
            out[0] = UInt8(min(255, r.rounded()))
            out[1] = UInt8(min(255, g.rounded()))
            out[2] = UInt8(min(255, b.rounded()))
        }
    }
}
