import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// Cloudinary's colour and tone effects on a real photograph: what each must change, and what
/// it must leave alone (the image's size, its alpha).
@Suite struct ToneEffectTests {
    static let photo = "photos/grace_hopper_noexif.jpg"

    /// The photo fitted into 120x120, its corners cut round (so it has alpha), then `chain`.
    static func pixels(_ chain: String?) throws -> PixelBuffer {
        let (_, result) = try Harness.render(photo, "c_fit,w_120,h_120/r_max\(chain.map { "/" + $0 } ?? "")/f_png")
        return try Harness.pixels(result.outputs[0].data)
    }

    static let plain: PixelBuffer = { try! pixels(nil) }()

    /// Rec. 601 luma of every opaque pixel, averaged.
    static func meanLuma(_ p: PixelBuffer) -> Double {
        var sum = 0.0, count = 0
        for i in stride(from: 0, to: p.pixels.count, by: p.bands) where p.pixels[i + 3] == 255 {
            sum += 0.299 * Double(p.pixels[i]) + 0.587 * Double(p.pixels[i + 1]) + 0.114 * Double(p.pixels[i + 2])
            count += 1
        }
        return sum / Double(count)
    }

    /// HSV hue in degrees, or nil for a pixel too grey to have one.
    static func hue(_ r: Int, _ g: Int, _ b: Int) -> Double? {
        let hi = max(r, g, b), lo = min(r, g, b), c = Double(hi - lo)
        guard c >= 30 else { return nil }
        let h: Double = hi == r ? Double(g - b) / c : hi == g ? 2 + Double(b - r) / c : 4 + Double(r - g) / c
        return (h * 60 + 360).truncatingRemainder(dividingBy: 360)
    }

    /// The mean turn of hue from `before` to `after`, in degrees (-180...180), over opaque
    /// pixels coloured in both.
    static func meanHueTurn(from before: PixelBuffer, to after: PixelBuffer) -> Double {
        var x = 0.0, y = 0.0
        for i in stride(from: 0, to: before.pixels.count, by: before.bands) where before.pixels[i + 3] == 255 {
            let p = before.pixels[i..<(i + 3)].map(Int.init), q = after.pixels[i..<(i + 3)].map(Int.init)
            guard let h0 = hue(p[0], p[1], p[2]), let h1 = hue(q[0], q[1], q[2]) else { continue }
            let turn = (h1 - h0) * .pi / 180
            x += cos(turn)
            y += sin(turn)
        }
        return atan2(y, x) * 180 / .pi
    }

    @Test(arguments: ["e_gamma:50", "e_gamma:-50", "e_hue", "e_hue:-100", "e_brightness_hsb", "e_brightness_hsb:-60",
                      "e_red:50", "e_green:-50", "e_blue:100", "e_blackwhite", "e_blackwhite:20", "e_vibrance", "e_vibrance:-100",
                      "e_unsharp_mask", "e_unsharp_mask:2000", "e_contrast:-50/e_auto_contrast",
                      "e_brightness:-50/e_auto_brightness", "e_blue:-50/e_auto_color", "e_contrast:-50/e_improve",
                      "e_contrast:-50/e_improve:indoor", "e_fill_light", "e_fill_light:100:-100", "e_replace_color:red",
                      "e_replace_color:orange:80:black", "e_ordered_dither:4", "e_simulate_colorblind", "e_assist_colorblind:50", "e_assist_colorblind:xray", "e_recolor:0:0:1:0:1:0:1:0:0"])
    func keepsTheSizeAndTheAlpha(chain: String) throws {
        let changed = try Self.pixels(chain)
        #expect(changed.width == Self.plain.width && changed.height == Self.plain.height && changed.bands == 4)
        let alpha = { (p: PixelBuffer) in stride(from: 3, to: p.pixels.count, by: p.bands).map { p.pixels[$0] } }
        #expect(alpha(changed) == alpha(Self.plain))
        #expect(Harness.difference(changed, Self.plain) > 1, "\(chain) changed nothing")
    }

    /// A positive gamma lifts the midtones (the mean luma rises), a negative one lowers them.
    @Test(arguments: [("e_gamma:50", 15.0, 40.0), ("e_gamma:150", 40.0, 90.0), ("e_gamma:-50", -55.0, -20.0)])
    func gammaMovesTheMidtones(chain: String, lowest: Double, highest: Double) throws {
        let changed = try Self.pixels(chain)
        let shift = Self.meanLuma(changed) - Self.meanLuma(Self.plain)
        #expect(shift > lowest && shift < highest, "\(chain): mean luma moved by \(shift)")
    }

