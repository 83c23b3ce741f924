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
    /// Set when the window could not keep the largest face whole: the parts of it kept (eyes,
    /// mouth, chin, in the order crops prefer them); empty when none of them is.
    public var faceParts: [FacePart]?

    public init(rect: Rect, input: Size, basis: Basis, fallback: Basis? = nil, facesKept: Int = 0, facesSeen: Int = 0,
                faceParts: [FacePart]? = nil) {
        self.faceParts = faceParts
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
        if let faceParts {
            members.append(JSONMember(key: "faceCut", value: .object([
                JSONMember(key: "kept", value: .array(faceParts.map { .string($0.rawValue) })),
                JSONMember(key: "lost", value: .array(FacePart.allCases.filter { !faceParts.contains($0) }.map { .string($0.rawValue) })),
            ])))
        }
        return .object(members)
    }

    /// One line for the output's `choices` when the window cut the largest face; nil otherwise.
    public var sentence: String? {
        guard let faceParts else { return nil }
        let lost = FacePart.allCases.filter { !faceParts.contains($0) }.map(\.rawValue)
        let what = "g_\(basis.rawValue) could not keep the whole face in \(rect.width)x\(rect.height)"
        if faceParts.isEmpty { return "\(what): kept none of its eyes, mouth and chin" }
        let kept = "kept its " + Self.list(faceParts.map(\.rawValue))
        return lost.isEmpty ? "\(what): \(kept) (the forehead or sides cut)" : "\(what): \(kept), cut its \(Self.list(lost))"
    }

    private static func list(_ words: [String]) -> String {
        words.count <= 1 ? words.joined() : words.dropLast().joined(separator: ", ") + " and " + words.last!
    }

    /// The same decision, saying which parts of the largest of `faces` it kept when it could
    /// not keep that face whole.
    public func notingCut(of faces: [Rect]) -> CropDecision {
        guard basis == .face || basis == .faces, fallback == nil, let largest = FaceGeometry.largest(faces),
              !FaceGeometry.contains(rect, largest) else { return self }
        var copy = self
        copy.faceParts = FaceGeometry.partsKept(of: largest, in: rect)
        return copy
    }
}
