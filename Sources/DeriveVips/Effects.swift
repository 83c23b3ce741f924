import DeriveLanguage
import Foundation

/// The colour and filter effects. Amounts follow Cloudinary's ranges (evaluated by the planner
/// when written as expressions); how each maps to libvips is written beside it, and alpha is
/// left as it was unless the effect is spatial.
enum Effects {
    /// Each effect on `image`, by its group: this switch says which function draws which
    /// effect (and the compiler that none is left out); each group's own switch stays short.
    static func apply(_ effect: Effect, to image: VImage) throws(DeriveError) -> VImage {
        switch effect {
        case .tint:
            return try adjustment(effect, image)
        case .makeTransparent, .replaceColor, .recolor, .assistColorblind, .tintGradient:
            return try colourChange(effect, image)
        case .theme(let photosensitivity, let color):
            return try theme(image, to: color, photosensitivity: photosensitivity.planned)
        case .cartoonify, .vectorize:
            return try artistic(effect, image)
        case .gradientFade, .distort, .shadow, .blurRegion, .pixelateRegion:
            return try placed(effect, image)
        case .declared(let d):
            return try DeclaredEffects.draw(d, on: image, faces: nil)
        }
    }

    /// Blur, sharpness, tone and the colour channels: one formula each, no analysis of the picture.
    static func adjustment(_ effect: Effect, _ image: VImage) throws(DeriveError) -> VImage {
        switch effect {
        case .tint(let amount, let color):
            // Lightness carried by the tint colour, mixed in by `amount` percent.
            let t = Double(amount.planned) / 100
            return try image.changingColour { (colour) throws(DeriveError) in
                let rgb = try colour.rgb()
                let tinted = try rgb.colourspace("b-w").linear([Double(color.red) / 255 * t, Double(color.green) / 255 * t, Double(color.blue) / 255 * t],
                                                                [0, 0, 0], uchar: false)
                return try rgb.linear([1 - t, 1 - t, 1 - t], [0, 0, 0], uchar: false).added(tinted).cast("uchar").interpreted(as: "srgb")
            }
        default:
            throw DeriveError(.internalError, "effect \(effect.kind) was sent to the wrong group")
        }
    }