    /// e_hue turns every hue by 1.8° a level (in LCh, so measured in HSV only roughly), in the
    /// level's direction, keeping the light.
    @Test(arguments: [("e_hue:20", 16.0, 56.0), ("e_hue", 124.0, 175.0), ("e_hue:-20", -56.0, -16.0), ("e_hue:-80", -175.0, -124.0)])
    func hueTurnsEveryColour(chain: String, lowest: Double, highest: Double) throws {
        let changed = try Self.pixels(chain)
        let turn = Self.meanHueTurn(from: Self.plain, to: changed)
        #expect(turn > lowest && turn < highest, "\(chain): hue turned by \(turn)°")
        #expect(abs(Self.meanLuma(changed) - Self.meanLuma(Self.plain)) < 10)
    }

    /// HSB brightness scales each pixel's largest channel, so the mean of the largest channel
    /// moves by the level (until it clips) and the hue of coloured pixels stays.
    @Test(arguments: [("e_brightness_hsb:-60", 0.35, 0.45), ("e_brightness_hsb:-20", 0.77, 0.83), ("e_brightness_hsb:30", 1.15, 1.3)])
    func brightnessHSBScalesTheValueKeepingTheHue(chain: String, lowest: Double, highest: Double) throws {
        let changed = try Self.pixels(chain)
        let value = { (p: PixelBuffer) in
            stride(from: 0, to: p.pixels.count, by: p.bands).filter { p.pixels[$0 + 3] == 255 }.map { Double(p.pixels[$0..<($0 + 3)].max()!) }.reduce(0, +)
        }
        let ratio = value(changed) / value(Self.plain)
        #expect(ratio > lowest && ratio < highest, "\(chain): value scaled by \(ratio)")
        #expect(abs(Self.meanHueTurn(from: Self.plain, to: changed)) < 3)
    }

    /// e_red, e_green and e_blue move the mean of their channel in the level's direction and
    /// leave the other two as they were.
    @Test(arguments: [("e_red:50", 0, 1.0), ("e_red:-50", 0, -1.0), ("e_green:40", 1, 1.0), ("e_green:-100", 1, -1.0),
                      ("e_blue:60", 2, 1.0), ("e_blue:-30", 2, -1.0)])
    func channelLevelsMoveOneChannel(chain: String, channel: Int, direction: Double) throws {
        let changed = try Self.pixels(chain)
        for c in 0..<3 {
            let shift = Harness.mean(changed, channel: c) - Harness.mean(Self.plain, channel: c)
            if c == channel {
                #expect(shift * direction > 10, "\(chain): channel \(c) moved by \(shift)")
            } else {
                #expect(abs(shift) < 0.5, "\(chain): channel \(c) moved by \(shift)")
            }
        }
        if direction < 0 && chain.hasSuffix("-100") {
            #expect(stride(from: channel, to: changed.pixels.count, by: changed.bands).allSatisfy { changed.pixels[$0] == 0 })
        }
    }

    /// e_blackwhite leaves only black and white, and a higher threshold leaves more black.
    @Test func blackwhiteLeavesOnlyBlackAndWhite() throws {
        var blackShares: [Double] = []
        for threshold in [20, 50, 80] {
            let changed = try Self.pixels("e_blackwhite:\(threshold)")
            var black = 0, opaque = 0
            for i in stride(from: 0, to: changed.pixels.count, by: changed.bands) where changed.pixels[i + 3] == 255 {
                let (r, g, b) = (changed.pixels[i], changed.pixels[i + 1], changed.pixels[i + 2])
                #expect((r == 0 || r == 255) && r == g && g == b, "e_blackwhite:\(threshold): (\(r), \(g), \(b))")
                if r == 0 { black += 1 }
                opaque += 1
            }
            blackShares.append(Double(black) / Double(opaque))
        }
        #expect(blackShares[0] < blackShares[1] && blackShares[1] < blackShares[2], "black shares \(blackShares)")
        #expect(blackShares[0] > 0.05 && blackShares[2] < 0.995, "black shares \(blackShares)")
    }

