/// `b_auto:<source>_gradient[_contrast][:<colours>][:<direction>]`: the padding is a gradient
/// through colours taken from the image, in order along the direction (Cloudinary: "a padding
/// gradient fade effect using the predominant colors in the border of the image / in the image").
public struct AutoGradient: Sendable, Hashable {
    /// Where the colours come from: the image's border pixels, or all of it.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        case border, predominant
    }

    public var source: Source
    /// Black or white for each colour, whichever contrasts with it more (as b_auto's
    /// `_contrast` modes).
    public var contrast: Bool
    /// How many colours the gradient goes through: 2 (Cloudinary's default) or 4.
    public var colors: Int
    public var direction: GradientDirection

    public static let colorCounts = [2, 4]
    public static let defaultColors = 2

    public init(source: Source, contrast: Bool = false, colors: Int = AutoGradient.defaultColors, direction: GradientDirection = .horizontal) {
        self.source = source
        self.contrast = contrast
        self.colors = colors
        self.direction = direction
    }

    /// The mode's name: `border_gradient`, `predominant_gradient_contrast`...
    public var mode: String { source.rawValue + "_gradient" + (contrast ? "_contrast" : "") }

    /// The mode names Cloudinary has, for parsing.
    public static func parse(mode: String) -> AutoGradient? {
        for source in Source.allCases {
            if mode == source.rawValue + "_gradient" { return AutoGradient(source: source) }
            if mode == source.rawValue + "_gradient_contrast" { return AutoGradient(source: source, contrast: true) }
        }
        return nil
    }

    /// `auto:border_gradient`, `auto:predominant_gradient_contrast:4`, `auto:border_gradient:2:vertical`:
    /// defaults left out from the end.
    public var cloudinaryText: String {
        var parts = ["auto", mode]
        if direction != .horizontal {
            parts += [String(colors), direction.rawValue]
        } else if colors != Self.defaultColors {
            parts.append(String(colors))
        }
        return parts.joined(separator: ":")
    }
}

/// The way a b_auto gradient runs: left to right, top to bottom, top-left to bottom-right
/// (`diagonal_desc`) or bottom-left to top-right (`diagonal_asc`).
public enum GradientDirection: String, Sendable, Hashable, CaseIterable {
    case horizontal, vertical
    case diagonalDesc = "diagonal_desc"
    case diagonalAsc = "diagonal_asc"

    /// How far along the gradient (0 at its start, 1 at its end) the point (x, y) of a
    /// width × height area is, x and y from 0 to 1.
    public func position(x: Double, y: Double) -> Double {
        switch self {
        case .horizontal: x
        case .vertical: y
        case .diagonalDesc: (x + y) / 2
        case .diagonalAsc: (x + 1 - y) / 2
        }
    }
}