    /// Colours replaced, made transparent or remapped for colour blindness.
    static func colourChange(_ effect: Effect, _ image: VImage) throws(DeriveError) -> VImage {
        switch effect {
        case .tintGradient(let amount, let gradient):
            // The luminance (libvips' b-w), equalised over the whole range when asked
            // (hist_equal), looked up in the gradient's 256-entry table (maplut), mixed into the
            // image by `amount` percent as the one-colour tint is.
            let t = Double(amount.planned) / 100
            let table = try VImage.fromPixels(gradient.lookupTable(), width: 256, height: 1, bands: 3).interpreted(as: "srgb")
            return try image.changingColour { (colour) throws(DeriveError) in
                let rgb = try colour.rgb()
                var luminance = try rgb.colourspace("b-w").cast("uchar")
                if gradient.equalize { luminance = try VipsCall("hist_equal").image("in", luminance).run().image("out") }
                let mapped = try VipsCall("maplut").image("in", luminance).image("lut", table).run().image("out")
                return try rgb.linear([1 - t, 1 - t, 1 - t], [0, 0, 0], uchar: false)
                    .added(try mapped.linear([t, t, t], [0, 0, 0], uchar: false)).cast("uchar").interpreted(as: "srgb")
            }
        case .makeTransparent(let tolerance, let color):
            // Pixels within tolerance (CIE76 distance in Lab, libvips' dE76) of the colour, or of
            // the edges' median colour, lose their alpha.
            let rgb = try image.withoutAlpha().rgb()
            let edge: Color? = color == nil ? EdgeColor.of(try edgePixels(of: image)) : nil
            guard let key = color ?? edge else { return image }
            let distance = try rgb.distance(to: key)
            let keep = try distance.above(Double(tolerance.planned))
            var alpha = keep
            if let a = try image.alphaBand() { alpha = try a.multiplied(by: keep).linear([1.0 / 255], [0]) }
            return try image.withoutAlpha().joined(with: alpha)
        case .replaceColor(let tolerance, let to, let from):
            // Pixels near `from` (the predominant colour, DominantColor on a 32 px preview, when
            // not given) move in LCh by to − from (lightness and chroma added, hue turned), so
            // shading stays; the weight is 1 within half the tolerance (CIE76 in Lab) and falls
            // to 0 at the tolerance.
            let source: Color
            if let from { source = from } else {
                source = DominantColor.of(try image.resized(to: VipsEngine.previewSize(image.frameSize)).cast("uchar").pixelBuffer())
            }
            guard source != .transparent else { return image }
            let t = max(0.5, Double(tolerance.planned))
            return try image.changingColour { (colour) throws(DeriveError) in
                let rgb = try colour.rgb()
                let (l0, c0, h0) = try rgb.values(of: source, in: "lch"), (l1, c1, h1) = try rgb.values(of: to, in: "lch")
                let lch = try rgb.colourspace("lch").linear([1, 1, 1], [l1 - l0, c1 - c0, h1 - h0], uchar: false)
                let mapped = try VImage.bandjoin([try lch.band(0), try lch.band(1).clampedAtZero(), try lch.band(2)])
                    .interpreted(as: "lch").colourspace("srgb").cast("uchar")
                let weight = try rgb.distance(to: source).linear([-510 / t], [510], uchar: false).cast("uchar")
                return try mapped.blended(with: rgb, mask: weight).interpreted(as: "srgb")
            }
        case .recolor(let matrix):
            // libvips' recomb on the 8-bit values: 3x3 on RGB (alpha kept), 4x4 on RGBA (an
            // image without alpha gains an opaque one first).
            let n = matrix.count == 16 ? 4 : 3
            let rows = (0..<n).map { r in Array(matrix[(r * n)..<(r * n + n)]) }
            if n == 3 {
                return try image.changingColour { (colour) throws(DeriveError) in try colour.rgb().recombined(rows).interpreted(as: "srgb") }
            }
            let rgba = try image.changingColour { (colour) throws(DeriveError) in try colour.rgb() }.withAlpha()
            return try rgba.recombined(rows).interpreted(as: "srgb")
        case .assistColorblind(_, xray: true):
            // Daltonised for deuteranopia (ColorblindCondition.daltonisation) on linear RGB.
            return try image.changingColour { (colour) throws(DeriveError) in
                try colour.rgb().colourspace("scrgb").recombined(ColorblindCondition.deuteranopia.daltonisation, uchar: false)
                    .interpreted(as: "scrgb").colourspace("srgb").cast("uchar")
            }
        case .assistColorblind(let strength, xray: false):
            // Stripes rising over reds (R > G) and falling over greens (G > R) darken the pixel
            // by min(1, 4 × strength/100 × |R − G| / 255): the more red or green, and the
            // stronger, the darker; greys get none.
            let k = 4 * Double(strength.planned) / 100 / 255
            let rising = try stripes(width: image.width, height: image.height, rising: true)
            let falling = try stripes(width: image.width, height: image.height, rising: false)
            return try image.changingColour { (colour) throws(DeriveError) in
                let rgb = try colour.rgb()
                let redness = try rgb.band(0).linear([1], [0], uchar: false).added(try rgb.band(1).linear([-1], [0], uchar: false))
                // Darkening 0–255 where red (resp. green) leads, on the stripes only.
                let red = try redness.linear([255 * k], [0], uchar: false).cast("uchar").multiplied(by: rising).linear([1.0 / 255], [0], uchar: false)
                let green = try redness.linear([-255 * k], [0], uchar: false).cast("uchar").multiplied(by: falling).linear([1.0 / 255], [0], uchar: false)
                let keep = try red.added(green).linear([-1.0 / 255], [1], uchar: false)
                return try rgb.multiplied(by: keep).cast("uchar").interpreted(as: "srgb")
            }
        default:
            throw DeriveError(.internalError, "effect \(effect.kind) was sent to the wrong group")
        }
    }