    /// The chroma (max - min of RGB) of opaque pixels before and after, grouped by how muted they
    /// were: the mean ratio after / before for muted pixels (chroma 10...40) and vivid ones (80+).
    static func chromaRatios(_ before: PixelBuffer, _ after: PixelBuffer) -> (muted: Double, vivid: Double) {
        var muted: [Double] = [], vivid: [Double] = []
        for i in stride(from: 0, to: before.pixels.count, by: before.bands) where before.pixels[i + 3] == 255 {
            let c0 = Double(before.pixels[i..<(i + 3)].max()! - before.pixels[i..<(i + 3)].min()!)
            let c1 = Double(after.pixels[i..<(i + 3)].max()! - after.pixels[i..<(i + 3)].min()!)
            if (10...40).contains(c0) { muted.append(c1 / c0) } else if c0 >= 80 { vivid.append(c1 / c0) }
        }
        return (muted.reduce(0, +) / Double(muted.count), vivid.reduce(0, +) / Double(vivid.count))
    }

    /// e_vibrance saturates muted colours more than vivid ones; a negative strength mutes them
    /// more; the light stays.
    @Test(arguments: [("e_vibrance", 1.0), ("e_vibrance:80", 1.0), ("e_vibrance:-60", -1.0)])
    func vibranceMovesMutedColoursMost(chain: String, direction: Double) throws {
        let changed = try Self.pixels(chain)
        let (muted, vivid) = Self.chromaRatios(Self.plain, changed)
        #expect((muted - 1) * direction > 0.05, "\(chain): muted ×\(muted), vivid ×\(vivid)")
        #expect(abs(muted - 1) > abs(vivid - 1) + 0.03, "\(chain): muted ×\(muted), vivid ×\(vivid)")
        #expect(abs(Self.meanLuma(changed) - Self.meanLuma(Self.plain)) < 5)
    }

    /// The mean squared 4-neighbour Laplacian of luma over pixels whose 3x3 neighbourhood is
    /// opaque: the energy of fine detail, which sharpening raises.
    static func laplacianEnergy(_ p: PixelBuffer) -> Double {
        let luma = { (x: Int, y: Int) -> Double in
            let i = (y * p.width + x) * p.bands
            return 0.299 * Double(p.pixels[i]) + 0.587 * Double(p.pixels[i + 1]) + 0.114 * Double(p.pixels[i + 2])
        }
        let opaque = { (x: Int, y: Int) in p.pixels[(y * p.width + x) * p.bands + 3] == 255 }
        var sum = 0.0, count = 0
        for y in 1..<(p.height - 1) {
            for x in 1..<(p.width - 1) where opaque(x, y) && opaque(x - 1, y) && opaque(x + 1, y) && opaque(x, y - 1) && opaque(x, y + 1) {
                let l = 4 * luma(x, y) - luma(x - 1, y) - luma(x + 1, y) - luma(x, y - 1) - luma(x, y + 1)
                sum += l * l
                count += 1
            }
        }
        return sum / Double(count)
    }

    /// e_unsharp_mask raises the fine-detail energy, more at a higher strength, and keeps the
    /// mean light (the mask adds as much as it takes away, up to clipping).
    @Test func unsharpMaskRaisesLocalContrastWithStrength() throws {
        let energies = try [nil, "e_unsharp_mask:30", "e_unsharp_mask", "e_unsharp_mask:400"].map { chain in
            Self.laplacianEnergy(try Self.pixels(chain))
        }
        #expect(energies[0] < energies[1] && energies[1] < energies[2] && energies[2] < energies[3], "energies \(energies)")
        #expect(energies[2] > 1.5 * energies[0], "energies \(energies)")
        #expect(abs(Self.meanLuma(try Self.pixels("e_unsharp_mask")) - Self.meanLuma(Self.plain)) < 3)
    }

    /// The spread of opaque pixels' luma: its 95th percentile less its 5th.
    static func lumaSpread(_ p: PixelBuffer) -> Double {
        var lumas: [Double] = []
        for i in stride(from: 0, to: p.pixels.count, by: p.bands) where p.pixels[i + 3] == 255 {
            let r = Double(p.pixels[i]), g = Double(p.pixels[i + 1]), b = Double(p.pixels[i + 2])
            lumas.append(0.299 * r + 0.587 * g + 0.114 * b)
        }
        lumas.sort()
        return lumas[lumas.count * 95 / 100] - lumas[lumas.count * 5 / 100]
    }

