/// The few colours e_vectorize traces: k-means in RGB, started from a median cut, on a sample of
/// the opaque pixels, then every pixel given its nearest colour. Deterministic (no randomness),
/// so one image and one number of colours always give one palette.
public enum ColorQuantizer {
    /// A palette and, per pixel, the index of its colour (`transparent` for a pixel whose alpha
    /// is below half). Colours are ordered by how many pixels they have, most first.
    public struct Quantized: Sendable, Equatable {
        public var palette: [RGB]
        public var indices: [UInt8]
        public var counts: [Int]
        public static let transparent: UInt8 = 255
    }

    public struct RGB: Sendable, Hashable {
        public var r: UInt8, g: UInt8, b: UInt8
        public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) {
            self.r = r
            self.g = g
            self.b = b
        }
        public var hex: String {
            let digits = Array("0123456789abcdef")
            return "#" + String([r, g, b].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
        }
    }

    /// Pixels sampled for the k-means (every pixel is assigned afterwards).
    static let sampleSize = 65_536
    static let iterations = 10

    /// `pixels` is 8-bit, `bands` per pixel (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA); `colors` 2...30.
    public static func quantize(_ pixels: [UInt8], bands: Int, colors k: Int) throws(DeriveError) -> Quantized {
        guard (1...4).contains(bands), (1...254).contains(k) else {
            throw DeriveError(.internalError, "e_vectorize quantises 1 to 4 bands into 1 to 254 colours, not \(bands) bands into \(k)")
        }
        let count = pixels.count / bands
        let hasAlpha = bands == 2 || bands == 4
        func rgb(_ i: Int) -> (Int, Int, Int) {
            let o = i * bands
            return bands >= 3 ? (Int(pixels[o]), Int(pixels[o + 1]), Int(pixels[o + 2])) : (Int(pixels[o]), Int(pixels[o]), Int(pixels[o]))
        }
        func opaque(_ i: Int) -> Bool { !hasAlpha || pixels[i * bands + bands - 1] >= 128 }

        var sample: [(Int, Int, Int)] = []
        let stride = max(1, count / sampleSize)
        sample.reserveCapacity(count / stride + 1)
        var i = 0
        while i < count {
            if opaque(i) { sample.append(rgb(i)) }
            i += stride
        }
        if sample.isEmpty {
            return Quantized(palette: [], indices: Array(repeating: Quantized.transparent, count: count), counts: [])
        }
        var centres = medianCut(sample, k)
        for _ in 0..<iterations {
            var sums = Array(repeating: (0, 0, 0, 0), count: centres.count)
            for p in sample {
                let c = nearest(p, centres)
                sums[c].0 += p.0; sums[c].1 += p.1; sums[c].2 += p.2; sums[c].3 += 1
            }
            var moved = false
            for (c, s) in sums.enumerated() where s.3 > 0 {
                let next = (Double(s.0) / Double(s.3), Double(s.1) / Double(s.3), Double(s.2) / Double(s.3))
                if next != centres[c] { moved = true }
                centres[c] = next
            }
            if !moved { break }
        }
        var raw = Array(repeating: Quantized.transparent, count: count)
        var counts = Array(repeating: 0, count: centres.count)
        for i in 0..<count where opaque(i) {
            let c = nearest(rgb(i), centres)
            raw[i] = UInt8(c)
            counts[c] += 1
        }
        // Unused colours dropped; the rest ordered by their pixels, most first (ties by index).
        let order = counts.indices.filter { counts[$0] > 0 }.sorted { (counts[$0], -$0) > (counts[$1], -$1) }
        var remap = Array(repeating: Quantized.transparent, count: centres.count)
        for (rank, c) in order.enumerated() { remap[c] = UInt8(rank) }
        let palette = order.map { c in
            RGB(UInt8(centres[c].0.rounded()), UInt8(centres[c].1.rounded()), UInt8(centres[c].2.rounded()))
        }
        let indices = raw.map { $0 == Quantized.transparent ? $0 : remap[Int($0)] }
        return Quantized(palette: palette, indices: indices, counts: order.map { counts[$0] })
    }

    static func nearest(_ p: (Int, Int, Int), _ centres: [(Double, Double, Double)]) -> Int {
        var best = 0, bestDistance = Double.infinity
        for (c, centre) in centres.enumerated() {
            let dr = Double(p.0) - centre.0, dg = Double(p.1) - centre.1, db = Double(p.2) - centre.2
            let d = dr * dr + dg * dg + db * db
            if d < bestDistance { bestDistance = d; best = c }
        }
        return best
    }

    /// Heckbert's median cut: the box with the widest channel range split at its median until
    /// there are `k` boxes (or no box can be split); each box's mean is a starting centre.
    static func medianCut(_ sample: [(Int, Int, Int)], _ k: Int) -> [(Double, Double, Double)] {
        var boxes: [[(Int, Int, Int)]] = [sample]
        func channel(_ p: (Int, Int, Int), _ c: Int) -> Int { c == 0 ? p.0 : c == 1 ? p.1 : p.2 }
        func widest(_ box: [(Int, Int, Int)]) -> (channel: Int, range: Int) {
            var best = (channel: 0, range: -1)
            for c in 0..<3 {
                var lo = 255, hi = 0
                for p in box { let v = channel(p, c); lo = min(lo, v); hi = max(hi, v) }
                if hi - lo > best.range { best = (c, hi - lo) }
            }
            return best
        }
        while boxes.count < k {
            let ranked = boxes.indices.map { ($0, widest(boxes[$0])) }.max { ($0.1.range, boxes[$0.0].count) < ($1.1.range, boxes[$1.0].count) }
            guard let (index, split) = ranked, split.range > 0 else { break }
            let sorted = boxes[index].sorted { channel($0, split.channel) < channel($1, split.channel) }
            let middle = sorted.count / 2
            boxes[index] = Array(sorted[..<middle])
            boxes.append(Array(sorted[middle...]))
        }
        return boxes.map { box in
            var s = (0, 0, 0)
            for p in box { s.0 += p.0; s.1 += p.1; s.2 += p.2 }
            let n = Double(box.count)
            return (Double(s.0) / n, Double(s.1) / n, Double(s.2) / n)
        }
    }
}