    /// The painterly filters: oil paint, cartoon, posterised vectors, the art filters, ordered dither.
    static func artistic(_ effect: Effect, _ image: VImage) throws(DeriveError) -> VImage {
        switch effect {
        case .cartoonify(let lines, let colors):
            // Flat colours: a light blur, then each channel rounded to `levels` steps (libvips'
            // round); bw does so on the luminance. Lines: where the luminance's Sobel edge
            // (0–255) is above 20 + 100 × (1 − strength/100), black, widened by a 3x3 maximum
            // (rank) from strength 70. Strength 0 draws no lines.
            let s = lines.planned
            let levels = colors.levels(lineStrength: s)
            return try image.changingColour { (colour) throws(DeriveError) in
                var flat = try colour.rgb().gaussianBlurred(sigma: 1).cast("uchar")
                if colors == .blackwhite { flat = try flat.colourspace("b-w") }
                if let levels {
                    let step = 255 / Double(levels - 1)
                    flat = try VipsCall("round").image("in", flat.linear([1 / step], [0], uchar: false)).enumeration("round", "rint").run().image("out")
                        .linear([step], [0])
                }
                if colors == .blackwhite { flat = try flat.interpreted(as: "b-w").colourspace("srgb") }
                flat = try flat.interpreted(as: "srgb")
                guard s > 0 else { return flat }
                var edges = try VipsCall("sobel").image("in", colour.rgb().colourspace("b-w")).run().image("out")
                    .cast("uchar").above(20 + 100 * (1 - Double(s) / 100))
                if s >= 70 { edges = try VipsCall("rank").image("in", edges).int("width", 3).int("height", 3).int("index", 8).run().image("out") }
                return try flat.constant(values: [0, 0, 0]).interpreted(as: "srgb").blended(with: flat, mask: edges)
            }
        case .vectorize(let colors, _):
            // Speckles smoothed by a 5x5 median (libvips' rank; Cloudinary's default despeckle is
            // 2 px), then each channel rounded to Vectorize.levels steps.
            let step = 255 / Double(Vectorize.levels(colors: colors.planned) - 1)
            return try image.changingColour { (colour) throws(DeriveError) in
                let smooth = try VipsCall("rank").image("in", colour.rgb()).int("width", 5).int("height", 5).int("index", 12).run().image("out")
                return try VipsCall("round").image("in", smooth.linear([1 / step], [0], uchar: false)).enumeration("round", "rint").run().image("out")
                    .linear([step], [0]).interpreted(as: "srgb")
            }
        default:
            throw DeriveError(.internalError, "effect \(effect.kind) was sent to the wrong group")
        }
    }

    /// Effects with a geometry (fades, outlines, shears, distortions, shadows), regions and faces, and the vignette: what the other groups leave.
    static func placed(_ effect: Effect, _ image: VImage) throws(DeriveError) -> VImage {
        switch effect {
        case .gradientFade(let strength, let edges, let x, let y):
            return try faded(image, strength: strength.planned, symmetric: edges != .one, x: x, y: y)
        case .distort(let distortion):
            return try distorted(image, distortion)
        case .shadow(let strength, let color, _, _):
            guard let cast = EffectGeometry.castShadow(of: effect, on: image.size) else { return image }
            return try shadowed(image, cast, color: color, opacity: Double(strength.planned) / 100 * Double(color.alpha) / 255)
        case .blurRegion(let strength, let region), .pixelateRegion(let strength, let region):
            let cover: Effect = .named(effect.kind == .blurRegion ? "blur" : "pixelate", strength)
            guard let region else { return try apply(cover, to: image) }
            guard let rect = region.rect(in: image.frameSize) else { return image }
            return try image.inserted(try apply(cover, to: try image.extracted(rect).inMemory()), at: (rect.x, rect.y))
        default:
            throw DeriveError(.internalError, "effect \(effect.kind) was sent to the wrong group")
        }
    }
}

extension Effects {
    /// The 0.5th and 99.5th percentiles of one 8-bit band over the opaque pixels (alpha above
    /// 127), or nil when none is opaque. Transparent pixels keep colours nobody sees (the
    /// corners r_max cuts), so for the low percentile they are set to 255 and for the high one
    /// to 0 (libvips' percent), and the percentages rescaled by the opaque share.
    static func opaquePercentiles(of band: VImage, alpha: VImage?) throws(DeriveError) -> (Double, Double)? {
        guard let alpha else { return (Double(try band.percentile(0.5)), Double(try band.percentile(99.5))) }
        let opaque = try alpha.above(127)
        let hidden = 1 - (try opaque.average()) / 255
        guard hidden < 1 else { return nil }
        let hiddenWhite = try band.added(try opaque.linear([-1], [255], uchar: false)).cast("uchar")
        let hiddenBlack = try band.multiplied(by: try opaque.linear([1.0 / 255], [0], uchar: false)).cast("uchar")
        return (Double(try hiddenWhite.percentile(0.5 * (1 - hidden))),
                Double(try hiddenBlack.percentile(min(100, 100 * hidden + 99.5 * (1 - hidden)))))
    }

