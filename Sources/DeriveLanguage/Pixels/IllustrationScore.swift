/// Cloudinary's `ils`, the likelihood that an image is an illustration rather than a photograph
/// (0 to 1), as Derive defines it: the share of the source's preview (the 32-pixel one the engine
/// reads for dominant colours) that its 8 most frequent colours cover, colours counted at 6 bits
/// a channel (so that JPEG's noise around flat areas does not split a colour). Drawings, logos,
/// charts and screenshots are made of a few flat colours and score high; photographs, whose
/// colours change from pixel to pixel, score low. On the test fixtures: photographs 0.05 to 0.23,
/// drawings 0.56 to 0.90 (Docs/language.md). It is the distinction q_auto makes when it
/// counts a graphic's colours, made once on the source.
public enum IllustrationScore {
    /// How many of the most frequent colours count.
    public static let colours = 8
    /// Bits kept of each channel.
    public static let bits = 6

    public static func of(_ preview: PixelBuffer) -> Double {
        guard preview.width > 0, preview.height > 0 else { return 0 }
        var counts: [Int: Int] = [:]
        var pixels = 0
        let shift = 8 - bits
        for y in 0..<preview.height {
            for x in 0..<preview.width {
                // Fully transparent pixels have no colour to count.
                if preview.alpha(x, y) == 0 { continue }
                let (r, g, b) = preview.rgb(x, y)
                counts[(r >> shift) << 16 | (g >> shift) << 8 | (b >> shift), default: 0] += 1
                pixels += 1
            }
        }
        guard pixels > 0 else { return 0 }
        let covered = counts.values.sorted(by: >).prefix(colours).reduce(0, +)
        return Decimal6.quantize(Double(covered) / Double(pixels))
    }
}
