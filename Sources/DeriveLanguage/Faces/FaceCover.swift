/// What one privacy effect (`e_blur_faces`, `e_pixelate_faces`) did, for the output's report:
/// how many faces it covered, and how many of those scored below the threshold crops use (found
/// only because privacy effects take the lower one).
public struct FaceCover: Sendable, Hashable {
    /// The effect's name without `e_`: `pixelate_faces` or `blur_faces`.
    public var effect: String
    public var covered: Int
    public var belowCropThreshold: Int

    public init(effect: String, covered: Int, belowCropThreshold: Int) {
        self.effect = effect
        self.covered = covered
        self.belowCropThreshold = belowCropThreshold
    }

    public var json: JSONValue {
        .object([
            JSONMember(key: "effect", value: .string(effect)),
            JSONMember(key: "covered", value: .int(covered)),
            JSONMember(key: "belowCropThreshold", value: .int(belowCropThreshold)),
        ])
    }

    /// One line for the output's `choices`.
    public var sentence: String {
        let faces = covered == 1 ? "1 face" : "\(covered) faces"
        return belowCropThreshold == 0 ? "e_\(effect) covered \(faces)"
            : "e_\(effect) covered \(faces) (\(belowCropThreshold) below the crops' threshold)"
    }
}

/// A part of a face a crop keeps when it cannot keep the whole face, in the order crops
/// prefer them.
public enum FacePart: String, Sendable, Hashable, CaseIterable {
    case eyes, mouth, chin

    /// How far down a box that runs from the forehead to the chin the part's line lies.
    var depth: Double {
        switch self {
        case .eyes: 1.0 / 3
        case .mouth: 0.75
        case .chin: 1
        }
    }
}
