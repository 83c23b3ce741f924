import Foundation
import Synchronization

/// SSIMULACRA 2 (Jon Sneyers, libjxl `tools/ssimulacra2.cc`): a perceptual score from 100
/// (identical) down to below 0, built from multi-scale SSIM and edge-difference maps in the
/// XYB colour space. It is the metric Cloudinary built `q_auto` on; about 90 means visually
/// lossless at normal viewing distance, 70 high quality, 50 medium, 30 low.
///
/// This follows the PyPI `ssimulacra2` package (a port of libjxl's) step by step, in `Float`
/// like libjxl, so the two can be compared pair by pair (`Benchmarks/metric_check.py`).
///
/// `q_auto` scores every candidate encoding with it, so the candidate's half is written for
/// speed: eight pixels at a time through pointers (checked indexing keeps the compiler from
/// vectorising), the candidate's three blurs of a channel (its mean, its square and its
/// product with the reference) made in one pass over each row and consumed row by row by the
/// SSIM and edge sums instead of being stored as planes, and buffers reused across scales.
public enum Ssimulacra2 {
    static let scales = 6
    static let c2: Float = 0.0009

    /// The score of `distorted` against `reference`: 8-bit sRGB pixels of the same size, grey
    /// or RGB; an alpha band is ignored (flatten both first where it matters).
    public static func score(reference: PixelBuffer, distorted: PixelBuffer) throws(DeriveError) -> Double {
        try score(reference: try Reference(reference), distorted: distorted)
    }

    /// The score of `distorted` against a reference prepared once: `q_auto` scores every
    /// candidate against the same pixels, and the reference's half of the work (its colour
    /// conversion, scales and blurred moments) is then done only once.
    public static func score(reference: Reference, distorted: PixelBuffer) throws(DeriveError) -> Double {
        guard reference.width == distorted.width, reference.height == distorted.height else {
            throw DeriveError(.internalError, "ssimulacra2: the images differ in size "
                + "(\(reference.width)×\(reference.height) and \(distorted.width)×\(distorted.height))")
        }
        var linear = LinearImage(distorted)
        let work = Workspace(width: reference.width, height: reference.height)
        var averages: [ScaleAverages] = []
        let count = reference.scales.count
        for (index, scale) in reference.scales.enumerated() {
            let needed = (0..<3).map { Terms(channel: $0, scale: index, of: count).any }
            averages.append(ScaleAverages(scale, linear.xyb(needed), scale: index, of: count, work: work))
            if index < count - 1 { linear = linear.halved() }
        }
        return combined(averages)
    }

    /// How many scales an image has: six, or fewer when halving would go below 8×8.
    static func scaleCount(width: Int, height: Int) -> Int {
        var (w, h, count) = (width, height, 0)
        while count < scales, w >= 8, h >= 8 {
            count += 1
            (w, h) = ((w + 1) / 2, (h + 1) / 2)
        }
        return count
    }

    /// Which of a channel's averages at a scale have a weight that matters. Most of the
    /// full-size scale's weights are zero or below a thousandth (only Y's SSIM 4-norm and
    /// blurring count there), and that scale is three quarters of the pixels: leaving out the
    /// blurs whose averages would be multiplied by (nearly) zero gives the same score for a
    /// fraction of the work. A left-out weight below `negligible` times an average below 1
    /// moves the score by under 0.001 (`Benchmarks/metric_check.py` measures the whole).
    struct Terms {
        static let negligible = 0.01
        /// The SSIM averages (these need the blurred squares and products).
        var ssim: Bool
        /// The edge averages (these need only the blurred means).
        var edge: Bool
        var any: Bool { ssim || edge }

        init(channel: Int, scale: Int, of count: Int) {
            let i = (channel * count + scale) * 6
            ssim = [0, 3].contains { weights[i + $0] >= Self.negligible }
            edge = [1, 2, 4, 5].contains { weights[i + $0] >= Self.negligible }
        }
    }

    /// The reference image at every scale: its XYB planes, their blurred means and blurred
    /// squares (the parts of SSIM that do not depend on the candidate).
    public struct Reference: Sendable {
        public let width: Int
        public let height: Int
        let scales: [Scale]

        struct Scale: Sendable {
            var xyb: LinearImage
            var mean: [[Float]]
            var square: [[Float]]
        }

