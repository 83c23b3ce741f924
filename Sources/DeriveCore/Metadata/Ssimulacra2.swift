import Foundation

/// SSIMULACRA 2 (Jon Sneyers, libjxl `tools/ssimulacra2.cc`): a perceptual score from 100
/// (identical) down to below 0, built from multi-scale SSIM and edge-difference maps in the
/// XYB colour space. It is the metric Cloudinary built `q_auto` on; about 90 means visually
/// lossless at normal viewing distance, 70 high quality, 50 medium, 30 low.
///
/// This follows the PyPI `ssimulacra2` package (a port of libjxl's) step by step, in `Float`
/// like libjxl, so the two can be compared pair by pair (`Benchmarks/metric_check.py`).
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
        var averages: [ScaleAverages] = []
        for (index, scale) in reference.scales.enumerated() {
            let needed = (0..<3).map { Terms(channel: $0, scale: index, of: reference.scales.count).any }
            averages.append(ScaleAverages(scale, linear.xyb(needed), scale: index, of: reference.scales.count))
            if index < reference.scales.count - 1 { linear = linear.halved() }
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

        public init(_ buffer: PixelBuffer) throws(DeriveError) {
            guard buffer.width >= 8, buffer.height >= 8 else {
                throw DeriveError(.internalError, "ssimulacra2: the images are smaller than 8×8")
            }
            width = buffer.width
            height = buffer.height
            var linear = LinearImage(buffer)
            let count = Ssimulacra2.scaleCount(width: width, height: height)
            var scales: [Scale] = []
            for scale in 0..<count {
                let terms = (0..<3).map { Terms(channel: $0, scale: scale, of: count) }
                let xyb = linear.xyb(terms.map(\.any))
                var blur = GaussianBlur(width: xyb.width, height: xyb.height)
                scales.append(Scale(xyb: xyb,
                                    mean: (0..<3).map { terms[$0].any ? blur.apply(xyb.planes[$0]) : [] },
                                    square: (0..<3).map { c in terms[c].ssim ? blur.apply(xyb.planes[c].map { $0 * $0 }) : [] }))
                if scale < count - 1 { linear = linear.halved() }
            }
            self.scales = scales
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

    /// Three planes of linear-light RGB.
    struct LinearImage {
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
            let count = width * height
            let colour = buffer.bands >= 3 ? 3 : 1
            var planes = [[Float]](repeating: [Float](repeating: 0, count: count), count: 3)
            buffer.pixels.withUnsafeBufferPointer { pixels in
                for c in 0..<3 {
                    let offset = colour == 3 ? c : 0
                    planes[c].withUnsafeMutableBufferPointer { plane in
                        for i in 0..<count { plane[i] = Self.toLinear[Int(pixels[i * buffer.bands + offset])] }
                    }
                }
            }
            self.planes = planes
        }

        /// 2×2 box average; an odd last column or row averages the pixels it has.
        func halved() -> LinearImage {
            let w = (width + 1) / 2, h = (height + 1) / 2
            var out = [[Float]](repeating: [Float](repeating: 0, count: w * h), count: 3)
            for c in 0..<3 {
                planes[c].withUnsafeBufferPointer { src in
                    out[c].withUnsafeMutableBufferPointer { dst in
                        for oy in 0..<h {
                            let y0 = oy * 2, y1 = min(oy * 2 + 1, height - 1)
                            for ox in 0..<w {
                                let x0 = ox * 2, x1 = min(ox * 2 + 1, width - 1)
                                var sum = src[y0 * width + x0]
                                var n: Float = 1
                                if x1 != x0 { sum += src[y0 * width + x1]; n += 1 }
                                if y1 != y0 {
                                    sum += src[y1 * width + x0]; n += 1
                                    if x1 != x0 { sum += src[y1 * width + x1]; n += 1 }
                                }
                                dst[oy * w + ox] = sum / n
                            }
                        }
                    }
                }
            }
            return LinearImage(width: w, height: h, planes: out)
        }

        /// Cube root of a positive value: a bit-level first guess and three Newton steps
        /// (relative error below 1e-7). Branch-free, eight lanes at a time: the conversion
        /// runs it for every pixel of every scale.
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
            typealias V = SIMD8<Float>
            let m: (Float, Float, Float, Float, Float, Float, Float, Float, Float) = (
                0.30, 1 - 0.078 - 0.30, 0.078,
                0.23, 1 - 0.078 - 0.23, 0.078,
                0.24342268924547819, 0.20476744424496821, 1 - 0.24342268924547819 - 0.20476744424496821)
            let bias: Float = 0.0037930732552754493
            let biasRoot = V(repeating: Self.cubeRoot(bias))
            let count = width * height
            let makeX = needed[0], makeB = needed[2], makeY = needed[1] || makeB
            guard makeX || makeY else { return LinearImage(width: width, height: height, planes: [[], [], []]) }
            func plane(_ made: Bool) -> [Float] { [Float](repeating: 0, count: made ? count : 0) }
            var x = plane(makeX), y = plane(makeY), b = plane(makeB)
            planes[0].withUnsafeBufferPointer { r in planes[1].withUnsafeBufferPointer { g in planes[2].withUnsafeBufferPointer { bl in
                x.withUnsafeMutableBufferPointer { x in y.withUnsafeMutableBufferPointer { y in b.withUnsafeMutableBufferPointer { b in
                    // Eight pixels at a time; the last few through a vector filled with what is left.
                    @inline(__always) func load(_ p: UnsafeBufferPointer<Float>, _ i: Int, _ n: Int) -> V {
                        if n == 8 { return UnsafeRawPointer(p.baseAddress! + i).loadUnaligned(as: V.self) }
                        var v = V(repeating: 0)
                        for k in 0..<n { v[k] = p[i + k] }
                        return v
                    }
                    @inline(__always) func store(_ v: V, _ p: UnsafeMutableBufferPointer<Float>, _ i: Int, _ n: Int) {
                        if n == 8 { UnsafeMutableRawPointer(p.baseAddress! + i).storeBytes(of: v, as: V.self); return }
                        for k in 0..<n { p[i + k] = v[k] }
                    }
                    var i = 0
                    while i < count {
                        let n = min(8, count - i)
                        let rv = load(r, i, n), gv = load(g, i, n), bv = load(bl, i, n)
                        let m0 = Self.cubeRoot(m.0 * rv + m.1 * gv + m.2 * bv + bias) - biasRoot
                        let m1 = Self.cubeRoot(m.3 * rv + m.4 * gv + m.5 * bv + bias) - biasRoot
                        let yv = 0.5 * (m0 + m1)
                        if makeX { store((0.5 * (m0 - m1)) * 14 + 0.42, x, i, n) }
                        if makeY { store(yv + 0.01, y, i, n) }
                        if makeB {
                            let m2 = Self.cubeRoot(m.6 * rv + m.7 * gv + m.8 * bv + bias) - biasRoot
                            store((m2 - yv) + 0.55, b, i, n)
                        }
                        i += 8
                    }
                } } }
            } } }
            return LinearImage(width: width, height: height, planes: [x, needed[1] ? y : [], b])
        }
    }

    /// The 6 SSIM and 12 edge-difference averages of one scale (per channel: mean and 4-norm).
    struct ScaleAverages {
        var ssim = [Double](repeating: 0, count: 6)
        var edge = [Double](repeating: 0, count: 12)

        init(_ reference: Reference.Scale, _ b: LinearImage, scale: Int, of scaleCount: Int) {
            let count = b.width * b.height
            var blur = GaussianBlur(width: b.width, height: b.height)
            var product = [Float](repeating: 0, count: count)
            for c in 0..<3 {
                let terms = Terms(channel: c, scale: scale, of: scaleCount)
                guard terms.any else { continue }
                let p1 = reference.xyb.planes[c], p2 = b.planes[c]
                let mu1 = reference.mean[c]
                let mu2 = blur.apply(p2)
                guard terms.ssim else {
                    (edge[c * 4], edge[c * 4 + 1], edge[c * 4 + 2], edge[c * 4 + 3]) = Self.sums(p1, p2, mu1, mu2, moments: nil).edges(Double(count))
                    continue
                }
                let s11 = reference.square[c]
                func blurredProduct(_ u: [Float], _ v: [Float]) -> [Float] {
                    product.withUnsafeMutableBufferPointer { out in
                        u.withUnsafeBufferPointer { u in
                            v.withUnsafeBufferPointer { v in
                                for i in 0..<count { out[i] = u[i] * v[i] }
                            }
                        }
                    }
                    return blur.apply(product)
                }
                let s22 = blurredProduct(p2, p2), s12 = blurredProduct(p1, p2)
                let sums = Self.sums(p1, p2, mu1, mu2, moments: (s11, s22, s12))
                let n = Double(count)
                ssim[c * 2] = sums.ssim1 / n
                ssim[c * 2 + 1] = pow(sums.ssim4 / n, 0.25)
                (edge[c * 4], edge[c * 4 + 1], edge[c * 4 + 2], edge[c * 4 + 3]) = sums.edges(n)
            }
        }

        /// The per-pixel terms of one channel, summed: SSIM's `d` and `d⁴` (when `moments`, the
        /// blurred squares and product, are given) and the edge ratio's gains (ringing) and
        /// losses (blurring) with their fourth powers. Eight pixels at a time in `Float`, each
        /// block of 1,024 added into `Double`: the branch-free form of libjxl's loop, which the
        /// compiler cannot vectorise by itself (it does not reorder floating-point sums).
        static func sums(_ p1: [Float], _ p2: [Float], _ mu1: [Float], _ mu2: [Float],
                         moments: ([Float], [Float], [Float])?) -> Sums {
            var total = Sums()
            let count = p1.count
            let unused: [Float] = [0]  // stands in for the moments when there are none; never read
            let (s11, s22, s12) = moments ?? (unused, unused, unused)
            let withSSIM = moments != nil
            withPointers(p1, p2, mu1, mu2, s11, s22, s12) { p1, p2, mu1, mu2, s11, s22, s12 in
                typealias V = SIMD8<Float>
                @inline(__always) func load(_ p: UnsafePointer<Float>, _ i: Int) -> V {
                    UnsafeRawPointer(p + i).loadUnaligned(as: V.self)
                }
                // Selects rather than pointwiseMax, whose generic lane-by-lane form is 40 times slower.
                @inline(__always) func positive(_ x: V) -> V { x.replacing(with: 0, where: x .< 0) }
                @inline(__always) func magnitude(_ x: V) -> V { x.replacing(with: -x, where: x .< 0) }
                let one = V(repeating: 1), zero = V(repeating: 0), c2v = V(repeating: c2)
                var block = 0
                while block < count {
                    let end = min(count, block + 1024)
                    var d1 = zero, d4 = zero, a1 = zero, a4 = zero, l1 = zero, l4 = zero
                    var i = block
                    while i + 8 <= end {
                        let m1 = load(mu1, i), m2 = load(mu2, i)
                        if withSSIM {
                            let numM = one - (m1 - m2) * (m1 - m2)
                            let numS = 2 * (load(s12, i) - m1 * m2) + c2v
                            let denS = (load(s11, i) - m1 * m1) + (load(s22, i) - m2 * m2) + c2v
                            let d = positive(one - numM * numS / denS)
                            d1 += d
                            d4 += (d * d) * (d * d)
                        }
                        let x2 = load(p2, i) - m2, x1 = load(p1, i) - m1
                        let ratio = (one + magnitude(x2)) / (one + magnitude(x1)) - one
                        let art = positive(ratio), lost = positive(-ratio)
                        a1 += art
                        a4 += (art * art) * (art * art)
                        l1 += lost
                        l4 += (lost * lost) * (lost * lost)
                        i += 8
                    }
                    var tail = Sums()
                    while i < end {
                        let m1 = mu1[i], m2 = mu2[i]
                        if withSSIM {
                            let numM = 1 - (m1 - m2) * (m1 - m2)
                            let numS = 2 * (s12[i] - m1 * m2) + c2
                            let denS = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + c2
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
                        i += 1
                    }
                    total.ssim1 += Double(d1.sum()) + tail.ssim1
                    total.ssim4 += Double(d4.sum()) + tail.ssim4
                    total.art1 += Double(a1.sum()) + tail.art1
                    total.art4 += Double(a4.sum()) + tail.art4
                    total.lost1 += Double(l1.sum()) + tail.lost1
                    total.lost4 += Double(l4.sum()) + tail.lost4
                    block = end
                }
            }
            return total
        }

        struct Sums {
            var ssim1 = 0.0, ssim4 = 0.0, art1 = 0.0, art4 = 0.0, lost1 = 0.0, lost4 = 0.0

            /// Ringing and blurring, each as a mean and a 4-norm.
            func edges(_ n: Double) -> (Double, Double, Double, Double) {
                (art1 / n, pow(art4 / n, 0.25), lost1 / n, pow(lost4 / n, 0.25))
            }
        }

        /// Base addresses of seven planes of the same size (the loop above reads them without
        /// bounds checks, which keep the compiler from vectorising it).
        private static func withPointers(_ a: [Float], _ b: [Float], _ c: [Float], _ d: [Float], _ e: [Float], _ f: [Float], _ g: [Float],
                                  _ body: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>,
                                           UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>) -> Void) {
            a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in c.withUnsafeBufferPointer { c in
                d.withUnsafeBufferPointer { d in e.withUnsafeBufferPointer { e in f.withUnsafeBufferPointer { f in
                    g.withUnsafeBufferPointer { g in
                        body(a.baseAddress!, b.baseAddress!, c.baseAddress!, d.baseAddress!, e.baseAddress!, f.baseAddress!, g.baseAddress!)
                    }
                } } }
            } } }
        }
    }

    /// Gaussian blur, σ 1.5, radius 5: zero beyond the left and right edges, mirrored at the
    /// top and bottom. That is what the reference computes (it pads one axis with zeros to
    /// follow libjxl's recursive Gaussian, on images it holds transposed).
    struct GaussianBlur {
        let width: Int
        let height: Int
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

        /// The row pass's output, kept between calls.
        private var horizontal: [Float]
        /// One row between zero margins, so the kernel reads contiguous memory.
        private var padded: [Float]

        init(width: Int, height: Int) {
            self.width = width
            self.height = height
            horizontal = [Float](repeating: 0, count: width * height)
            padded = [Float](repeating: 0, count: width + 2 * Self.radius)
        }

        /// Pointer arithmetic throughout: checked index arithmetic keeps the compiler from
        /// vectorising the loops, and the blur is most of the metric's time.
        mutating func apply(_ input: [Float]) -> [Float] {
            let r = Self.radius, width = self.width, height = self.height
            let k = Self.kernel
            let (k0, k1, k2, k3, k4, k5) = (k[5], k[4], k[3], k[2], k[1], k[0])
            input.withUnsafeBufferPointer { src in
                horizontal.withUnsafeMutableBufferPointer { dst in
                    padded.withUnsafeMutableBufferPointer { row in
                        let row = row.baseAddress! + r
                        for y in 0..<height {
                            let s = src.baseAddress! + y * width, d = dst.baseAddress! + y * width
                            row.update(from: s, count: width)
                            for x in 0..<width {
                                let p = row + x
                                var sum = k0 * p[0]
                                sum += k1 * (p[-1] + p[1])
                                sum += k2 * (p[-2] + p[2])
                                sum += k3 * (p[-3] + p[3])
                                sum += k4 * (p[-4] + p[4])
                                sum += k5 * (p[-5] + p[5])
                                d[x] = sum
                            }
                        }
                    }
                }
            }
            // The column pass sums the 11 mirrored rows in the order the kernel lists them.
            return [Float](unsafeUninitializedCapacity: width * height) { output, initialised in
                horizontal.withUnsafeBufferPointer { src in
                    let base = src.baseAddress!
                    for y in 0..<height {
                        func row(_ t: Int) -> UnsafePointer<Float> { base + Self.mirrored(y + t, height) * width }
                        let (a0, a1, a2, a3, a4, a5) = (row(-5), row(-4), row(-3), row(-2), row(-1), row(0))
                        let (b1, b2, b3, b4, b5) = (row(1), row(2), row(3), row(4), row(5))
                        let d = output.baseAddress! + y * width
                        for x in 0..<width {
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
                            d[x] = sum
                        }
                    }
                }
                initialised = width * height
            }
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