    /// Each of the three bands of `rgb` stretched from its own opaque percentiles to 0...255,
    /// mixed with the original by `blend` (0–1) in the same linear.
    static func autoLevels(_ rgb: VImage, alpha: VImage?, blend b: Double) throws(DeriveError) -> VImage {
        var scales: [Double] = [], offsets: [Double] = []
        for c in 0..<3 {
            let band = try rgb.band(c).cast("uchar")
            if let (lo, hi) = try opaquePercentiles(of: band, alpha: alpha), hi > lo {
                let scale = 255 / (hi - lo)
                scales.append(b * scale + (1 - b))
                offsets.append(-b * scale * lo)
            } else {
                scales.append(1)
                offsets.append(0)
            }
        }
        return try rgb.linear(scales, offsets).interpreted(as: "srgb")
    }

    /// `original` × (1 - blend) + `changed` × blend on every band (alpha included: both carry
    /// the same), for effects computed whole and then blended.
    static func mixed(_ original: VImage, _ changed: VImage, blend b: Double) throws(DeriveError) -> VImage {
        guard b < 1 else { return changed }
        let n = original.bands
        return try original.linear(Array(repeating: 1 - b, count: n), Array(repeating: 0, count: n), uchar: false)
            .added(try changed.linear(Array(repeating: b, count: n), Array(repeating: 0, count: n), uchar: false))
            .cast("uchar").interpreted(as: changed.interpretation)
    }
}

extension Effects {
    /// Masks.stripes drawn lazily by libvips (xyz, remainder_const, relational_const), so a large
    /// image needs no mask in memory: 255 where (x ± y) mod `period` < period / 2.
    static func stripes(width w: Int, height h: Int, period: Int = 8, rising: Bool) throws(DeriveError) -> VImage {
        let xy = try VipsCall("xyz").int("width", w).int("height", h).run().image("out")
        let y = try xy.band(1)
        let diagonal = try xy.band(0).added(rising ? y : try y.linear([-1], [Double(period * h)], uchar: false))
        let phase = try VipsCall("remainder_const").image("in", diagonal).doubles("c", [Double(period)]).run().image("out")
        return try VipsCall("relational_const").image("in", phase).enumeration("relational", "less")
            .doubles("c", [Double(period / 2)]).run().image("out")
    }

    /// e_theme: the page (`ThemeMask`, found on a working copy at most `themeWorkingSide` pixels
    /// long) moved in Lab from its background colour (the working copy's predominant one,
    /// DominantColor) to `color`: a and b shifted by the difference, lightness shifted too, or
    /// mirrored about the two backgrounds' mean when they lie on either side of L 50 (light page
    /// to dark and back), so text keeps its contrast with the page. Photographs and panels stay;
    /// where they meet the page, only the background's own pixels change.
    static let themeWorkingSide = 1024