        /// With `threads` 2, the full-size scale (three quarters of the pixels, one channel)
        /// is prepared on one thread while the other halves the image and prepares the
        /// smaller scales (a quarter of the pixels, most of the channels): about the same work.
        public init(_ buffer: PixelBuffer, threads: Int = 1) throws(DeriveError) {
            guard buffer.width >= 8, buffer.height >= 8 else {
                throw DeriveError(.internalError, "ssimulacra2: the images are smaller than 8×8")
            }
            width = buffer.width
            height = buffer.height
            let linear = LinearImage(buffer)
            let count = Ssimulacra2.scaleCount(width: width, height: height)
            guard threads > 1 && count > 1 else {
                scales = Self.scales(from: linear, range: 0..<count, of: count)
                return
            }
            let parts = Mutex<[Int: [Scale]]>([:])
            DispatchQueue.concurrentPerform(iterations: 2) { part in
                let made = part == 0 ? Self.scales(from: linear, range: 0..<1, of: count)
                    : Self.scales(from: linear.halved(), range: 1..<count, of: count)
                parts.withLock { $0[part] = made }
            }
            scales = parts.withLock { $0[0]! + $0[1]! }
        }

        /// The scales in `range`, `linear` being the first of them.
        static func scales(from first: LinearImage, range: Range<Int>, of count: Int) -> [Scale] {
            var linear = first
            let work = Workspace(width: first.width, height: first.height)
            var scales: [Scale] = []
            for scale in range {
                let terms = (0..<3).map { Terms(channel: $0, scale: scale, of: count) }
                let xyb = linear.xyb(terms.map(\.any))
                var mean: [[Float]] = [[], [], []], square: [[Float]] = [[], [], []]
                for c in 0..<3 where terms[c].any {
                    (mean[c], square[c]) = work.blurred(xyb.planes[c], width: xyb.width, height: xyb.height, squares: terms[c].ssim)
                }
                scales.append(Scale(xyb: xyb, mean: mean, square: square))
                if scale < range.upperBound - 1 { linear = linear.halved() }
            }
            return scales
        }
    }

    /// The weighted sum of every scale's averages, mapped to the 100-to-below-0 scale.
    static func combined(_ averages: [ScaleAverages]) -> Double {
        var sum = 0.0
        var i = 0
        for c in 0..<3 {
            // Over the scales computed only, as libjxl does: an image too small for all six
            // takes later weights for its first channels.
            for a in averages {
                for n in 0..<2 {
                    sum += weights[i] * abs(a.ssim[c * 2 + n])
                    sum += weights[i + 1] * abs(a.edge[c * 4 + n])
                    sum += weights[i + 2] * abs(a.edge[c * 4 + n + 2])
                    i += 3
                }
            }
        }
        sum *= 0.9562382616834844
        sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-05 * sum * sum * sum
        return sum > 0 ? 100 - 10 * pow(sum, 0.6276336467831387) : 100
    }

    typealias V = SIMD8<Float>

    @inline(__always)
    static func load(_ p: UnsafePointer<Float>) -> V { UnsafeRawPointer(p).loadUnaligned(as: V.self) }

    @inline(__always)
    static func store(_ v: V, _ p: UnsafeMutablePointer<Float>) { UnsafeMutableRawPointer(p).storeBytes(of: v, as: V.self) }

    /// Three planes of linear-light RGB.
    struct LinearImage: Sendable {
        var width: Int
        var height: Int
        var planes: [[Float]]

        static let toLinear: [Float] = (0..<256).map { value in
            let v = Double(value) / 255
            return Float(v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4))
        }

        init(width: Int, height: Int, planes: [[Float]]) {
            self.width = width
            self.height = height
            self.planes = planes
        }

        init(_ buffer: PixelBuffer) {
            width = buffer.width
            height = buffer.height
            let count = width * height, bands = buffer.bands
            var r = [Float](repeating: 0, count: count), g = r, b = r
            buffer.pixels.withUnsafeBufferPointer { pixels in
                Self.toLinear.withUnsafeBufferPointer { lut in
                    r.withUnsafeMutableBufferPointer { r in g.withUnsafeMutableBufferPointer { g in b.withUnsafeMutableBufferPointer { b in
                        let p = pixels.baseAddress!, lut = lut.baseAddress!
                        let r = r.baseAddress!, g = g.baseAddress!, b = b.baseAddress!
                        if bands >= 3 {
                            for i in 0..<count {
                                let j = i * bands
                                r[i] = lut[Int(p[j])]
                                g[i] = lut[Int(p[j + 1])]
                                b[i] = lut[Int(p[j + 2])]
                            }
                        } else {
                            for i in 0..<count {
                                let v = lut[Int(p[i * bands])]
                                r[i] = v
                                g[i] = v
                                b[i] = v
                            }
                        }
                    } } }
                }
            }
            planes = [r, g, b]
        }

