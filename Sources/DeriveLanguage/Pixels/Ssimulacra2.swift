internal import CMetricKernels
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
/// speed: its three blurs of a channel (its mean, its square and its product with the
/// reference) are made a row at a time, the column pass first from the rows around it (one
/// read of each plane's eleven rows for all three), and consumed at once by the SSIM and edge
/// sums instead of being stored as planes, buffers are reused across scales, and the loops over
/// pixels are C (`CMetricKernels`), sixteen pixels at a time built for AVX-512 and eight for AVX2
/// and FMA where the CPU has them, and for any x86-64 otherwise.
public enum Ssimulacra2 {
    static let scales = 6
    static let c2: Float = 0.0009
    /// A value near the middle of each XYB channel's values (as shifted positive: X 0.20–0.81 and
    /// B 0.27–0.94, grey at 0.42 and 0.55; Y 0.01–0.86), which the blurs and sums subtract from both
    /// planes first:
    /// the metric's terms are the same with any value (`dmetric_sums` says how, at the blur's
    /// zero edges), but a bright flat region's variance then comes from small numbers instead of
    /// the difference of two large ones, which in float agree to six digits. Scores then agree
    /// with the reference implementation (double precision) about three times as closely.
    static let centres: [Float] = [0.42, 0.43, 0.55]

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
        let work = Workspace(width: reference.width, height: reference.height, reference: false)
        let count = reference.scales.count
        var (xyb, next) = LinearImage.firstScale(distorted, needed: Self.needed(scale: 0, of: count), halve: count > 1)
        var averages = [ScaleAverages(reference.scales[0], xyb, scale: 0, of: count, work: work)]
        for index in 1..<max(1, count) {
            guard var linear = next else { break }
            xyb = linear.xyb(Self.needed(scale: index, of: count))
            averages.append(ScaleAverages(reference.scales[index], xyb, scale: index, of: count, work: work))
            if index < count - 1 { linear = linear.halved() }
            next = linear
        }
        return combined(averages)
    }

    /// The score of `distorted` against `reference`, with the work on two threads when
    /// `threads` is two or more: every scale's XYB planes first, then each (scale, channel)'s
    /// sums on the thread with less work so far (the full-size scale's three channels are
    /// three quarters of it). The sums are the same, so the score is the same to the bit.
    /// For one score of a large image (`q_auto`'s output on the whole image), where a search's
    /// two candidates at once would each take one thread.
    public static func score(reference: Reference, distorted: PixelBuffer, threads: Int) throws(DeriveError) -> Double {
        guard threads > 1 else { return try score(reference: reference, distorted: distorted) }
        guard reference.width == distorted.width, reference.height == distorted.height else {
            throw DeriveError(.internalError, "ssimulacra2: the images differ in size "
                + "(\(reference.width)×\(reference.height) and \(distorted.width)×\(distorted.height))")
        }
        let count = reference.scales.count
        let (first, next) = LinearImage.firstScale(distorted, needed: Self.needed(scale: 0, of: count), halve: count > 1, threads: threads)
        var images = [first]
        var jobs: [(scale: Int, channel: Int, cost: Int)] = []
        if var linear = next {
            for index in 1..<count {
                images.append(linear.xyb(Self.needed(scale: index, of: count)))
                if index < count - 1 { linear = linear.halved() }
            }
        }
        for (index, image) in images.enumerated() {
            for c in 0..<3 where !image.planes[c].isEmpty { jobs.append((index, c, image.width * image.height)) }
        }
        var parts: [[Int]] = [[], []], load = [0, 0]
        for (i, job) in jobs.enumerated().sorted(by: { $0.element.cost > $1.element.cost }) {
            let lighter = load[0] <= load[1] ? 0 : 1
            parts[lighter].append(i)
            load[lighter] += job.cost
        }
        let results = Mutex([ScaleAverages.Sums?](repeating: nil, count: jobs.count))
        let shared = (images, parts, jobs)
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            let work = Workspace(width: reference.width, height: reference.height, reference: false)
            for i in shared.1[part] {
                let job = shared.2[i]
                let sums = ScaleAverages.sums(reference.scales[job.scale], shared.0[job.scale], channel: job.channel,
                                              scale: job.scale, of: count, work: work)
                results.withLock { $0[i] = sums }
            }
        }
        let sums = results.withLock { $0 }
        var averages: [ScaleAverages] = []
        for index in 0..<count {
            var channels: [ScaleAverages.Sums?] = [nil, nil, nil]
            for (i, job) in jobs.enumerated() where job.scale == index { channels[job.channel] = sums[i] }
            averages.append(ScaleAverages(channels, scale: index, of: count, pixels: images[index].width * images[index].height))
        }
        return combined(averages)
    }

    /// Which copy of the C loops runs: 2 the x86-64-v4 one (AVX-512), 1 the x86-64-v3 one (AVX2
    /// and FMA), 0 the baseline's. `wanted` switches (to the best this CPU has at most): tests
    /// compare the copies.
    @discardableResult
    static func kernelCopy(_ wanted: Int? = nil) -> Int {
        Int(dmetric_fast_copy(Int32(wanted ?? -1)))
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

    /// Which channels' XYB planes a scale needs (those with a term that counts).
    static func needed(scale: Int, of count: Int) -> [Bool] {
        (0..<3).map { Terms(channel: $0, scale: scale, of: count).any }
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
    ///
    /// Without its blurs (`blurred` false) it is for one score only: that score blurs the
    /// reference row by row beside the candidate (`dmetric_pair_sums`), the same values in the
    /// same order, so the same score to the bit, without making and reading back two whole
    /// planes per channel and scale (a quarter less time for one score of a large image, where
    /// `q_auto` checks its output on the whole image). `blurred()` adds them for many scores.
    public struct Reference: Sendable {
        public let width: Int
        public let height: Int
        let scales: [Scale]
        /// Whether each scale's blurred means and squares are made (else each score makes them).
        public let isBlurred: Bool

        struct Scale: Sendable {
            var xyb: LinearImage
            var mean: [[Float]]
            var square: [[Float]]
        }

        /// With `threads` 2, the full-size scale (three quarters of the pixels, one channel)
        /// is prepared on one thread while the other halves the image and prepares the
        /// smaller scales (a quarter of the pixels, most of the channels): about the same work.
        public init(_ buffer: PixelBuffer, threads: Int = 1, blurred: Bool = true) throws(DeriveError) {
            guard buffer.width >= 8, buffer.height >= 8 else {
                throw DeriveError(.internalError, "ssimulacra2: the images are smaller than 8×8")
            }
            width = buffer.width
            height = buffer.height
            isBlurred = blurred
            let count = Ssimulacra2.scaleCount(width: width, height: height)
            let (first, next) = LinearImage.firstScale(buffer, needed: Ssimulacra2.needed(scale: 0, of: count), halve: count > 1,
                                                       threads: threads)
            let top = [Scale(xyb: first, mean: [[], [], []], square: [[], [], []])]
            guard let next else {
                scales = blurred ? Self.blurs(of: top, from: 0, of: count) : top
                return
            }
            guard threads > 1 else {
                let all = top + Self.scales(from: next, range: 1..<count, of: count, blurred: false)
                scales = blurred ? Self.blurs(of: all, from: 0, of: count) : all
                return
            }
            // The full-size scale's blurs (three quarters of the pixels, one channel) on one
            // thread, the smaller scales (most of the channels) on the other: about the same work.
            let parts = Mutex<[Int: [Scale]]>([:])
            DispatchQueue.concurrentPerform(iterations: 2) { part in
                let made = part == 0 ? (blurred ? Self.blurs(of: top, from: 0, of: count) : top)
                    : Self.scales(from: next, range: 1..<count, of: count, blurred: blurred)
                parts.withLock { $0[part] = made }
            }
            scales = parts.withLock { $0[0]! + $0[1]! }
        }

        private init(width: Int, height: Int, scales: [Scale]) {
            self.width = width
            self.height = height
            self.scales = scales
            isBlurred = true
        }

        /// This reference with its blurred planes, made from the XYB planes it has (for many
        /// scores against it); itself when it has them. With `threads` 2, the full-size scale on
        /// one thread and the others on the second, as `init` splits them.
        public func blurred(threads: Int = 1) -> Reference {
            guard !isBlurred else { return self }
            let count = scales.count
            guard threads > 1 && count > 1 else {
                return Reference(width: width, height: height, scales: Self.blurs(of: scales, from: 0, of: count))
            }
            let parts = Mutex<[Int: [Scale]]>([:])
            let scales = self.scales
            DispatchQueue.concurrentPerform(iterations: 2) { part in
                let made = part == 0 ? Self.blurs(of: Array(scales[0..<1]), from: 0, of: count)
                    : Self.blurs(of: Array(scales[1...]), from: 1, of: count)
                parts.withLock { $0[part] = made }
            }
            return Reference(width: width, height: height, scales: parts.withLock { $0[0]! + $0[1]! })
        }

        /// The scales in `range`, `linear` being the first of them.
        static func scales(from first: LinearImage, range: Range<Int>, of count: Int, blurred: Bool) -> [Scale] {
            var linear = first
            var scales: [Scale] = []
            for scale in range {
                let terms = (0..<3).map { Terms(channel: $0, scale: scale, of: count) }
                scales.append(Scale(xyb: linear.xyb(terms.map(\.any)), mean: [[], [], []], square: [[], [], []]))
                if scale < range.upperBound - 1 { linear = linear.halved() }
            }
            return blurred ? blurs(of: scales, from: range.lowerBound, of: count) : scales
        }

        /// `scales` (the first being scale `first`) with the blurred means and squares their
        /// terms need.
        static func blurs(of scales: [Scale], from first: Int, of count: Int) -> [Scale] {
            guard let widest = scales.first else { return scales }
            let work = Workspace(width: widest.xyb.width, height: widest.xyb.height, reference: true)
            return scales.enumerated().map { index, scale in
                let terms = (0..<3).map { Terms(channel: $0, scale: first + index, of: count) }
                var blurred = scale
                for c in 0..<3 where terms[c].any {
                    (blurred.mean[c], blurred.square[c]) = work.blurred(scale.xyb.planes[c], centre: Ssimulacra2.centres[c],
                                                                        width: scale.xyb.width, height: scale.xyb.height,
                                                                        squares: terms[c].ssim)
                }
                return blurred
            }
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

        /// The whole image in linear light: what `firstScale` makes two rows at a time without
        /// storing it (the tests compare the two).
        init(_ buffer: PixelBuffer) {
            width = buffer.width
            height = buffer.height
            let count = width * height, bands = buffer.bands
            func uninitialised() -> [Float] { [Float](unsafeUninitializedCapacity: count) { $1 = count } }
            var r = uninitialised(), g = bands >= 3 ? uninitialised() : [], b = bands >= 3 ? uninitialised() : []
            buffer.pixels.withUnsafeBufferPointer { pixels in Self.toLinear.withUnsafeBufferPointer { lut in
                r.withUnsafeMutableBufferPointer { r in g.withUnsafeMutableBufferPointer { g in b.withUnsafeMutableBufferPointer { b in
                    dmetric_linear(pixels.baseAddress, count, Int32(bands), lut.baseAddress, r.baseAddress, g.baseAddress, b.baseAddress)
                } } }
            } }
            planes = bands >= 3 ? [r, g, b] : [r, r, r]
        }

        /// The first scale's XYB planes (the channels `needed`) and, with `halve`, the linear image
        /// halved for the next scale, made two rows at a time from the pixels
        /// (`dmetric_first_scale`): the same values as `LinearImage(buffer)`, `xyb` and `halved`
        /// make, without the full-size linear planes (three floats a pixel, written and read
        /// once). With `threads` 2, each thread takes half the rows.
        static func firstScale(_ buffer: PixelBuffer, needed: [Bool], halve: Bool, threads: Int = 1) -> (LinearImage, LinearImage?) {
            let width = buffer.width, height = buffer.height, bands = buffer.bands
            let count = width * height
            let w = (width + 1) / 2, h = (height + 1) / 2
            func plane(_ size: Int) -> [Float] { [Float](unsafeUninitializedCapacity: size) { $1 = size } }
            var x = plane(needed[0] ? count : 0), y = plane(needed[1] ? count : 0), b = plane(needed[2] ? count : 0)
            let colour = bands >= 3
            var hr = plane(halve ? w * h : 0), hg = plane(halve && colour ? w * h : 0), hb = plane(halve && colour ? w * h : 0)
            let parts = threads > 1 && h >= 16 ? 2 : 1
            buffer.pixels.withUnsafeBufferPointer { pixels in Self.toLinear.withUnsafeBufferPointer { lut in
                x.withUnsafeMutableBufferPointer { x in y.withUnsafeMutableBufferPointer { y in b.withUnsafeMutableBufferPointer { b in
                    hr.withUnsafeMutableBufferPointer { hr in hg.withUnsafeMutableBufferPointer { hg in hb.withUnsafeMutableBufferPointer { hb in
                        let out = FirstScaleOutput(pixels: pixels.baseAddress!, lut: lut.baseAddress!,
                                                   x: needed[0] ? x.baseAddress : nil, y: needed[1] ? y.baseAddress : nil,
                                                   b: needed[2] ? b.baseAddress : nil, hr: halve ? hr.baseAddress : nil,
                                                   hg: halve && colour ? hg.baseAddress : nil, hb: halve && colour ? hb.baseAddress : nil)
                        let run: @Sendable (Int) -> Void = { part in
                            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: 6 * width)
                            defer { scratch.deallocate() }
                            let rows = (h * part / parts)..<(h * (part + 1) / parts)
                            dmetric_first_scale(out.pixels, width, height, Int32(bands), out.lut, rows.lowerBound, rows.upperBound,
                                                out.x, out.y, out.b, out.hr, out.hg, out.hb, scratch)
                        }
                        if parts == 1 { run(0) } else { DispatchQueue.concurrentPerform(iterations: parts, execute: run) }
                    } } }
                } } }
            } }
            let xyb = LinearImage(width: width, height: height, planes: [x, y, b])
            guard halve else { return (xyb, nil) }
            return (xyb, LinearImage(width: w, height: h, planes: colour ? [hr, hg, hb] : [hr, hr, hr]))
        }

        /// The buffers of one `firstScale`, for its threads: each writes its own rows only.
        struct FirstScaleOutput: @unchecked Sendable {
            let pixels: UnsafePointer<UInt8>
            let lut: UnsafePointer<Float>
            let x, y, b, hr, hg, hb: UnsafeMutablePointer<Float>?
        }

        /// 2×2 box average; an odd last column or row averages the pixels it has.
        func halved() -> LinearImage {
            let w = (width + 1) / 2, h = (height + 1) / 2
            let planes = self.planes.map { plane in
                [Float](unsafeUninitializedCapacity: w * h) { out, initialised in
                    plane.withUnsafeBufferPointer { dmetric_halved($0.baseAddress, width, height, out.baseAddress) }
                    initialised = w * h
                }
            }
            return LinearImage(width: w, height: h, planes: planes)
        }

        /// XYB as libjxl's opsin transform makes it, shifted to be positive as SSIMULACRA 2
        /// does; only the planes `needed` (by channel) are made, the others left empty.
        func xyb(_ needed: [Bool] = [true, true, true]) -> LinearImage {
            guard needed.contains(true) else { return LinearImage(width: width, height: height, planes: [[], [], []]) }
            let count = width * height
            func plane(_ made: Bool) -> [Float] { [Float](unsafeUninitializedCapacity: made ? count : 0) { $1 = made ? count : 0 } }
            var x = plane(needed[0]), y = plane(needed[1]), b = plane(needed[2])
            planes[0].withUnsafeBufferPointer { r in planes[1].withUnsafeBufferPointer { g in planes[2].withUnsafeBufferPointer { bl in
                x.withUnsafeMutableBufferPointer { x in y.withUnsafeMutableBufferPointer { y in b.withUnsafeMutableBufferPointer { b in
                    dmetric_xyb(r.baseAddress, g.baseAddress, bl.baseAddress, count,
                                needed[0] ? x.baseAddress : nil, needed[1] ? y.baseAddress : nil, needed[2] ? b.baseAddress : nil)
                } } }
            } } }
            return LinearImage(width: width, height: height, planes: [x, y, b])
        }
    }

    /// The 6 SSIM and 12 edge-difference averages of one scale (per channel: mean and 4-norm).
    struct ScaleAverages {
        var ssim = [Double](repeating: 0, count: 6)
        var edge = [Double](repeating: 0, count: 12)

        init(_ reference: Reference.Scale, _ b: LinearImage, scale: Int, of scaleCount: Int, work: Workspace) {
            self.init((0..<3).map { Self.sums(reference, b, channel: $0, scale: scale, of: scaleCount, work: work) },
                      scale: scale, of: scaleCount, pixels: b.width * b.height)
        }

        /// The averages from each channel's sums (nil for a channel whose terms all weigh
        /// nothing).
        init(_ channels: [Sums?], scale: Int, of scaleCount: Int, pixels: Int) {
            let n = Double(pixels)
            for c in 0..<3 {
                guard let sums = channels[c] else { continue }
                if Terms(channel: c, scale: scale, of: scaleCount).ssim {
                    ssim[c * 2] = sums.ssim1 / n
                    ssim[c * 2 + 1] = pow(sums.ssim4 / n, 0.25)
                }
                (edge[c * 4], edge[c * 4 + 1], edge[c * 4 + 2], edge[c * 4 + 3]) = sums.edges(n)
            }
        }

        /// One channel's sums at one scale, or nil when none of its terms counts.
        static func sums(_ reference: Reference.Scale, _ b: LinearImage, channel c: Int, scale: Int, of scaleCount: Int,
                         work: Workspace) -> Sums? {
            let terms = Terms(channel: c, scale: scale, of: scaleCount)
            guard terms.any else { return nil }
            let centre = Ssimulacra2.centres[c]
            if reference.mean[c].isEmpty {
                return work.pairSums(reference.xyb.planes[c], b.planes[c], centre: centre, ssim: terms.ssim, width: b.width,
                                     height: b.height)
            }
            return work.sums(reference.xyb.planes[c], b.planes[c], centre: centre, reference.mean[c],
                             terms.ssim ? reference.square[c] : nil, width: b.width, height: b.height)
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

    /// The blurs and sums of one scoring, with buffers sized for its largest scale and reused
    /// by every smaller one.
    final class Workspace {
        /// Rows of `rowStride` floats between zero margins, so the row pass reads contiguous
        /// memory: two for a reference's blurs (its column passes), five for a candidate's
        /// sums (its row's column passes: the candidate's mean, square and product with the
        /// reference, then the reference's mean and square when a score blurs it too).
        let passes: UnsafeMutablePointer<Float>
        let rowStride: Int
        /// The candidate's blurred mean, square and product for one row (then the reference's
        /// blurred mean and square, then each column's share of the taps beyond the row's ends).
        let columns: UnsafeMutablePointer<Float>

        /// `reference`: for the reference's blurs (whole planes), else for a candidate's sums.
        init(width: Int, height: Int, reference: Bool) {
            rowStride = width + 2 * Ssimulacra2.radius + 8
            passes = .allocate(capacity: (reference ? 2 : 5) * rowStride)
            columns = .allocate(capacity: reference ? 0 : 6 * rowStride)
        }

        deinit {
            passes.deallocate()
            columns.deallocate()
        }

        /// The centre tap, then the taps 1 to 5 pixels away.
        static let taps: [Float] = Array(kernel[radius...])

        /// The reference's blurred plane and, with `squares`, its blurred square, both less
        /// `centre` (`dmetric_blurred`: a row's column pass, then its row pass).
        func blurred(_ plane: [Float], centre: Float, width: Int, height: Int, squares: Bool) -> ([Float], [Float]) {
            let count = width * height
            var square = [Float](unsafeUninitializedCapacity: squares ? count : 0) { $1 = squares ? count : 0 }
            let mean = [Float](unsafeUninitializedCapacity: count) { out, initialised in
                plane.withUnsafeBufferPointer { plane in Self.taps.withUnsafeBufferPointer { taps in
                    square.withUnsafeMutableBufferPointer { square in
                        dmetric_blurred(plane.baseAddress, centre, squares ? 1 : 0, width, height, taps.baseAddress, passes,
                                        rowStride, out.baseAddress, squares ? square.baseAddress : nil)
                    }
                } }
                initialised = count
            }
            return (mean, square)
        }

        /// The per-pixel terms of one channel, summed: SSIM's `d` and `d⁴` (when `s11`, the
        /// reference's blurred square, is given) and the edge ratio's gains (ringing) and
        /// losses (blurring) with their fourth powers. The candidate's blurred mean, square and
        /// product with the reference are made a row at a time and used at once (see
        /// `dmetric_sums`: the branch-free form of libjxl's loop).
        func sums(_ p1: [Float], _ p2: [Float], centre: Float, _ mu1: [Float], _ s11: [Float]?, width: Int,
                  height: Int) -> ScaleAverages.Sums {
            var out = [Double](repeating: 0, count: 6)
            p1.withUnsafeBufferPointer { p1 in p2.withUnsafeBufferPointer { p2 in mu1.withUnsafeBufferPointer { mu1 in
                (s11 ?? []).withUnsafeBufferPointer { s11 in Self.taps.withUnsafeBufferPointer { taps in out.withUnsafeMutableBufferPointer { out in
                    dmetric_sums(p1.baseAddress, p2.baseAddress, centre, mu1.baseAddress, s11.isEmpty ? nil : s11.baseAddress, width,
                                 height, taps.baseAddress, rowStride, passes, columns, out.baseAddress)
                } } }
            } } }
            return ScaleAverages.Sums(ssim1: out[0], ssim4: out[1], art1: out[2], art4: out[3], lost1: out[4], lost4: out[5])
        }

        /// The same sums against a reference plane without its blurs: they are made row by row
        /// beside the candidate's (`dmetric_pair_sums`), the same values as `blurred` makes.
        func pairSums(_ p1: [Float], _ p2: [Float], centre: Float, ssim: Bool, width: Int, height: Int) -> ScaleAverages.Sums {
            var out = [Double](repeating: 0, count: 6)
            p1.withUnsafeBufferPointer { p1 in p2.withUnsafeBufferPointer { p2 in
                Self.taps.withUnsafeBufferPointer { taps in out.withUnsafeMutableBufferPointer { out in
                    dmetric_pair_sums(p1.baseAddress, p2.baseAddress, centre, ssim ? 1 : 0, width, height, taps.baseAddress,
                                      rowStride, passes, columns, out.baseAddress)
                } }
            } }
            return ScaleAverages.Sums(ssim1: out[0], ssim4: out[1], art1: out[2], art4: out[3], lost1: out[4], lost4: out[5])
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