    /// e_auto_contrast widens the luma spread of a low-contrast copy (e_contrast:-60), less at
    /// a lower blend; blend 0 changes nothing.
    @Test(arguments: [("e_auto_contrast", 1.8), ("e_auto_contrast:50", 1.3)])
    func autoContrastWidensALowContrastCopy(chain: String, factor: Double) throws {
        let dull = Self.lumaSpread(try Self.pixels("e_contrast:-60"))
        let stretched = Self.lumaSpread(try Self.pixels("e_contrast:-60/\(chain)"))
        #expect(stretched > factor * dull, "\(chain): spread \(dull) became \(stretched)")
        #expect(Self.lumaSpread(try Self.pixels("e_contrast:-60/e_auto_contrast:0")) == dull)
        // Only opaque pixels count: after a full stretch they reach (nearly) black and white.
        let full = try Self.pixels("e_contrast:-60/e_auto_contrast")
        var lumas: [Double] = []
        for i in stride(from: 0, to: full.pixels.count, by: full.bands) where full.pixels[i + 3] == 255 {
            lumas.append(0.299 * Double(full.pixels[i]) + 0.587 * Double(full.pixels[i + 1]) + 0.114 * Double(full.pixels[i + 2]))
        }
        lumas.sort()
        #expect(lumas[lumas.count / 200] < 12 && lumas[lumas.count - 1 - lumas.count / 200] > 243, "\(lumas[lumas.count / 200]) to \(lumas[lumas.count - 1 - lumas.count / 200])")
        #expect(Self.lumaSpread(try Self.pixels("e_contrast:-60/e_auto_contrast:50")) < Self.lumaSpread(try Self.pixels("e_contrast:-60/e_auto_contrast")))
    }

    /// e_auto_brightness moves the mean luma of a dark copy (e_brightness:-60, e_gamma:-50)
    /// at least 40 % of the way to 128 (a gamma curve from the mean undershoots on a spread
    /// histogram), less at blend 50; blend 0 changes nothing.
    @Test(arguments: ["e_brightness:-60", "e_gamma:-50"])
    func autoBrightnessMovesTheMeanTowardMidGrey(copy: String) throws {
        let before = Self.meanLuma(try Self.pixels(copy))
        let full = Self.meanLuma(try Self.pixels("\(copy)/e_auto_brightness"))
        let half = Self.meanLuma(try Self.pixels("\(copy)/e_auto_brightness:50"))
        #expect(abs(before - 128) > 30, "\(copy): mean \(before)")
        #expect(abs(full - 128) < 0.6 * abs(before - 128), "\(copy): mean \(before) became \(full)")
        #expect(abs(half - 128) < abs(before - 128) && abs(half - 128) > abs(full - 128), "\(copy): \(before), \(half), \(full)")
        #expect(Self.meanLuma(try Self.pixels("\(copy)/e_auto_brightness:0")) == before)
    }

    /// The cast of opaque pixels: mean blue less mean red.
    static func blueCast(_ p: PixelBuffer) -> Double {
        var red = 0.0, blue = 0.0
        for i in stride(from: 0, to: p.pixels.count, by: p.bands) where p.pixels[i + 3] == 255 {
            red += Double(p.pixels[i])
            blue += Double(p.pixels[i + 2])
        }
        return (blue - red) / Double(p.width * p.height)
    }

    /// e_auto_color takes most of a yellow cast (e_blue:-50: blue never passes 128) away, less
    /// at blend 50; blend 0 changes nothing.
    @Test func autoColorRemovesACast() throws {
        let plain = Self.blueCast(Self.plain)
        let cast = Self.blueCast(try Self.pixels("e_blue:-50"))
        let full = Self.blueCast(try Self.pixels("e_blue:-50/e_auto_color"))
        let half = Self.blueCast(try Self.pixels("e_blue:-50/e_auto_color:50"))
        #expect(abs(cast - plain) > 20, "cast \(cast), plain \(plain)")
        #expect(abs(full - plain) < 0.25 * abs(cast - plain), "plain \(plain), cast \(cast), after \(full)")
        #expect(abs(half - plain) < abs(cast - plain) && abs(half - plain) > abs(full - plain), "\(cast), \(half), \(full)")
        #expect(try Self.pixels("e_blue:-50/e_auto_color:0").pixels == (try Self.pixels("e_blue:-50")).pixels)
    }

    /// e_improve on a dull copy with a cast (e_contrast:-50, e_blue:-40) widens the luma spread
    /// and takes the cast away; indoor (with a fill light) is lighter than outdoor; blend 0
    /// changes nothing.
    @Test func improveRestoresADullCastCopy() throws {
        let copy = "e_contrast:-50/e_blue:-40"
        let before = try Self.pixels(copy)
        let outdoor = try Self.pixels("\(copy)/e_improve")
        let indoor = try Self.pixels("\(copy)/e_improve:indoor")
        let half = try Self.pixels("\(copy)/e_improve:outdoor:50")
        let plain = Self.blueCast(Self.plain)
        #expect(Self.lumaSpread(outdoor) > 1.5 * Self.lumaSpread(before), "spread \(Self.lumaSpread(before)) became \(Self.lumaSpread(outdoor))")
        #expect(abs(Self.blueCast(outdoor) - plain) < 0.5 * abs(Self.blueCast(before) - plain), "cast \(Self.blueCast(before)) became \(Self.blueCast(outdoor))")
        #expect(Self.meanLuma(indoor) > Self.meanLuma(outdoor) + 5, "indoor \(Self.meanLuma(indoor)), outdoor \(Self.meanLuma(outdoor))")
        let halfSpread = Self.lumaSpread(half)
        #expect(halfSpread > Self.lumaSpread(before) && halfSpread < Self.lumaSpread(outdoor), "half \(halfSpread)")
        #expect(try Self.pixels("\(copy)/e_improve:indoor:0").pixels == before.pixels)
    }