        /// 2×2 box average; an odd last column or row averages the pixels it has.
        func halved() -> LinearImage {
            let w = (width + 1) / 2, h = (height + 1) / 2
            let width = self.width, height = self.height
            var out = [[Float]](repeating: [], count: 3)
            for c in 0..<3 {
                out[c] = [Float](unsafeUninitializedCapacity: w * h) { dst, initialised in
                    planes[c].withUnsafeBufferPointer { src in
                        let src = src.baseAddress!, dst = dst.baseAddress!
                        let quarter = SIMD8<Float>(repeating: 4)
                        for oy in 0..<h {
                            let y0 = oy * 2, y1 = min(oy * 2 + 1, height - 1)
                            let row0 = src + y0 * width, row1 = src + y1 * width, out = dst + oy * w
                            var ox = 0
                            if y1 != y0 {
                                // Whole 2×2 blocks, eight at a time (same sums in the same order).
                                while ox + 8 <= width / 2 {
                                    let a = UnsafeRawPointer(row0 + 2 * ox).loadUnaligned(as: SIMD16<Float>.self)
                                    let b = UnsafeRawPointer(row1 + 2 * ox).loadUnaligned(as: SIMD16<Float>.self)
                                    Ssimulacra2.store((((a.evenHalf + a.oddHalf) + b.evenHalf) + b.oddHalf) / quarter, out + ox)
                                    ox += 8
                                }
                            }
                            while ox < w {
                                let x0 = ox * 2, x1 = min(ox * 2 + 1, width - 1)
                                var sum = row0[x0]
                                var n: Float = 1
                                if x1 != x0 { sum += row0[x1]; n += 1 }
                                if y1 != y0 {
                                    sum += row1[x0]; n += 1
                                    if x1 != x0 { sum += row1[x1]; n += 1 }
                                }
                                out[ox] = sum / n
                                ox += 1
                            }
                        }
                    }
                    initialised = w * h
                }
            }
            return LinearImage(width: w, height: h, planes: out)
        }

        /// Cube root of a value in the opsin mixes' range (the bias to 1 plus the bias): the
        /// inverse cube root from a bit-level first guess and three Newton steps, which need
        /// only multiplications, times the value and the root again (relative error below
        /// 5e-7). Eight lanes at a time: the conversion runs it for every pixel of every scale.
        @inline(__always)
        static func cubeRoot(_ value: SIMD8<Float>) -> SIMD8<Float> {
            let bits = unsafeBitCast(value, to: SIMD8<UInt32>.self)
            let third = SIMD8<UInt32>(truncatingIfNeeded: (SIMD8<UInt64>(truncatingIfNeeded: bits) &* 0xAAAA_AAAB) &>> 33)
            var y = unsafeBitCast(third &+ 709_921_077, to: SIMD8<Float>.self)
            let oneThird = SIMD8<Float>(repeating: 1 / 3)
            y = (2 * y + value / (y * y)) * oneThird
            y = (2 * y + value / (y * y)) * oneThird
            y = (2 * y + value / (y * y)) * oneThird
            return y
        }

        static func cubeRoot(_ value: Float) -> Float { cubeRoot(SIMD8(repeating: value))[0] }

