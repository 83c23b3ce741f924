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
    /// `:palette_<colour>_<colour>...`: each colour of the gradient is the palette's nearest to
    /// the one read from the image (with `_contrast`, the palette's farthest from it).
    public var palette: [Color] = []

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
        if !palette.isEmpty { parts.append(AutoPalette.text(palette)) }
        return parts.joined(separator: ":")
    }

    /// A colour read from the image, as the mode uses it.
    public func pick(_ c: Color) -> Color {
        AutoPalette.pick(c, palette: palette, contrast: contrast)
    }
}

/// b_auto's `palette_<colour>_<colour>...` (Cloudinary: the padding's colours restricted to a
/// palette): the palette colour nearest the one read from the image, or with a `_contrast`
/// mode the farthest (in RGB); without a palette, the colour itself, or black or white.
public enum AutoPalette {
    public static func pick(_ c: Color, palette: [Color], contrast: Bool) -> Color {
        guard !palette.isEmpty else { return contrast ? AutoPadColor.contrasting(c) : c }
        func distance(_ p: Color) -> Int {
            let r = Int(p.red) - Int(c.red), g = Int(p.green) - Int(c.green), b = Int(p.blue) - Int(c.blue)
            return r * r + g * g + b * b
        }
        // Ties go to the colour written first.
        if contrast {
            return palette.enumerated().max { (distance($0.element), -$0.offset) < (distance($1.element), -$1.offset) }!.element
        }
        return palette.enumerated().min { (distance($0.element), $0.offset) < (distance($1.element), $1.offset) }!.element
    }

    /// `palette_red_f00`: CSS names, or hex digits without `#` (`f00`, `ff0000`).
    public static func parse(_ text: String) -> [Color]? {
        guard text.hasPrefix("palette_") else { return nil }
        let names = text.dropFirst(8).split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        let colors = names.compactMap { Color.parse($0) ?? Color.parse("#" + $0) }
        guard !names.isEmpty, names.count <= 16, colors.count == names.count else { return nil }
        return colors
    }

    public static func text(_ palette: [Color]) -> String {
        "palette_" + palette.map { $0.hex.dropFirst() }.joined(separator: "_")
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