    /// Mean luma of the opaque pixels whose luma in `reference` lies in `range`, before and after.
    static func meanLuma(_ p: PixelBuffer, where range: ClosedRange<Double>, in reference: PixelBuffer) -> Double {
        let luma = { (q: PixelBuffer, i: Int) in 0.299 * Double(q.pixels[i]) + 0.587 * Double(q.pixels[i + 1]) + 0.114 * Double(q.pixels[i + 2]) }
        var sum = 0.0, count = 0
        for i in stride(from: 0, to: p.pixels.count, by: p.bands) where p.pixels[i + 3] == 255 && range.contains(luma(reference, i)) {
            sum += luma(p, i)
            count += 1
        }
        return sum / Double(max(count, 1))
    }

    /// e_fill_light lifts the shadows (luma 20...70) and leaves the highlights (200+) nearly
    /// alone; a positive bias lifts the midtones (100...150) more than a negative one; hues stay.
    @Test func fillLightLiftsTheShadows() throws {
        let shadows = 20.0...70.0, midtones = 100.0...150.0, highlights = 200.0...255.0
        let plain = Self.plain
        let lit = try Self.pixels("e_fill_light")
        let shadowLift = Self.meanLuma(lit, where: shadows, in: plain) - Self.meanLuma(plain, where: shadows, in: plain)
        let highlightLift = Self.meanLuma(lit, where: highlights, in: plain) - Self.meanLuma(plain, where: highlights, in: plain)
        #expect(shadowLift > 15, "shadows lifted by \(shadowLift)")
        #expect(abs(highlightLift) < 4, "highlights moved by \(highlightLift)")
        let half = try Self.pixels("e_fill_light:50")
        let halfLift = Self.meanLuma(half, where: shadows, in: plain) - Self.meanLuma(plain, where: shadows, in: plain)
        #expect(halfLift > 0.3 * shadowLift && halfLift < 0.7 * shadowLift, "blend 50 lifted by \(halfLift), 100 by \(shadowLift)")
        let midLift = { (chain: String) in Self.meanLuma(try Self.pixels(chain), where: midtones, in: plain) - Self.meanLuma(plain, where: midtones, in: plain) }
        #expect(try midLift("e_fill_light:100:100") > midLift("e_fill_light:100:-100") + 10)
        #expect(abs(Self.meanHueTurn(from: plain, to: lit)) < 3)
        #expect(try Self.pixels("e_fill_light:0:50").pixels == plain.pixels)
    }

    /// e_opacity_threshold leaves only transparent and opaque pixels (the round corners' soft
    /// edge goes), keeps the colour of opaque ones, and a higher level leaves fewer opaque.
    @Test func opacityThresholdMakesAlphaBinary() throws {
        let alphas = { (p: PixelBuffer) in stride(from: 3, to: p.pixels.count, by: p.bands).map { p.pixels[$0] } }
        let plain = alphas(Self.plain)
        #expect(plain.contains { $0 > 0 && $0 < 255 }, "the round corners have a soft edge")
        var opaqueCounts: [Int] = []
        for level in [0, 10, 50, 90, 100] {
            let changed = try Self.pixels("e_opacity_threshold:\(level)")
            let a = alphas(changed)
            #expect(a.allSatisfy { $0 == 0 || $0 == 255 }, "level \(level)")
            opaqueCounts.append(a.filter { $0 == 255 }.count)
            let recoloured = stride(from: 0, to: changed.pixels.count, by: changed.bands).filter { i in
                Self.plain.pixels[i + 3] == 255 && changed.pixels[i..<(i + 4)] != Self.plain.pixels[i..<(i + 4)]
            }
            #expect(recoloured.isEmpty, "level \(level): \(recoloured.count) opaque pixels changed")
        }
        #expect(opaqueCounts[0] == plain.count, "level 0 makes every pixel opaque")
        #expect(opaqueCounts[4] == plain.filter { $0 == 255 }.count, "level 100 keeps only what was opaque")
        #expect(opaqueCounts[1] > opaqueCounts[2] && opaqueCounts[2] > opaqueCounts[3], "\(opaqueCounts)")
    }

