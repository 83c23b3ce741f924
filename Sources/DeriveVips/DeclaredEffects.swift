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
        default:
            throw DeriveError(.internalError, "e_\(effect.name) is declared in the catalogue but has no drawing in DeclaredEffects")
        }
    }
}
