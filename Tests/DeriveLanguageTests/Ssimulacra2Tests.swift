@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

// Serialized: one test switches the process's kernels between their two copies
// (`kernelCopy`), and a score taken meanwhile by another test of this suite would mix them (two
// threads' score once differed from one thread's by 0.0007 that way).
/// SSIMULACRA 2 agrees with the reference implementation (PyPI `ssimulacra2`, a port of
/// libjxl's) on synthetic pairs, and the `q_auto` search brackets its target.
@Suite(.serialized) struct Ssimulacra2Tests {
    /// Largest difference allowed from the reference. Derive computes in `Float` like libjxl,
    /// the reference in double precision; on these pairs they differ by at most 0.008.
    /// (Benchmarks/metric_check.py measures the same on photos; see the README.)
    static let tolerance = 0.05

    /// A 120×100 image with smooth gradients, hard edges and fine texture.
    static let reference: PixelBuffer = {
        let w = 120, h = 100
        var pixels: [UInt8] = []
        for y in 0..<h {
            for x in 0..<w {
                let edge = (x / 30 + y / 25) % 2 == 0 ? 60.0 : 0.0
                let texture = 25 * sin(Double(x) * 0.9) * cos(Double(y) * 0.7)
                pixels.append(UInt8(max(0, min(255, Double(x) * 1.8 + edge + texture))))
                pixels.append(UInt8(max(0, min(255, Double(y) * 2.2 + texture))))
                pixels.append(UInt8(max(0, min(255, 200 - edge + Double(x + y) * 0.3))))
            }
        }
        return PixelBuffer(width: w, height: h, bands: 3, pixels: pixels)
    }()

    /// Deterministic distortions of `reference`.
    static func distorted(_ name: String) -> PixelBuffer {
        var out = reference
        let w = reference.width, h = reference.height
        switch name {
        case "posterised":
            out.pixels = reference.pixels.map { ($0 / 32) * 32 + 16 }
        case "blurred":
            for y in 0..<h {
                for x in 0..<w {
                    for c in 0..<3 {
                        var sum = 0, n = 0
                        for dy in -1...1 {
                            for dx in -1...1 where (0..<w).contains(x + dx) && (0..<h).contains(y + dy) {
                                sum += Int(reference.pixels[((y + dy) * w + x + dx) * 3 + c]); n += 1
                            }
                        }
                        out.pixels[(y * w + x) * 3 + c] = UInt8(sum / n)
                    }
                }
            }
        case "noisy":
            var state: UInt32 = 12345
            out.pixels = reference.pixels.map { value in
                state = state &* 1_103_515_245 &+ 12345
                let noise = Int((state >> 16) % 25) - 12
                return UInt8(max(0, min(255, Int(value) + noise)))
            }
        case "tinted":
            out.pixels = reference.pixels.enumerated().map { i, v in i % 3 == 0 ? UInt8(min(255, Int(v) + 12)) : v }
        default:
            break
        }
        return out
    }

    /// Scores from the reference implementation for these pairs (ssimulacra2 0.3.0).
    static let expected: [String: Double] = [
        "identical": 100,
        "posterised": -6.223837562048487, "blurred": -0.4647706170105721, "noisy": -9.86667395142959, "tinted": 90.72004496620973,
    ]

    @Test(arguments: ["identical", "posterised", "blurred", "noisy", "tinted"])
    func matchesTheReferenceImplementation(distortion: String) throws {
        let ours = try Ssimulacra2.score(reference: Self.reference, distorted: Self.distorted(distortion))
        let expected = try #require(Self.expected[distortion])
        #expect(abs(ours - expected) <= Self.tolerance, "ours \(ours), reference \(expected)")
        guard Python.has("ssimulacra2") else {
            #expect(!Python.required, "the test script installs the ssimulacra2 reference")
            return
        }
        let live = try Self.live(distortion)
        #expect(abs(ours - live) <= Self.tolerance, "ours \(ours), reference now \(live)")
    }