    /// The photo padded on white into 200x120 (the photo is 102 px wide in the middle).
    static func padded(_ chain: String?) throws -> PixelBuffer {
        let (_, result) = try Harness.render(photo, "c_pad,w_200,h_120,b_white\(chain.map { "/" + $0 } ?? "")/f_png")
        return try Harness.pixels(result.outputs[0].data)
    }

    /// Share of pixels in columns `xs` (all rows) whose alpha is 255.
    static func opaqueShare(_ p: PixelBuffer, columns xs: Range<Int>) -> Double {
        var opaque = 0
        for y in 0..<p.height { for x in xs where p.bands == 4 ? p.pixels[(y * p.width + x) * 4 + 3] == 255 : true { opaque += 1 } }
        return Double(opaque) / Double(p.height * xs.count)
    }

    /// e_make_transparent clears the white padding (the edges' colour, or co_white) and keeps
    /// the photo; co_black keeps the padding and clears the photo's dark background and
    /// uniform instead; the opaque pixels keep their colour.
    @Test(arguments: [("e_make_transparent", false, 0.9...1), ("e_make_transparent:0,co_white", false, 0.9...1),
                      ("e_make_transparent:20,co_black", true, 0.2...0.9)])
    func makeTransparentClearsTheBackground(chain: String, paddingStays: Bool, photoOpaque: ClosedRange<Double>) throws {
        let plain = try Self.padded(nil)
        let changed = try Self.padded(chain)
        #expect(changed.width == 200 && changed.height == 120 && changed.bands == 4)
        let padding = Self.opaqueShare(changed, columns: 0..<40) + Self.opaqueShare(changed, columns: 160..<200)
        #expect(paddingStays ? padding == 2 : padding == 0, "\(chain): padding opaque share \(padding / 2)")
        #expect(photoOpaque.contains(Self.opaqueShare(changed, columns: 60..<140)), "\(chain): photo opaque share \(Self.opaqueShare(changed, columns: 60..<140))")
        let recoloured = stride(from: 0, to: changed.pixels.count, by: 4).filter { i in
            changed.pixels[i + 3] == 255 && changed.pixels[i..<(i + 3)] != plain.pixels[(i / 4 * plain.bands)..<(i / 4 * plain.bands + 3)]
        }
        #expect(recoloured.isEmpty, "\(chain): \(recoloured.count) opaque pixels changed colour")
    }

    /// e_replace_color turns the photo's predominant colour (or the given one) toward the
    /// target: pixels near it gain red, pixels far from it keep their colour exactly.
    @Test(arguments: ["e_replace_color:red:40", "e_replace_color:red:40:FROM"])
    func replaceColorMovesOnlyColoursNearTheSource(pattern: String) throws {
        let plain = Self.plain
        let dominant = DominantColor.of(plain)
        let chain = pattern.replacingOccurrences(of: "FROM", with: String(dominant.hex.dropFirst(1).prefix(6)))
        let changed = try Self.pixels(chain)
        var nearRed = 0.0, nearRedBefore = 0.0, near = 0, farMoved = 0, far = 0
        for i in stride(from: 0, to: plain.pixels.count, by: 4) where plain.pixels[i + 3] == 255 {
            let (r, g, b) = (Double(plain.pixels[i]), Double(plain.pixels[i + 1]), Double(plain.pixels[i + 2]))
            let d = ((r - Double(dominant.red)) * (r - Double(dominant.red)) + (g - Double(dominant.green)) * (g - Double(dominant.green))
                     + (b - Double(dominant.blue)) * (b - Double(dominant.blue))).squareRoot()
            if d < 12 {
                near += 1
                nearRed += Double(changed.pixels[i]) - (Double(changed.pixels[i + 1]) + Double(changed.pixels[i + 2])) / 2
                nearRedBefore += r - (g + b) / 2
            } else if d > 160 {
                far += 1
                if changed.pixels[i..<(i + 3)] != plain.pixels[i..<(i + 3)] { farMoved += 1 }
            }
        }
        #expect(near > 100 && far > 100, "\(chain): \(near) near, \(far) far (dominant \(dominant.hex))")
        #expect((nearRed - nearRedBefore) / Double(near) > 40, "\(chain): redness near \(dominant.hex) rose by \((nearRed - nearRedBefore) / Double(max(near, 1)))")
        #expect(farMoved == 0, "\(chain): \(farMoved) of \(far) far pixels moved")
    }