    static func theme(_ image: VImage, to color: Color, photosensitivity: Int) throws(DeriveError) -> VImage {
        // The working copy (alpha kept, so transparent pixels are no one's background): the
        // background is its predominant colour, read at this size because a small preview
        // averages text into its page.
        let factor = max(1, (max(image.width, image.height) + themeWorkingSide - 1) / themeWorkingSide)
        let working = try (factor > 1 ? image.shrunk(by: factor) : image).cast("uchar").pixelBuffer()
        let background = DominantColor.of(working)
        guard background != .transparent else { return image }
        return try image.changingColour { (colour) throws(DeriveError) in
            let rgb = try colour.rgb()
            let (lb, ab, bb) = try rgb.values(of: background, in: "lab"), (lt, at, bt) = try rgb.values(of: color, in: "lab")
            let mirrored = (lb > 50) != (lt > 50)
            let themed = try rgb.colourspace("lab")
                .linear([mirrored ? -1 : 1, 1, 1], [mirrored ? lt + lb : lt - lb, at - ab, bt - bb], uchar: false)
                .interpreted(as: "lab").colourspace("srgb").cast("uchar")
            if photosensitivity <= 0 { return themed }
            let cells = ThemeMask.cells(of: working, background: background, photosensitivity: photosensitivity)
            if cells.pixels.allSatisfy({ $0 == 255 }) { return themed }
            if cells.pixels.allSatisfy({ $0 == 0 }) { return rgb }
            // Each cell covers cell × factor pixels of the image (the last ones partly): the page's
            // cells whole, the edge cells' pixels within 4 (CIE76) of the background colour.
            let side = ThemeMask.cell * factor
            // The working copy is the image shrunk and rounded, so the cells may fall a few
            // pixels short of its right or bottom edge: the last cells reach to it.
            let zoomed = try VImage.fromPixels(cells.pixels, width: cells.width, height: cells.height, bands: 1).zoomed(by: side)
            let grid = try VipsCall("embed").image("in", zoomed).int("x", 0).int("y", 0)
                .int("width", max(rgb.width, zoomed.width)).int("height", max(rgb.height, zoomed.height))
                .enumeration("extend", "copy").run().image("out")
                .extracted(Rect(x: 0, y: 0, width: rgb.width, height: rgb.height))
            let whole = try grid.above(Double(ThemeMask.edge))
            let edge = try VipsCall("relational_const").image("in", grid).enumeration("relational", "equal")
                .doubles("c", [Double(ThemeMask.edge)]).run().image("out")
            let background = try rgb.distance(to: background).linear([-1], [4], uchar: false).above(0)
            let edgeBackground = try VipsCall("boolean").image("left", edge).image("right", background).enumeration("boolean", "and").run().image("out")
            let mask = try VipsCall("boolean").image("left", whole).image("right", edgeBackground).enumeration("boolean", "or").run().image("out")
            return try themed.blended(with: rgb, mask: mask).interpreted(as: "srgb")
        }
    }

    /// The outermost ring of pixels, as one row.
    static func edgePixels(of image: VImage) throws(DeriveError) -> PixelBuffer {
        let w = image.width, h = image.pageHeight
        let strips = [Rect(x: 0, y: 0, width: w, height: 1), Rect(x: 0, y: h - 1, width: w, height: 1),
                      Rect(x: 0, y: 0, width: 1, height: h), Rect(x: w - 1, y: 0, width: 1, height: h)]
        var pixels: [UInt8] = []
        for strip in strips { pixels += try image.extracted(strip).cast("uchar").pixelBuffer().pixels }
        return PixelBuffer(width: pixels.count / image.bands, height: 1, bands: image.bands, pixels: pixels)
    }
}

extension VImage {
    /// The CIE76 distance in Lab (libvips' dE76) of every pixel of this RGB image from `color`.
    func distance(to color: Color) throws(DeriveError) -> VImage {
        try VipsCall("dE76").image("left", try colourspace("lab")).image("right", try lab(of: color)).run().image("out")
    }

    /// `color` as a plain Lab image of this size.
    private func lab(of color: Color) throws(DeriveError) -> VImage {
        try constant(values: [Double(color.red), Double(color.green), Double(color.blue)]).interpreted(as: "srgb").colourspace("lab")
    }

    /// `color`'s three values in a libvips colour space (`lab`, `lch`: hue in degrees), as
    /// libvips converts it.
    func values(of color: Color, in space: String) throws(DeriveError) -> (Double, Double, Double) {
        let one = try extracted(Rect(x: 0, y: 0, width: 1, height: 1))
        let converted = try one.constant(values: [Double(color.red), Double(color.green), Double(color.blue)]).interpreted(as: "srgb").colourspace(space)
        return (try converted.band(0).average(), try converted.band(1).average(), try converted.band(2).average())
    }
}

extension VImage {
    /// Three colour bands (grey images are expanded), for effects defined on RGB.
    func rgb() throws(DeriveError) -> VImage {
        bands >= 3 ? self : try colourspace("srgb")
    }

    /// Centred on a canvas of exactly `canvas`, cut or padded with transparency.
    func centred(on canvas: Size) throws(DeriveError) -> VImage {
        if size == canvas { return self }
        let x = (canvas.width - width) / 2, y = (canvas.height - height) / 2
        let inside = try extracted(Rect(x: max(0, -x), y: max(0, -y), width: min(canvas.width, width), height: min(canvas.height, height)))
        return try inside.embedded(at: (max(0, x), max(0, y)), canvas: canvas, background: .transparent)
    }
}
