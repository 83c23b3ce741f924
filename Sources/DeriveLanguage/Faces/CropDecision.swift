/// Which window a content-aware crop took and why, for the output's report: the rectangle in
/// the pixels of the image the step received (of `input` size), the gravity that decided it,
/// and the fallback used when that gravity had nothing to go on.
public struct CropDecision: Sendable, Hashable {
    public enum Basis: String, Sendable, Hashable {
        /// The largest face (`g_face`).
        case face
        /// Every face that fits (`g_faces`, and `auto` when faces were found).
        case faces
        /// libvips' attention strategy.
        case attention
        case entropy
        case center
    }

    public var rect: Rect
    public var input: Size
    public var basis: Basis
    /// Set when the gravity asked for faces and none were found (or detection is off).
    public var fallback: Basis?
    /// Faces inside the window, of those the step's image had.
    public var facesKept: Int
    public var facesSeen: Int

    public init(rect: Rect, input: Size, basis: Basis, fallback: Basis? = nil, facesKept: Int = 0, facesSeen: Int = 0) {
        self.rect = rect
        self.input = input
        self.basis = basis
        self.fallback = fallback
        self.facesKept = facesKept
        self.facesSeen = facesSeen
    }

    public var json: JSONValue {
        var members: [JSONMember] = [
            JSONMember(key: "gravity", value: .string(basis.rawValue)),
            JSONMember(key: "rect", value: .object(["x": .int(rect.x), "y": .int(rect.y), "width": .int(rect.width), "height": .int(rect.height)])),
            JSONMember(key: "of", value: .object(["width": .int(input.width), "height": .int(input.height)])),
            JSONMember(key: "facesSeen", value: .int(facesSeen)),
            JSONMember(key: "facesKept", value: .int(facesKept)),
        ]
        if let fallback { members.insert(JSONMember(key: "fallback", value: .string(fallback.rawValue)), at: 1) }
        return .object(members)
    }
}