    /// Mean |R - G| of opaque pixels: what a red-green deficiency takes away.
    static func redGreenContrast(_ p: PixelBuffer) -> Double {
        var sum = 0.0, count = 0
        for i in stride(from: 0, to: p.pixels.count, by: p.bands) where p.pixels[i + 3] == 255 {
            sum += abs(Double(p.pixels[i]) - Double(p.pixels[i + 1]))
            count += 1
        }
        return sum / Double(count)
    }

    /// e_simulate_colorblind: the red-green dichromacies take most of the red-green contrast
    /// away (the anomaly less), rod monochromacy leaves grey only, tritanopia changes the image;
    /// each keeps the light (mean luma within 12).
    @Test(arguments: [("e_simulate_colorblind", 0.0, 0.55), ("e_simulate_colorblind:protanopia", 0.0, 0.55),
                      ("e_simulate_colorblind:deuteranomaly", 0.4, 0.85), ("e_simulate_colorblind:tritanopia", 0.0, 10.0),
                      ("e_simulate_colorblind:rod_monochromacy", 0.0, 0.02), ("e_simulate_colorblind:cone_monochromacy", 0.05, 0.5)])
    func simulateColorblindTakesTheConfusedContrastAway(chain: String, lowest: Double, highest: Double) throws {
        let changed = try Self.pixels(chain)
        let ratio = Self.redGreenContrast(changed) / Self.redGreenContrast(Self.plain)
        #expect(ratio >= lowest && ratio <= highest, "\(chain): red-green contrast ×\(ratio)")
        #expect(Harness.difference(changed, Self.plain) > 1, "\(chain) changed nothing")
        #expect(abs(Self.meanLuma(changed) - Self.meanLuma(Self.plain)) < 12, "\(chain): mean luma \(Self.meanLuma(changed)) from \(Self.meanLuma(Self.plain))")
    }

    /// e_recolor with a 3x3 matrix swapping green and blue swaps them exactly and keeps red and
    /// alpha; a 4x4 matrix whose alpha row is 0.5 halves the alpha and keeps the colours.
    @Test func recolorAppliesTheMatrix() throws {
        let plain = Self.plain
        let swapped = try Self.pixels("e_recolor:1:0:0:0:0:1:0:1:0")
        let faded = try Self.pixels("e_recolor:1:0:0:0:0:1:0:0:0:0:1:0:0:0:0:0.5")
        var swapErrors = 0, fadeErrors = 0
        for i in stride(from: 0, to: plain.pixels.count, by: 4) {
            let p = plain.pixels[i..<(i + 4)].map(Int.init), s = swapped.pixels[i..<(i + 4)].map(Int.init), f = faded.pixels[i..<(i + 4)].map(Int.init)
            if s != [p[0], p[2], p[1], p[3]] { swapErrors += 1 }
            if abs(f[3] - p[3] / 2) > 1 || (p[3] == 255 && Array(f[0..<3]) != Array(p[0..<3])) { fadeErrors += 1 }
        }
        #expect(swapErrors == 0 && fadeErrors == 0, "\(swapErrors) swapped and \(fadeErrors) faded pixels differ")
        #expect(Harness.mean(swapped, channel: 1) != Harness.mean(plain, channel: 1))
    }

    /// e_ordered_dither leaves every channel of opaque pixels at 0 or 255; the ordered maps keep
    /// each channel's mean light (within 12 levels), which a plain threshold (level 0) does not
    /// have to.
    @Test(arguments: [("e_ordered_dither", false), ("e_ordered_dither:1", true), ("e_ordered_dither:3", true), ("e_ordered_dither:5", true),
                      ("e_ordered_dither:6", true), ("e_ordered_dither:12", true), ("e_ordered_dither:13", true), ("e_ordered_dither:18", true)])
    func orderedDitherLeavesTwoLevelsKeepingTheLight(chain: String, keepsTheMean: Bool) throws {
        let changed = try Self.pixels(chain)
        var others = 0
        for i in stride(from: 0, to: changed.pixels.count, by: 4) where changed.pixels[i + 3] == 255 {
            for c in 0..<3 where changed.pixels[i + c] != 0 && changed.pixels[i + c] != 255 { others += 1 }
        }
        #expect(others == 0, "\(chain): \(others) channel values neither 0 nor 255")
        if keepsTheMean {
            let opaqueMean = { (p: PixelBuffer, c: Int) -> Double in
                let values = stride(from: 0, to: p.pixels.count, by: 4).filter { Self.plain.pixels[$0 + 3] == 255 }.map { Double(p.pixels[$0 + c]) }
                return values.reduce(0, +) / Double(values.count)
            }
            for c in 0..<3 {
                let shift = opaqueMean(changed, c) - opaqueMean(Self.plain, c)
                #expect(abs(shift) < 12, "\(chain): channel \(c) mean moved by \(shift)")
            }
        }
    }

