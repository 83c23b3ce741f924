import DeriveLanguage

/// How the engine draws each effect the step catalogue alone describes (`Effect.declared`), by
/// its name: a new effect is its declaration in Sources/DeriveLanguage/Model/EffectCatalogue.swift
/// and its case here. `faces` are the faces found in the image (privacy threshold) for an effect
/// whose declaration needs them, else nil.
enum DeclaredEffects {
    static func draw(_ effect: DeclaredEffect, on image: VImage, faces: [Rect]?) throws(DeriveError) -> VImage {
        switch effect.name {
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
