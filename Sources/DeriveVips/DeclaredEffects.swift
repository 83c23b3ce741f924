import DeriveLanguage

/// How the engine draws each effect the step catalogue alone describes (`Effect.declared`), by
/// its name: a new effect is its declaration in Sources/DeriveLanguage/Model/EffectCatalogue.swift
/// and its case here. `faces` are the faces found in the image (privacy threshold) for an effect
/// whose declaration needs them, else nil.
enum DeclaredEffects {
    static func draw(_ effect: DeclaredEffect, on image: VImage, faces: [Rect]?) throws(DeriveError) -> VImage {
        switch effect.name {
        default:
            throw DeriveError(.internalError, "e_\(effect.name) is declared in the catalogue but has no drawing in DeclaredEffects")
        }
    }
}