    /// e_assist_colorblind draws rising stripes over reds: red pixels on a stripe get darker,
    /// red pixels off it and pixels with as much red as green stay; a higher strength darkens more. xray leaves greys
    /// and changes reds.
    @Test func assistColorblindStripesTheReds() throws {
        let plain = Self.plain
        let stripes = Masks.stripes(width: plain.width, height: plain.height, rising: true)
        let sum = { (p: PixelBuffer, i: Int) in Int(p.pixels[i]) + Int(p.pixels[i + 1]) + Int(p.pixels[i + 2]) }
        var darkening: [Double] = []
        for chain in ["e_assist_colorblind", "e_assist_colorblind:60"] {
            let changed = try Self.pixels(chain)
            var onStripe = 0, darker = 0, offMoved = 0, greyMoved = 0, drop = 0
            for i in stride(from: 0, to: plain.pixels.count, by: 4) where plain.pixels[i + 3] == 255 {
                let redLead = Int(plain.pixels[i]) - Int(plain.pixels[i + 1])
                if redLead > 60 {
                    if stripes[i / 4] == 255 {
                        onStripe += 1
                        if sum(changed, i) < sum(plain, i) { darker += 1 }
                        drop += sum(plain, i) - sum(changed, i)
                    } else if changed.pixels[i..<(i + 3)] != plain.pixels[i..<(i + 3)] {
                        offMoved += 1
                    }
                } else if redLead == 0 && changed.pixels[i..<(i + 3)] != plain.pixels[i..<(i + 3)] {
                    greyMoved += 1
                }
            }
            #expect(onStripe > 50 && Double(darker) > 0.9 * Double(onStripe), "\(chain): \(darker) of \(onStripe) red stripe pixels darker")
            #expect(offMoved == 0 && greyMoved == 0, "\(chain): \(offMoved) red pixels off the stripes and \(greyMoved) grey ones changed")
            darkening.append(Double(drop) / Double(max(onStripe, 1)))
        }
        #expect(darkening[1] > 2 * darkening[0], "darkening \(darkening)")
        let xray = try Self.pixels("e_assist_colorblind:xray")
        #expect(Harness.difference(xray, plain) > 1)
    }

    /// On a grey photograph (one band, grey ICC profile) every effect runs and keeps the size;
    /// those that change no hue leave it grey, and e_red makes it red.
    @Test(arguments: [("e_gamma:60", true), ("e_hue", true), ("e_brightness_hsb:-40", true), ("e_blackwhite", true),
                      ("e_vibrance:100", true), ("e_unsharp_mask:300", true), ("e_auto_contrast", true), ("e_auto_brightness", true),
                      ("e_auto_color", true), ("e_improve", true), ("e_improve:indoor", true), ("e_fill_light", true),
                      ("e_opacity_threshold", true), ("e_make_transparent:5,co_white", true), ("e_replace_color:red:30:orange", true), ("e_simulate_colorblind:tritanopia", true), ("e_recolor:0.3:0.6:0.1:0.3:0.6:0.1:0.3:0.6:0.1", true), ("e_ordered_dither:5", true), ("e_assist_colorblind:100", true), ("e_assist_colorblind:xray", true), ("e_red:60", false)])
    func greySourcesStayGreyUnlessTheyAreTinted(chain: String, staysGrey: Bool) throws {
        let (_, result) = try Harness.render("formats/jpeg-grayscale-gray-icc.jpg", "c_fit,w_120,h_120/\(chain)/f_png")
        let changed = try Harness.pixels(result.outputs[0].data)
        #expect(changed.width == 120 && changed.height == 80)
        let channel = { (c: Int) in changed.bands >= 3 ? Harness.mean(changed, channel: c) : Harness.mean(changed, channel: 0) }
        if staysGrey {
            #expect(abs(channel(0) - channel(1)) < 1 && abs(channel(1) - channel(2)) < 1, "\(chain): \(channel(0)), \(channel(1)), \(channel(2))")
        } else {
            #expect(channel(0) > channel(1) + 10 && abs(channel(1) - channel(2)) < 1, "\(chain): \(channel(0)), \(channel(1)), \(channel(2))")
        }
    }
}
