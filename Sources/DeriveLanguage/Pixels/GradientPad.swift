/// b_auto's gradient modes: which colours the padding goes through, and the gradient itself as
/// a lookup table, computed here so they are exact and testable.
public enum GradientPad {
    /// The gradient's colours, in order along its direction: the image (a small preview is
    /// enough) cut into as many bands across the direction as there are colours, and each
    /// band's colour taken as b_auto takes one: the median of its border pixels (`border`) or
    /// its most frequent colour (`predominant`), then black or white for `_contrast`. A band
    /// with no opaque pixel to read takes the whole image's colour.
    public static func colors(of image: PixelBuffer, gradient: AutoGradient) -> [Color] {
        let n = gradient.colors
        var bands = [[UInt8]](repeating: [], count: n)
        var all: [UInt8] = []
        let w = image.width, h = image.height
        for y in 0..<h {
            for x in 0..<w {
                if gradient.source == .border, x > 0, y > 0, x < w - 1, y < h - 1 { continue }
                let t = gradient.direction.position(x: (Double(x) + 0.5) / Double(w), y: (Double(y) + 0.5) / Double(h))
                let k = min(n - 1, max(0, Int(t * Double(n))))
                let (r, g, b) = image.rgb(x, y)
                let pixel = [UInt8(r), UInt8(g), UInt8(b), UInt8(image.alpha(x, y))]
                bands[k] += pixel
                all += pixel
            }
        }
        func color(_ pixels: [UInt8]) -> Color? {
            guard !pixels.isEmpty else { return nil }
            let row = PixelBuffer(width: pixels.count / 4, height: 1, bands: 4, pixels: pixels)
            switch gradient.source {
            case .border: return EdgeColor.of(row)
            case .predominant:
                let c = DominantColor.of(row)
                return c == .transparent ? nil : c
            }
        }
        let whole = color(all) ?? .white
        return bands.map { band in
            let c = color(band) ?? whole
            return gradient.pick(c)
        }
    }

    /// 256 RGB entries running through `stops` evenly (the first at 0, the last at 255), each
    /// channel interpolated linearly between its neighbours.
    public static func lookupTable(_ stops: [Color]) -> [UInt8] {
        guard stops.count > 1 else { return (0..<256).flatMap { _ in stops.first.map { [$0.red, $0.green, $0.blue] } ?? [0, 0, 0] } }
        var table: [UInt8] = []
        table.reserveCapacity(256 * 3)
        let segments = Double(stops.count - 1)
        for i in 0..<256 {
            let t = Double(i) / 255 * segments
            let k = min(stops.count - 2, Int(t))
            let f = t - Double(k)
            let a = stops[k], b = stops[k + 1]
            for (p, q) in [(a.red, b.red), (a.green, b.green), (a.blue, b.blue)] {
                table.append(UInt8((Double(p) * (1 - f) + Double(q) * f).rounded()))
            }
        }
        return table
    }
}