    /// The reference implementation's score, computed now on the same pixels.
    static func live(_ distortion: String) throws -> Double {
        func rows(_ p: PixelBuffer) -> String {
            "[" + (0..<p.height).map { y in
                "[" + (0..<p.width).map { x in
                    let i = (y * p.width + x) * 3
                    return "[\(p.pixels[i]),\(p.pixels[i + 1]),\(p.pixels[i + 2])]"
                }.joined(separator: ",") + "]"
            }.joined(separator: ",") + "]"
        }
        let script = """
        import json, sys, tempfile, os, numpy as np
        from PIL import Image
        from ssimulacra2 import compute_ssimulacra2
        a, b = json.loads(sys.stdin.read())
        d = tempfile.mkdtemp()
        Image.fromarray(np.array(a, dtype=np.uint8)).save(os.path.join(d, 'a.png'))
        Image.fromarray(np.array(b, dtype=np.uint8)).save(os.path.join(d, 'b.png'))
        print(compute_ssimulacra2(os.path.join(d, 'a.png'), os.path.join(d, 'b.png')))
        """
        let run = try Python.run(script, input: "[\(rows(reference)),\(rows(distorted(distortion)))]")
        return try #require(Double(run.output.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// The C loops' copies, for x86-64-v4, x86-64-v3 and any CPU, give the same scores but for
    /// rounding (FMA rounds a product and a sum once, sixteen lanes add in another order than
    /// eight: 0.003 apart at most on these pairs, a twentieth of the tolerance against the
    /// reference), on a CPU that runs them.
    @Test func theKernelsForEveryCPUAndForAVX2AndAVX512GiveTheSameScores() throws {
        let running = Ssimulacra2.kernelCopy()
        defer { Ssimulacra2.kernelCopy(running) }
        let best = Ssimulacra2.kernelCopy(2)
        var scores: [Int: [Double]] = [:]
        for copy in 0...best {
            #expect(Ssimulacra2.kernelCopy(copy) == copy)
            scores[copy] = try ["posterised", "blurred", "noisy", "tinted"].map {
                try Ssimulacra2.score(reference: Self.reference, distorted: Self.distorted($0))
            }
        }
        for copy in 1...max(1, best) where scores[copy] != nil {
            for (base, other) in zip(scores[0]!, scores[copy]!) {
                #expect(abs(base - other) <= 0.01, "baseline \(base), copy \(copy) \(other)")
            }
        }
        #if arch(x86_64)
        // Derive's build machines have AVX2: the comparison above ran at least two copies.
        #expect(best >= 1, "this CPU lacks AVX2 or FMA: only the baseline copy was compared")
        #endif
    }

    /// Halving the chroma keeps a flat colour and the luma of every pixel, and averages away
    /// colour that alternates from pixel to pixel; grey images have no chroma to halve.
    /// One score on two threads (`q_auto`'s whole-image check) sums the same (scale, channel)
    /// terms as on one, so it is the same score to the bit.
    @Test func twoThreadsGiveTheSameScore() throws {
        let reference = try Ssimulacra2.Reference(Self.reference)
        for name in ["identical", "posterised", "blurred", "noisy", "tinted"] {
            let one = try Ssimulacra2.score(reference: reference, distorted: Self.distorted(name))
            let two = try Ssimulacra2.score(reference: reference, distorted: Self.distorted(name), threads: 2)
            #expect(one == two, "\(name): \(one) on one thread, \(two) on two")
        }
    }

    /// A reference prepared for one score (its blurs made row by row beside the candidate's, as
    /// `q_auto`'s whole-image check scores its output) gives the same score to the bit as one
    /// prepared for many, on one thread and two, and so does the same reference blurred later
    /// (a search again on the whole image). Odd sizes and grey too.
    @Test func aReferenceForOneScoreGivesTheSameScoreToTheBit() throws {
        /// The top left `width`×`height` of a 120-wide RGB buffer, in RGB or as its green band.
        func cut(_ buffer: PixelBuffer, width: Int, height: Int, bands: Int) -> PixelBuffer {
            var pixels: [UInt8] = []
            for y in 0..<height {
                for x in 0..<width {
                    let at = (y * 120 + x) * 3
                    pixels += bands == 3 ? Array(buffer.pixels[at..<at + 3]) : [buffer.pixels[at + 1]]
                }
            }
            return PixelBuffer(width: width, height: height, bands: bands, pixels: pixels)
        }
        for (width, height, bands) in [(120, 100, 3), (117, 93, 3), (120, 100, 1)] {
            let reference = cut(Self.reference, width: width, height: height, bands: bands)
            let prepared = try Ssimulacra2.Reference(reference)
            for threads in [1, 2] {
                let single = try Ssimulacra2.Reference(reference, threads: threads, blurred: false)
                #expect(!single.isBlurred)
                let later = single.blurred(threads: threads)
                #expect(later.isBlurred)
                for name in ["posterised", "blurred", "noisy", "tinted"] {
                    let distorted = cut(Self.distorted(name), width: width, height: height, bands: bands)
                    let many = try Ssimulacra2.score(reference: prepared, distorted: distorted)
                    let once = try Ssimulacra2.score(reference: single, distorted: distorted, threads: threads)
                    let afterwards = try Ssimulacra2.score(reference: later, distorted: distorted, threads: threads)
                    #expect(once == many, "\(width)×\(height)×\(bands) \(name), one score on \(threads): \(once) against \(many)")
                    #expect(afterwards == many, "\(width)×\(height)×\(bands) \(name), blurred later on \(threads): \(afterwards) against \(many)")
                }
            }
        }
    }

    /// The first scale made straight from the pixels, two rows at a time, is what the linear
    /// image, its XYB and its halving make, to the bit (odd sizes, grey, one thread and two).
    @Test func theFirstScaleFromThePixelsIsTheLinearImages() throws {
        let odd = PixelBuffer(width: 37, height: 35, bands: 3, pixels: Array(Self.reference.pixels[0..<(37 * 35 * 3)]))
        let grey = PixelBuffer(width: 41, height: 33, bands: 1, pixels: Array(Self.reference.pixels[0..<(41 * 33)]))
        for buffer in [Self.reference, odd, grey] {
            let linear = Ssimulacra2.LinearImage(buffer)
            for needed in [[true, true, true], [false, true, false], [true, false, true]] {
                for threads in [1, 2] {
                    let (xyb, next) = Ssimulacra2.LinearImage.firstScale(buffer, needed: needed, halve: true, threads: threads)
                    #expect(xyb.planes == linear.xyb(needed).planes, "\(buffer.width)×\(buffer.height)×\(buffer.bands) \(needed) XYB")
                    let halved = linear.halved()
                    #expect(next?.planes == halved.planes && next?.width == halved.width && next?.height == halved.height,
                            "\(buffer.width)×\(buffer.height)×\(buffer.bands) halved")
                }
            }
            #expect(Ssimulacra2.LinearImage.firstScale(buffer, needed: [true, true, true], halve: false).1 == nil)
        }
    }

