/// Where a crop window, a padded image or an overlay is anchored.
public enum Gravity: Sendable, Hashable {
    case compass(Compass)
    /// Content-aware: libvips attention (`auto`) or entropy; resolved by the engine on pixels.
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
        return nil
    }

    /// Every gravity token Derive supports, for error messages.
    static let supportedTokens: [String] = Compass.allCases.map(\.rawValue) + SmartCrop.allCases.map(\.rawValue)

    /// Cloudinary gravities that need a detector Derive does not have.
    static func isDetectorGravity(_ token: String) -> Bool {
        let lower = token.lowercased()
        return lower.hasPrefix("face") || lower.hasPrefix("auto:") || lower.hasPrefix("adv_")
            || lower.hasPrefix("ocr") || lower == "custom" || lower.hasPrefix("custom:") || lower.contains("face")
            || lower == "body" || lower == "subject" || lower == "liquid"
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

/// Content-aware crop strategies libvips provides (`vips_smartcrop`).
public enum SmartCrop: String, Sendable, Hashable, CaseIterable {
    case auto
    case entropy
}
