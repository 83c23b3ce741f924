import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// Cloudinary's artistic effects on a real photograph (the same round-cornered Grace Hopper as
/// ToneEffectTests): what each must change, and what it must leave alone (size, alpha).
@Suite struct ArtisticEffectVipsTests {
    static func alphas(_ p: PixelBuffer) -> [UInt8] { stride(from: 3, to: p.pixels.count, by: p.bands).map { p.pixels[$0] } }

    /// Mean of max − min over the opaque pixels' channels: how coloured the image is.
    static func meanChroma(_ p: PixelBuffer) -> Double {
        var sum = 0.0, count = 0
        for i in stride(from: 0, to: p.pixels.count, by: p.bands) where p.pixels[i + 3] == 255 {
            let c = p.pixels[i..<(i + 3)]
            sum += Double(c.max()! - c.min()!)
            count += 1
        }
        return sum / Double(count)
    }

    /// Every look changes the colours and keeps the size and the alpha (the round corners)
    /// exactly.
    @Test(arguments: ArtFilter.allCases)
    func everyLookChangesColourAndKeepsAlpha(filter: ArtFilter) throws {
        let plain = ToneEffectTests.plain
        let changed = try ToneEffectTests.pixels("e_art:" + filter.rawValue)
        #expect(changed.width == plain.width && changed.height == plain.height && changed.bands == 4)
        #expect(Self.alphas(changed) == Self.alphas(plain), "\(filter) changed the alpha")
        #expect(Harness.difference(changed, plain) > 1, "\(filter) changed nothing")
    }

    /// What the names promise on the photo: audrey is black and white, incognito darker and
    /// more muted, hokusai more colourful, red_rock redder.
    @Test func looksDoWhatTheirNamesSay() throws {
        let plain = ToneEffectTests.plain
        let audrey = try ToneEffectTests.pixels("e_art:audrey")
        #expect(Self.meanChroma(audrey) < 1, "audrey chroma \(Self.meanChroma(audrey))")
        let incognito = try ToneEffectTests.pixels("e_art:incognito")
        #expect(ToneEffectTests.meanLuma(incognito) < ToneEffectTests.meanLuma(plain) - 5)
        #expect(Self.meanChroma(incognito) < Self.meanChroma(plain) * 0.8)
        let hokusai = try ToneEffectTests.pixels("e_art:hokusai")
        #expect(Self.meanChroma(hokusai) > Self.meanChroma(plain) * 1.2)
        let redRock = try ToneEffectTests.pixels("e_art:red_rock")
        let redShift = (Harness.mean(redRock, channel: 0) - Harness.mean(redRock, channel: 2)) - (Harness.mean(plain, channel: 0) - Harness.mean(plain, channel: 2))
        #expect(redShift > 15, "red_rock: red over blue grew by \(redShift)")
    }

    /// Distinct colours among the opaque pixels.
    static func colourCount(_ p: PixelBuffer) -> Int {
        Set(stride(from: 0, to: p.pixels.count, by: p.bands).filter { p.pixels[$0 + 3] == 255 }.map { Array(p.pixels[$0..<($0 + 3)]) }).count
    }

    /// Opaque pure-black pixels: the cartoon's lines.
    static func blackCount(_ p: PixelBuffer) -> Int {
        stride(from: 0, to: p.pixels.count, by: p.bands).filter { p.pixels[$0 + 3] == 255 && p.pixels[$0..<($0 + 3)].allSatisfy { $0 == 0 } }.count
    }

    /// e_cartoonify: the colour reduction leaves few colours (at most levels³ and black), the
    /// lines add black along edges (more at a higher strength, none at 0), bw leaves greys
    /// only; size and alpha are kept exactly.
    @Test(arguments: [("e_cartoonify", 9), ("e_cartoonify:70:80", 5), ("e_cartoonify:100:100", 2), ("e_cartoonify:0:0", nil as Int?),
                      ("e_cartoonify:40:bw", 9)])
    func cartoonifyFlattensColoursAndDrawsLines(chain: String, levels: Int?) throws {
        let plain = ToneEffectTests.plain
        let changed = try ToneEffectTests.pixels(chain)
        #expect(changed.width == plain.width && changed.height == plain.height && changed.bands == 4)
        #expect(Self.alphas(changed) == Self.alphas(plain), "\(chain) changed the alpha")
        if let levels {
            let most = chain.hasSuffix("bw") ? levels + 1 : levels * levels * levels + 1
            #expect(Self.colourCount(changed) <= most, "\(chain): \(Self.colourCount(changed)) colours")
        } else {
            #expect(Self.colourCount(changed) > 1000, "\(chain): the colours were reduced")
        }
        if chain.hasSuffix("bw") {
            #expect(Self.meanChroma(changed) == 0)
        }
    }

    @Test func linesGrowWithStrength() throws {
        let counts = try [0, 40, 70, 100].map { try Self.blackCount(ToneEffectTests.pixels("e_cartoonify:\($0):0")) }
        let plainBlack = Self.blackCount(ToneEffectTests.plain)
        #expect(counts[0] <= plainBlack, "strength 0 drew lines: \(counts)")
        #expect(counts[1] > plainBlack + 50 && counts[2] > counts[1] && counts[3] > counts[2], "\(counts), plain \(plainBlack)")
        // Without lines and reduction only a light blur (sigma 1 on 120 px) remains: close to the photo.
        let blurred = try ToneEffectTests.pixels("e_cartoonify:0:0"), plain = ToneEffectTests.plain
        var total = 0, count = 0
        for i in stride(from: 0, to: plain.pixels.count, by: 4) where plain.pixels[i + 3] == 255 {
            for c in 0..<3 { total += abs(Int(blurred.pixels[i + c]) - Int(plain.pixels[i + c])) }
            count += 3
        }
        #expect(Double(total) / Double(count) < 12, "mean difference \(Double(total) / Double(count))")
    }

    /// e_vectorize: flat regions of few colours (at most levels³), size and alpha kept.
    @Test(arguments: [("e_vectorize", 8), ("e_vectorize:2", 8), ("e_vectorize:30", 27)])
    func vectorizeLeavesFewColours(chain: String, most: Int) throws {
        let plain = ToneEffectTests.plain
        let changed = try ToneEffectTests.pixels(chain)
        #expect(changed.width == plain.width && changed.height == plain.height && changed.bands == 4)
        #expect(Self.alphas(changed) == Self.alphas(plain), "\(chain) changed the alpha")
        #expect(Self.colourCount(plain) > 1000)
        #expect(Self.colourCount(changed) <= most && Self.colourCount(changed) >= 3, "\(chain): \(Self.colourCount(changed)) colours")
        // Still the photo: mean luma within 25 of it.
        #expect(abs(ToneEffectTests.meanLuma(changed) - ToneEffectTests.meanLuma(plain)) < 25)
    }
}
