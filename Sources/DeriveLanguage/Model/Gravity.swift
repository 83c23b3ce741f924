/// Where a crop window, a padded image or an overlay is anchored.
public enum Gravity: Sendable, Hashable {
    case compass(Compass)
    /// Content-aware: faces, libvips attention (`auto`, which keeps faces too) or entropy;
    /// resolved by the engine on the pixels.
    case smart(SmartCrop)
    /// A focal point in the image the step receives: fractions (0...1) or pixels.
    case focus(x: Length, y: Length)

    public static let center = Gravity.compass(.center)

    /// The spelling shared by JSON and Cloudinary (`north_east`, `auto`); a focus point is
    /// written as an object in JSON and as `g_xy_center,x_…,y_…` in strings.
    public var token: String? {
        switch self {
        case .compass(let c): c.rawValue
        case .smart(let s): s.rawValue
        case .focus: nil
        }
    }

    static func parseToken(_ token: String) -> Gravity? {
        if let compass = Compass(rawValue: token) { return .compass(compass) }
        if let smart = SmartCrop(rawValue: token) { return .smart(smart) }
        // Cloudinary's "auto, giving priority to faces" is what faces:auto does.
        if token == "auto:faces" { return .smart(.facesAuto) }
        return nil
    }

    /// Whether the engine must find faces to resolve this gravity.
    public var needsFaces: Bool {
        if case .smart(let s) = self { return s.needsFaces }
        return false
    }

    /// Every gravity token Derive supports, for error messages.
    static let supportedTokens: [String] = Compass.allCases.map(\.rawValue) + SmartCrop.allCases.map(\.rawValue)

    /// Cloudinary gravities that need an object, text or body detector (or an add-on) that
    /// Derive does not have. Faces it has.
    static func isDetectorGravity(_ token: String) -> Bool {
        let lower = token.lowercased()
        let object = lower.split(separator: ":").first.map(String.init) ?? lower
        return lower.hasPrefix("auto:") || lower.hasPrefix("adv_") || lower.hasPrefix("ocr") || lower == "custom"
            || lower.hasPrefix("custom:") || lower.contains("face") || lower == "body" || lower == "subject" || lower == "liquid"
            || CloudinaryVocabulary.objectGravities.contains(object)
    }
}

/// The nine compass points. Offsets point away from the anchored edge, as in Cloudinary: with
/// `east` a positive x moves left, with `south` a positive y moves up.
public enum Compass: String, Sendable, Hashable, CaseIterable {
    case center
    case north
    case northEast = "north_east"
    case east
    case southEast = "south_east"
    case south
    case southWest = "south_west"
    case west
    case northWest = "north_west"

    /// -1 anchors to the left/top edge, 0 centres, +1 anchors to the right/bottom edge.
    var horizontal: Int {
        switch self {
        case .northWest, .west, .southWest: -1
        case .north, .center, .south: 0
        case .northEast, .east, .southEast: 1
        }
    }

    var vertical: Int {
        switch self {
        case .northWest, .north, .northEast: -1
        case .west, .center, .east: 0
        case .southWest, .south, .southEast: 1
        }
    }
}

/// Content-aware gravities, decided by the engine on the pixels: libvips' attention and
/// entropy strategies (`vips_smartcrop`), and Cloudinary's face gravities. `face` is the largest
/// face and `faces` the box around all of them; the suffix says what happens when there is no
/// face: the centre (also for the plain forms) or `auto`.
public enum SmartCrop: String, Sendable, Hashable, CaseIterable {
    /// Attention: keeps every face that fits, then chooses the rest by saliency.
    case auto
    case entropy
    case face
    case faces
    case faceCenter = "face:center"
    case facesCenter = "faces:center"
    case faceAuto = "face:auto"
    case facesAuto = "faces:auto"

    /// Which faces a face gravity targets; nil for attention and entropy.
    public var faceTarget: FaceTarget? {
        switch self {
        case .face, .faceCenter, .faceAuto: .largest
        case .faces, .facesCenter, .facesAuto: .all
        case .auto, .entropy: nil
        }
    }

    /// What a face gravity does when the image has no face.
    public var fallback: SmartCrop? {
        switch self {
        case .face, .faces, .faceCenter, .facesCenter: nil
        case .faceAuto, .facesAuto: .auto
        case .auto, .entropy: nil
        }
    }

    /// `auto` keeps faces as well, so it needs the detector too; entropy does not.
    public var needsFaces: Bool { self != .entropy }
}

/// Which faces a face gravity is about.
public enum FaceTarget: String, Sendable, Hashable {
    /// The largest face (`g_face`).
    case largest
    /// The box around every face (`g_faces`).
    case all
}