    @Test func halvingTheChromaKeepsLumaAndAveragesColour() throws {
        let flat = PixelBuffer(width: 9, height: 7, bands: 3, pixels: Array(repeating: [200, 40, 90], count: 63).flatMap { $0 })
        let kept = try #require(flat.chromaHalved())
        #expect(zip(kept.pixels, flat.pixels).allSatisfy { abs(Int($0) - Int($1)) <= 1 })
        // Reddish and bluish columns (no channel near 0 or 255, so nothing is clamped): each
        // pixel keeps its luma, and every pixel gets the same chroma, their mean.
        let columns = (0..<8).flatMap { _ in (0..<8).flatMap { x in x % 2 == 0 ? [180, 100, 100] : [100, 100, 180] as [UInt8] } }
        let halved = try #require(PixelBuffer(width: 8, height: 8, bands: 3, pixels: columns).chromaHalved())
        func luma(_ p: [UInt8], _ i: Int) -> Double { 0.299 * Double(p[i]) + 0.587 * Double(p[i + 1]) + 0.114 * Double(p[i + 2]) }
        for i in stride(from: 0, to: 64 * 3, by: 3) {
            #expect(abs(luma(halved.pixels, i) - luma(columns, i)) <= 1)
            // Red minus blue was ±80; with one chroma for all, it is the same everywhere.
            #expect(abs(Int(halved.pixels[i]) - Int(halved.pixels[i + 2])) <= 2)
        }
        #expect(PixelBuffer(width: 4, height: 4, bands: 1, pixels: Array(repeating: 9, count: 16)).chromaHalved() == nil)
    }

    @Test func worseDistortionsScoreLower() throws {
        let mild = try Ssimulacra2.score(reference: Self.reference, distorted: Self.distorted("tinted"))
        let strong = try Ssimulacra2.score(reference: Self.reference, distorted: Self.distorted("posterised"))
        #expect(mild > strong)
        #expect(try Ssimulacra2.score(reference: Self.reference, distorted: Self.reference) == 100)
    }

    @Test func imagesOfDifferentSizesAreRefused() {
        let small = PixelBuffer(width: 10, height: 10, bands: 3, pixels: [UInt8](repeating: 0, count: 300))
        #expect(throws: DeriveError.self) { try Ssimulacra2.score(reference: Self.reference, distorted: small) }
    }
}
