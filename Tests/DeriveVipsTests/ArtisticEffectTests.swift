import DeriveCore
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
}
