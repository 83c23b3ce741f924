import DeriveLanguage
import Foundation

/// How the engine draws each effect the step catalogue alone describes (`Effect.declared`), by
/// its name: a new effect is its declaration in Sources/DeriveLanguage/Model/EffectCatalogue.swift
/// and its case here. `faces` are the faces found in the image (privacy threshold) for an effect
/// whose declaration needs them, else nil.
enum DeclaredEffects {
    static func draw(_ effect: DeclaredEffect, on image: VImage, faces: [Rect]?) throws(DeriveError) -> VImage {
        let amount = effect.amount?.planned ?? 0
        switch effect.name {
        case "blur":
            // 100 (the default) is a sigma of 5 pixels; 2000 is 100.
            return try image.gaussianBlurred(sigma: max(0.3, Double(amount) / 20))
        case "pixelate":
            let size = amount
            guard size > 1 else { return image }
            return try image.shrunk(by: size).zoomed(by: size).fitted(to: image.size)
        case "sharpen":
            // 100 is libvips' own default slope (m2 = 3) at a one-pixel radius.
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().sharpened(sigma: 1, slope: 3 * Double(amount) / 100).standardised()
            }
        case "grayscale":
            return try image.changingColour { (colour) throws(DeriveError) in try colour.colourspace("b-w").colourspace("srgb") }
        case "sepia":
            let s = Double(amount) / 100
            let sepia = [[0.393, 0.769, 0.189], [0.349, 0.686, 0.168], [0.272, 0.534, 0.131]]
            let matrix = (0..<3).map { r in (0..<3).map { c in (1 - s) * (r == c ? 1 : 0) + s * sepia[r][c] } }
            return try image.changingColour { (colour) throws(DeriveError) in try colour.rgb().recombined(matrix) }
        case "negate":
            return try image.changingColour { (colour) throws(DeriveError) in try colour.inverted() }
        case "brightness":
            let a = 1 + Double(amount) / 100
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.linear(Array(repeating: a, count: colour.bands), Array(repeating: 0, count: colour.bands))
            }
        case "contrast":
            let a = 1 + Double(amount) / 100
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.linear(Array(repeating: a, count: colour.bands), Array(repeating: 128 * (1 - a), count: colour.bands))
            }
        case "saturation":
            // Chroma in LCh scales; -100 leaves only lightness.
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().colourspace("lch").linear([1, 1 + Double(amount) / 100, 1], [0, 0, 0], uchar: false)
                    .colourspace("srgb").cast("uchar")
            }
        case "gamma":
            // Each channel v (0–1) becomes v^(1/g) with g = 1 + level / 100: 0 changes nothing,
            // 150 (g = 2.5) lifts the midtones, -50 (g = 0.5) squares them; black and white stay.
            let exponent = 1 / (1 + Double(amount) / 100)
            return try image.changingColour { (colour) throws(DeriveError) in
                let n = colour.bands
                return try colour.linear(Array(repeating: 1.0 / 255, count: n), Array(repeating: 0, count: n), uchar: false)
                    .raised(to: exponent).linear(Array(repeating: 255, count: n), Array(repeating: 0, count: n))
                    .interpreted(as: colour.interpretation)
            }
        case "hue":
            // The hue angle in LCh turns by 1.8° a level (100 is half a turn), keeping lightness
            // and chroma, so greys stay grey.
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().colourspace("lch").linear([1, 1, 1], [0, 0, 1.8 * Double(amount)], uchar: false)
                    .colourspace("srgb").cast("uchar")
            }
        case "brightness_hsb":
            // HSV's value scales by 1 + level / 100 (clipped at 255), hue and saturation kept.
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().colourspace("hsv").linear([1, 1, 1 + Double(amount) / 100], [0, 0, 0])
                    .interpreted(as: "hsv").colourspace("srgb")
            }
        case "red", "green", "blue":
            // The one channel scales by 1 + level / 100 (clipped at 255); the others stay.
            let channel = effect.name == "red" ? 0 : effect.name == "green" ? 1 : 2
            let scale = (0..<3).map { $0 == channel ? 1 + Double(amount) / 100 : 1 }
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().linear(scale, [0, 0, 0]).interpreted(as: "srgb")
            }
        case "blackwhite":
            // Luminance (libvips' b-w) above threshold % of white becomes white, the rest black.
            let level = 255 * Double(amount) / 100
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.colourspace("b-w").above(level).interpreted(as: "b-w").colourspace("srgb")
            }
        case "vibrance":
            // LCh chroma C becomes C × (1 + s × max(0, 1 - C / 100)), s = strength / 100: muted
            // colours move most, colours of chroma 100 and more not at all; lightness and hue stay.
            let s = Double(amount) / 100
            return try image.changingColour { (colour) throws(DeriveError) in
                let lch = try colour.rgb().colourspace("lch")
                let chroma = try lch.band(1)
                let boost = try chroma.linear([-0.01], [1], uchar: false).clampedAtZero().linear([s], [1], uchar: false)
                return try VImage.bandjoin([try lch.band(0), try chroma.multiplied(by: boost), try lch.band(2)])
                    .interpreted(as: "lch").colourspace("srgb").cast("uchar")
            }
        case "unsharp_mask":
            // in + a x (in - gaussblur(in, sigma 2)), a = strength / 100, on each RGB channel:
            // (1 + a) x in - a x blurred, clipped back to 8 bits.
            let a = Double(amount) / 100
            return try image.changingColour { (colour) throws(DeriveError) in
                let rgb = try colour.rgb()
                let blurred = try rgb.gaussianBlurred(sigma: 2)
                return try rgb.linear([1 + a], [0], uchar: false).added(try blurred.linear([-a], [0], uchar: false))
                    .cast("uchar").interpreted(as: "srgb")
            }
        case "auto_contrast":
            // The luminance's (b-w) 0.5th and 99.5th percentiles over the opaque pixels go to 0
            // and 255 by one linear on every RGB channel; the blend mixes that with the original.
            let b = Double(amount) / 100
            let luma = try image.withoutAlpha().rgb().colourspace("b-w").cast("uchar")
            guard let (lo, hi) = try Effects.opaquePercentiles(of: luma, alpha: try image.alphaBand()), hi > lo else { return image }
            let scale = 255 / (hi - lo)
            let a = b * scale + (1 - b)
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().linear([a], [-b * scale * lo]).interpreted(as: "srgb")
            }
        case "auto_color":
            // Each RGB channel's own 0.5th and 99.5th percentiles over the opaque pixels go to 0
            // and 255, so a cast (one channel that never reaches white or black) goes; a channel
            // with one value stays. The blend mixes that with the original.
            return try image.changingColour { (colour) throws(DeriveError) in
                try Effects.autoLevels(colour.rgb(), alpha: try image.alphaBand(), blend: Double(amount) / 100)
            }
        case "auto_brightness":
            // Each RGB channel v (0–1) becomes v^g, g = ln 0.5 / ln(mean luminance), so the mean
            // luminance (b-w, libvips' avg, weighted by alpha so hidden pixels do not count)
            // moves toward mid-grey (g kept within 1/3...3; black and white stay); mixed with the
            // original by blend %.
            let b = Double(amount) / 100
            let luma = try image.withoutAlpha().rgb().colourspace("b-w")
            let mean: Double
            if let alpha = try image.alphaBand() {
                let coverage = try alpha.average()
                mean = coverage > 0 ? try luma.multiplied(by: alpha).average() / coverage / 255 : 0
            } else {
                mean = try luma.average() / 255
            }
            guard mean > 0, mean < 1 else { return image }
            let g = min(3, max(1.0 / 3, log(0.5) / log(mean)))
            return try image.changingColour { (colour) throws(DeriveError) in
                let rgb = try colour.rgb()
                let curved = try rgb.linear([1.0 / 255], [0], uchar: false).raised(to: g).linear([255 * b], [0], uchar: false)
                return try curved.added(try rgb.linear([1 - b], [0], uchar: false)).cast("uchar").interpreted(as: "srgb")
            }
        case "opacity_threshold":
            // Alpha at or above level % of opaque becomes 255, the rest 0 (level 0: all opaque,
            // 100: only what was fully opaque stays).
            guard let alpha = try image.alphaBand() else { return image }
            return try image.withoutAlpha().joined(with: try alpha.above(255 * Double(amount) / 100 - 0.5))
        case "oil_paint":
            // Each colour channel the median (libvips rank) of an n x n square, n = 1 + 2 x
            // round(strength / 15): 1 (unchanged) at 0, 3 at the default 30, 15 at 100.
            let n = 1 + 2 * Int((Double(amount) / 15).rounded())
            guard n > 1 else { return image }
            return try image.changingColour { (colour) throws(DeriveError) in
                try VipsCall("rank").image("in", colour).int("width", n).int("height", n).int("index", n * n / 2).run().image("out")
            }.inMemory()
        case "ordered_dither":
            // Each RGB channel above the map's threshold (the tile repeated over the image,
            // libvips' replicate) turns 255, else 0; alpha kept.
            guard let (n, thresholds) = DitherMaps.tile(level: amount) else { return image }
            let tile = try VImage.fromPixels(thresholds, width: n, height: n, bands: 1)
            let w = image.width, h = image.height
            let map = try VipsCall("replicate").image("in", tile).int("across", (w + n - 1) / n).int("down", (h + n - 1) / n).run().image("out")
                .extracted(Rect(x: 0, y: 0, width: w, height: h))
            return try image.changingColour { (colour) throws(DeriveError) in
                try VipsCall("relational").image("left", try colour.rgb()).image("right", map).enumeration("relational", "more")
                    .run().image("out").interpreted(as: "srgb")
            }
        case "vignette":
            let mask = try VImage.fromPixels(Masks.vignette(width: image.width, height: image.height, strength: amount),
                                             width: image.width, height: image.height, bands: 1)
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.multiplied(by: mask).linear(Array(repeating: 1.0 / 255, count: colour.bands),
                                                        Array(repeating: 0, count: colour.bands)).interpreted(as: colour.interpretation)
            }
        case "blur_faces", "pixelate_faces":
            // Applied where the faces are, by the runner, which knows them.
            return image
        case "dropshadow":
            guard let cast = EffectGeometry.castShadow(of: .declared(effect), on: image.size) else { return image }
            return try Effects.shadowed(image, cast, color: EffectRules.dropShadowColor, opacity: EffectRules.dropShadowOpacity)
        case "colorize":
            let t = Double(amount) / 100
            let color = effect.color()
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().linear([1 - t, 1 - t, 1 - t], [t * Double(color.red), t * Double(color.green), t * Double(color.blue)])
            }
        case "improve":
            // Auto colour, then auto contrast, then (indoor) a fill light: Derive's reading of
            // Cloudinary's 'adjusts colours, contrast and brightness'; mixed by blend %.
            let rgb = try image.changingColour { (colour) throws(DeriveError) in try colour.rgb() }
            var improved = try Effects.apply(.named("auto_contrast", 100), to: try Effects.apply(.named("auto_color", 100), to: rgb))
            if effect.choice("mode") == "indoor" { improved = try Effects.apply(.named("fill_light", 100), to: improved) }
            return try Effects.mixed(rgb, improved, blend: Double(amount) / 100)
        case "fill_light":
            // Every RGB channel is multiplied by 1 + b × (1 - L)^p, L the luminance (b-w, 0–1),
            // b = blend / 100, p = 2^(1 - bias / 100): black and white stay, dark tones gain up
            // to twice their light; p 2 (bias 0) lifts most at L = 1/3, p 4 (-100) the deepest
            // shadows (L = 1/5), p 1 (100) the midtones (L = 1/2). Hue is kept (one gain for
            // all three channels).
            let b = Double(amount) / 100
            let p = pow(2, 1 - Double(effect.number("bias")) / 100)
            return try image.changingColour { (colour) throws(DeriveError) in
                let rgb = try colour.rgb()
                let gain = try rgb.colourspace("b-w").linear([-1.0 / 255], [1], uchar: false).clampedAtZero()
                    .raised(to: p).linear([b], [1], uchar: false)
                return try rgb.multiplied(by: gain).cast("uchar").interpreted(as: "srgb")
            }
        case "simulate_colorblind":
            // The condition's matrix (DeriveLanguage) on linear RGB (libvips' scrgb), back to sRGB.
            let condition = ColorblindCondition(rawValue: effect.choice("condition")) ?? .deuteranopia
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().colourspace("scrgb").recombined(condition.matrix, uchar: false)
                    .interpreted(as: "scrgb").colourspace("srgb").cast("uchar")
            }
        case "art":
            // The look's affine grade: recomb with the matrix, then the offsets added and the
            // result clipped to 8 bits by linear; alpha kept.
            let (matrix, offset) = (ArtFilter(rawValue: effect.choice("filter")) ?? .incognito).grade
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().recombined(matrix, uchar: false).linear([1, 1, 1], offset).interpreted(as: "srgb")
            }
        case "outline":
            return try Effects.outlined(image, mode: OutlineMode(rawValue: effect.choice("mode")) ?? .outer, width: effect.number("width"),
                                        blur: effect.number("blur"), color: effect.color())
        case "shear":
            return try Effects.sheared(image, x: effect.number("x"), y: effect.number("y"))
        case "noise":
            // Cloudinary's percent of noise: Gaussian grain with a standard deviation of half the
            // level (in levels of 255), the same field on every colour band so that it is grain of
            // lightness, not of colour, from a fixed seed so that a retried job writes the same bytes.
            let level = effect.number("level")
            guard level > 0 else { return image }
            return try image.changingColour { (colour) throws(DeriveError) in
                let grain = try VipsCall("gaussnoise").int("width", colour.width).int("height", colour.height)
                    .double("mean", 0).double("sigma", Double(level) / 2).int("seed", 41).run().image("out")
                return try colour.added(grain).cast("uchar").interpreted(as: colour.interpretation)
            }
        case "redeye":
            // The detector gives faces as boxes, not eye landmarks: each eye is a box a quarter of
            // the face wide and a fifth high, about its line two fifths down, three and seven
            // tenths across. Inside it a pixel whose red exceeds 1.5 times the mean of its green
            // and blue by 20 takes that mean as its red, so a red pupil turns dark and skin stays.
            var result = image
            for face in faces ?? [] {
                let (w, h) = (max(2, face.width / 4), max(2, face.height / 5))
                for centre in [face.x + face.width * 3 / 10, face.x + face.width * 7 / 10] {
                    let box = Rect(x: centre - w / 2, y: face.y + face.height * 2 / 5 - h / 2, width: w, height: h)
                    guard let eye = FaceGeometry.clipped(box, to: image.frameSize) else { continue }
                    let fixed = try image.extracted(eye).changingColour { (colour) throws(DeriveError) in
                        let rgb = try colour.rgb()
                        let (g, b) = (try rgb.band(1), try rgb.band(2))
                        let mean = try g.added(b).linear([0.5], [0], uchar: false)
                        let red = try rgb.band(0).added(try mean.linear([-1.5], [-20], uchar: false)).above(0)
                        return try VImage.bandjoin([try mean.cast("uchar"), g, b]).interpreted(as: "srgb").blended(with: rgb, mask: red)
                    }
                    result = try result.inserted(try fixed.inMemory(), at: (eye.x, eye.y))
                }
            }
            return result
        default:
            throw DeriveError(.internalError, "e_\(effect.name) is declared in the catalogue but has no drawing in DeclaredEffects")
        }
    }
}