        /// XYB as libjxl's opsin transform makes it, shifted to be positive as SSIMULACRA 2
        /// does; only the planes `needed` (by channel) are made, the others left empty. The
        /// mixes are never below the bias: linear RGB is not negative and the matrix is not.
        func xyb(_ needed: [Bool] = [true, true, true]) -> LinearImage {
            let m: (Float, Float, Float, Float, Float, Float, Float, Float, Float) = (
                0.30, 1 - 0.078 - 0.30, 0.078,
                0.23, 1 - 0.078 - 0.23, 0.078,
                0.24342268924547819, 0.20476744424496821, 1 - 0.24342268924547819 - 0.20476744424496821)
            let bias: Float = 0.0037930732552754493
            let biasRoot = V(repeating: Self.cubeRoot(bias))
            let count = width * height
            let makeX = needed[0], makeB = needed[2], makeY = needed[1] || makeB
            guard makeX || makeY else { return LinearImage(width: width, height: height, planes: [[], [], []]) }
            // Room for a last vector past the end, trimmed after.
            let padded = (count + 7) / 8 * 8
            func plane(_ made: Bool) -> [Float] { [Float](repeating: 0, count: made ? padded : 0) }
            var x = plane(makeX), y = plane(makeY), b = plane(makeB)
            var source = planes
            if padded != count {
                for c in 0..<3 { source[c].append(contentsOf: repeatElement(0, count: padded - count)) }
            }
            source[0].withUnsafeBufferPointer { r in source[1].withUnsafeBufferPointer { g in source[2].withUnsafeBufferPointer { bl in
                x.withUnsafeMutableBufferPointer { x in y.withUnsafeMutableBufferPointer { y in b.withUnsafeMutableBufferPointer { b in
                    let r = r.baseAddress!, g = g.baseAddress!, bl = bl.baseAddress!
                    var i = 0
                    while i < padded {
                        let rv = load(r + i), gv = load(g + i), bv = load(bl + i)
                        let m0 = Self.cubeRoot(m.0 * rv + m.1 * gv + m.2 * bv + bias) - biasRoot
                        let m1 = Self.cubeRoot(m.3 * rv + m.4 * gv + m.5 * bv + bias) - biasRoot
                        let yv = 0.5 * (m0 + m1)
                        if makeX { store((0.5 * (m0 - m1)) * 14 + 0.42, x.baseAddress! + i) }
                        if makeY { store(yv + 0.01, y.baseAddress! + i) }
                        if makeB {
                            let m2 = Self.cubeRoot(m.6 * rv + m.7 * gv + m.8 * bv + bias) - biasRoot
                            store((m2 - yv) + 0.55, b.baseAddress! + i)
                        }
                        i += 8
                    }
                } } }
            } } }
            if padded != count {
                for c in [0, 1, 2] {
                    switch c {
                    case 0: if makeX { x.removeLast(padded - count) }
                    case 1: if makeY { y.removeLast(padded - count) }
                    default: if makeB { b.removeLast(padded - count) }
                    }
                }
            }
            return LinearImage(width: width, height: height, planes: [x, needed[1] ? y : [], b])
        }
    }

    /// The 6 SSIM and 12 edge-difference averages of one scale (per channel: mean and 4-norm).
    struct ScaleAverages {
        var ssim = [Double](repeating: 0, count: 6)
        var edge = [Double](repeating: 0, count: 12)

        init(_ reference: Reference.Scale, _ b: LinearImage, scale: Int, of scaleCount: Int, work: Workspace) {
            let n = Double(b.width * b.height)
            for c in 0..<3 {
                let terms = Terms(channel: c, scale: scale, of: scaleCount)
                guard terms.any else { continue }
                let sums = work.sums(reference.xyb.planes[c], b.planes[c], reference.mean[c], terms.ssim ? reference.square[c] : nil,
                                     width: b.width, height: b.height)
                if terms.ssim {
                    ssim[c * 2] = sums.ssim1 / n
                    ssim[c * 2 + 1] = pow(sums.ssim4 / n, 0.25)
                }
                (edge[c * 4], edge[c * 4 + 1], edge[c * 4 + 2], edge[c * 4 + 3]) = sums.edges(n)
            }
        }

        struct Sums {
            var ssim1 = 0.0, ssim4 = 0.0, art1 = 0.0, art4 = 0.0, lost1 = 0.0, lost4 = 0.0

            /// Ringing and blurring, each as a mean and a 4-norm.
            func edges(_ n: Double) -> (Double, Double, Double, Double) {
                (art1 / n, pow(art4 / n, 0.25), lost1 / n, pow(lost4 / n, 0.25))
            }
        }
    }

    /// Gaussian blur, σ 1.5, radius 5: zero beyond the left and right edges, mirrored at the
    /// top and bottom. That is what the reference computes (it pads one axis with zeros to
    /// follow libjxl's recursive Gaussian, on images it holds transposed).
    static let radius = 5
    static let kernel: [Float] = {
        let sigma = 1.5
        let raw = (-radius...radius).map { exp(-0.5 * Double($0 * $0) / (sigma * sigma)) }
        let sum = raw.reduce(0, +)
        return raw.map { Float($0 / sum) }
    }()

    /// Row index mirrored at the edges (d c b a | a b c d | d c b a).
    static func mirrored(_ y: Int, _ count: Int) -> Int {
        y < 0 ? min(count - 1, -y - 1) : (y >= count ? max(0, 2 * count - y - 1) : y)
    }

    /// The blurs and sums of one scoring, with buffers sized for its largest scale and reused
    /// by every smaller one: the row pass's output for up to three planes, and three rows
    /// between zero margins.
    final class Workspace {
        /// The row pass's output for up to three planes.
        let horizontal: UnsafeMutablePointer<Float>
        let planeSize: Int
        /// Three rows between zero margins, so the kernel reads contiguous memory.
        let rows: UnsafeMutablePointer<Float>
        let rowStride: Int
        /// The candidate's blurred mean, square and product for one row.
        let columns: UnsafeMutablePointer<Float>

        init(width: Int, height: Int) {
            planeSize = width * height + 8
            horizontal = .allocate(capacity: 3 * planeSize)
            rowStride = width + 2 * Ssimulacra2.radius + 8
            rows = .allocate(capacity: 3 * rowStride)
            rows.initialize(repeating: 0, count: 3 * rowStride)
            columns = .allocate(capacity: 3 * rowStride)
        }

        deinit {
            horizontal.deallocate()
            rows.deallocate()
            columns.deallocate()
        }

        /// The row pass (11 taps, zero beyond the row's ends) of one row already placed
        /// between the margins of `row`, into `out`. Sums in the order the kernel lists them,
        /// pairing the taps at equal distance, eight pixels at a time.
        @inline(__always)
        static func rowPass(_ row: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, width: Int, _ k: (Float, Float, Float, Float, Float, Float)) {
            let (k0, k1, k2, k3, k4, k5) = k
            var x = 0
            while x + 8 <= width {
                let p = row + x
                var sum = k0 * load(p)
                sum += k1 * (load(p - 1) + load(p + 1))
                sum += k2 * (load(p - 2) + load(p + 2))
                sum += k3 * (load(p - 3) + load(p + 3))
                sum += k4 * (load(p - 4) + load(p + 4))
                sum += k5 * (load(p - 5) + load(p + 5))
                store(sum, out + x)
                x += 8
            }
            while x < width {
                let p = row + x
                var sum = k0 * p[0]
                sum += k1 * (p[-1] + p[1])
                sum += k2 * (p[-2] + p[2])
                sum += k3 * (p[-3] + p[3])
                sum += k4 * (p[-4] + p[4])
                sum += k5 * (p[-5] + p[5])
                out[x] = sum
                x += 1
            }
        }

        static var taps: (Float, Float, Float, Float, Float, Float) {
            let k = kernel
            return (k[5], k[4], k[3], k[2], k[1], k[0])
        }

        /// The column pass of one whole row: the 11 rows around it (mirrored at the top and
        /// bottom) summed in the kernel's order into `out`.
        @inline(__always)
        static func columnRow(_ base: UnsafePointer<Float>, _ y: Int, width: Int, height: Int, into out: UnsafeMutablePointer<Float>,
                              _ k: (Float, Float, Float, Float, Float, Float)) {
            let (k0, k1, k2, k3, k4, k5) = k
            func row(_ t: Int) -> UnsafePointer<Float> { base + mirrored(y + t, height) * width }
            let (a0, a1, a2, a3, a4, a5) = (row(-5), row(-4), row(-3), row(-2), row(-1), row(0))
            let (b1, b2, b3, b4, b5) = (row(1), row(2), row(3), row(4), row(5))
            var x = 0
            while x + 8 <= width {
                var sum = k5 * load(a0 + x)
                sum += k4 * load(a1 + x)
                sum += k3 * load(a2 + x)
                sum += k2 * load(a3 + x)
                sum += k1 * load(a4 + x)
                sum += k0 * load(a5 + x)
                sum += k1 * load(b1 + x)
                sum += k2 * load(b2 + x)
                sum += k3 * load(b3 + x)
                sum += k4 * load(b4 + x)
                sum += k5 * load(b5 + x)
                store(sum, out + x)
                x += 8
            }
            while x < width {
                var sum = k5 * a0[x]
                sum += k4 * a1[x]
                sum += k3 * a2[x]
                sum += k2 * a3[x]
                sum += k1 * a4[x]
                sum += k0 * a5[x]
                sum += k1 * b1[x]
                sum += k2 * b2[x]
                sum += k3 * b3[x]
                sum += k4 * b4[x]
                sum += k5 * b5[x]
                out[x] = sum
                x += 1
            }
        }

        /// The row pass of up to three products of `a` and `b` (a itself, a², a·b) over the
        /// whole plane, into `horizontal`.
        func rowPasses(_ a: [Float], _ b: [Float]?, count planes: Int, width: Int, height: Int) {
            let k = Self.taps, r = radius, stride = rowStride
            let h0 = horizontal, h1 = horizontal + planeSize, h2 = horizontal + 2 * planeSize
            let row0 = rows + r, row1 = rows + stride + r, row2 = rows + 2 * stride + r
            // Zero past this plane's right end: a wider scale's pixels may be there.
            for row in [row0, row1, row2] { (row + width).update(repeating: 0, count: stride - width - r) }
            let other = b ?? a
            a.withUnsafeBufferPointer { a in other.withUnsafeBufferPointer { b in
                let a = a.baseAddress!, b = b.baseAddress!
                for y in 0..<height {
                    let pa = a + y * width, pb = b + y * width
                    row0.update(from: pa, count: width)
                    if planes > 1 {
                        for x in 0..<width { row1[x] = pa[x] * pa[x] }
                    }
                    if planes > 2 {
                        for x in 0..<width { row2[x] = pa[x] * pb[x] }
                    }
                    Self.rowPass(row0, h0 + y * width, width: width, k)
                    if planes > 1 { Self.rowPass(row1, h1 + y * width, width: width, k) }
                    if planes > 2 { Self.rowPass(row2, h2 + y * width, width: width, k) }
                }
            } }
        }

        /// The reference's blurred plane and, with `squares`, its blurred square.
        func blurred(_ plane: [Float], width: Int, height: Int, squares: Bool) -> ([Float], [Float]) {
            rowPasses(plane, nil, count: squares ? 2 : 1, width: width, height: height)
            let k = Self.taps
            func columnPass(_ index: Int) -> [Float] {
                [Float](unsafeUninitializedCapacity: width * height) { out, initialised in
                    let base = UnsafePointer(horizontal + index * planeSize), out = out.baseAddress!
                    for y in 0..<height { Self.columnRow(base, y, width: width, height: height, into: out + y * width, k) }
                    initialised = width * height
                }
            }
            return (columnPass(0), squares ? columnPass(1) : [])
        }

        /// The per-pixel terms of one channel, summed: SSIM's `d` and `d⁴` (when `s11`, the
        /// reference's blurred square, is given) and the edge ratio's gains (ringing) and
        /// losses (blurring) with their fourth powers. The candidate's blurred mean, square and
        /// product with the reference are made a row at a time and used at once. Eight pixels
        /// at a time in `Float`, each row added into `Double` (at most 1,024 pixels at a time):
        /// the branch-free form of libjxl's loop, which the compiler cannot vectorise by itself
        /// (it does not reorder floating-point sums).
        func sums(_ p1: [Float], _ p2: [Float], _ mu1: [Float], _ s11: [Float]?, width: Int, height: Int) -> ScaleAverages.Sums {
            let withSSIM = s11 != nil
            rowPasses(p2, p1, count: withSSIM ? 3 : 1, width: width, height: height)
            var total = ScaleAverages.Sums()
            let k = Self.taps
            let unused: [Float] = [0]
            p1.withUnsafeBufferPointer { p1 in p2.withUnsafeBufferPointer { p2 in mu1.withUnsafeBufferPointer { mu1 in
                (s11 ?? unused).withUnsafeBufferPointer { s11 in
                    do { do {
                        do {
                            let h0 = UnsafePointer(horizontal), h1 = h0 + planeSize, h2 = h0 + 2 * planeSize
                            let p1 = p1.baseAddress!, p2 = p2.baseAddress!, mu1 = mu1.baseAddress!, s11 = s11.baseAddress!
                            // Bit operations rather than pointwiseMax or masked selects, whose generic
                            // lane-by-lane forms are many times slower: |x| clears the sign bit, and
                            // (x + |x|) / 2 is x or 0, exactly.
                            @inline(__always) func magnitude(_ x: V) -> V {
                                unsafeBitCast(unsafeBitCast(x, to: SIMD8<UInt32>.self) & 0x7FFF_FFFF, to: V.self)
                            }
                            @inline(__always) func positive(_ x: V) -> V { (x + magnitude(x)) * 0.5 }
                            let one = V(repeating: 1), zero = V(repeating: 0), c2v = V(repeating: c2)
                            let mu2 = columns, s22 = columns + rowStride, s12 = columns + 2 * rowStride
                            for y in 0..<height {
                                Self.columnRow(h0, y, width: width, height: height, into: mu2, k)
                                if withSSIM {
                                    Self.columnRow(h1, y, width: width, height: height, into: s22, k)
                                    Self.columnRow(h2, y, width: width, height: height, into: s12, k)
                                }
                                do {
                                    let row = y * width
                                    var x = 0
                                    while x < width {
                                        let end = min(width, x + 1024)
                                        var d1 = zero, d4 = zero, a1 = zero, a4 = zero, l1 = zero, l4 = zero
                                        while x + 8 <= end {
                                            let i = row + x
                                            let m1 = load(mu1 + i), m2 = load(mu2 + x)
                                            if withSSIM {
                                                let numM = one - (m1 - m2) * (m1 - m2)
                                                let numS = 2 * (load(s12 + x) - m1 * m2) + c2v
                                                let denS = (load(s11 + i) - m1 * m1) + (load(s22 + x) - m2 * m2) + c2v
                                                let d = positive(one - numM * numS / denS)
                                                d1 += d
                                                d4 += (d * d) * (d * d)
                                            }
                                            let x2 = load(p2 + i) - m2, x1 = load(p1 + i) - m1
                                            let ratio = (one + magnitude(x2)) / (one + magnitude(x1)) - one
                                            let art = positive(ratio), lost = positive(-ratio)
                                            a1 += art
                                            a4 += (art * art) * (art * art)
                                            l1 += lost
                                            l4 += (lost * lost) * (lost * lost)
                                            x += 8
                                        }
                                        var tail = ScaleAverages.Sums()
                                        while x < end {
                                            let i = row + x
                                            let m1 = mu1[i], m2 = mu2[x]
                                            if withSSIM {
                                                let numM = 1 - (m1 - m2) * (m1 - m2)
                                                let numS = 2 * (s12[x] - m1 * m2) + c2
                                                let denS = (s11[i] - m1 * m1) + (s22[x] - m2 * m2) + c2
                                                let d = Double(max(0, 1 - numM * numS / denS))
                                                tail.ssim1 += d
                                                tail.ssim4 += (d * d) * (d * d)
                                            }
                                            let ratio = Double((1 + abs(p2[i] - m2)) / (1 + abs(p1[i] - m1)) - 1)
                                            let art = max(0, ratio), lost = max(0, -ratio)
                                            tail.art1 += art
                                            tail.art4 += (art * art) * (art * art)
                                            tail.lost1 += lost
                                            tail.lost4 += (lost * lost) * (lost * lost)
                                            x += 1
                                        }
                                        total.ssim1 += Double(d1.sum()) + tail.ssim1
                                        total.ssim4 += Double(d4.sum()) + tail.ssim4
                                        total.art1 += Double(a1.sum()) + tail.art1
                                        total.art4 += Double(a4.sum()) + tail.art4
                                        total.lost1 += Double(l1.sum()) + tail.lost1
                                        total.lost4 += Double(l4.sum()) + tail.lost4
                                    }
                                }
                            }
                        }
                    } }
                }
            } } }
            return total
        }
    }

    /// libjxl's weights, in its order: channel, scale, norm, then (ssim, ringing, blurring).
    static let weights: [Double] = [
        0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
        1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
        1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
        1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
        0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
        0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
        0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
        225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
        176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0,
        0.0, 34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437,
        0.0, 0.0, 8.826982764996862, 23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682,
        0.9834382792465353, 0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0,
        0.0005130064588990679, 0.0, 0.00010854057858411537,
    ]
}
