/// An sRGB colour with alpha, 8 bits per channel.
///
/// Accepted spellings: CSS names (`red`, `transparent`), `#rgb`, `#rrggbb`, `#rrggbbaa`, and
/// Cloudinary's `rgb:rrggbb[aa]`. The canonical spelling is `#rrggbb`, or `#rrggbbaa` when not
/// opaque.
public struct Color: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let white = Color(red: 255, green: 255, blue: 255)
    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let gray = Color(red: 128, green: 128, blue: 128)
    public static let blue = Color(red: 0, green: 0, blue: 255)
    /// Fully transparent white: flattening it onto nothing gives white, which is what people
    /// expect when a transparent pad ends up in a format without alpha.
    public static let transparent = Color(red: 255, green: 255, blue: 255, alpha: 0)

    public var isOpaque: Bool { alpha == 255 }

    /// `#rrggbb` or `#rrggbbaa`.
    public var hex: String {
        "#" + Hex.string(isOpaque ? [red, green, blue] : [red, green, blue, alpha])
    }

    /// Cloudinary's spelling, `rgb:rrggbb[aa]`.
    public var cloudinaryText: String { "rgb:" + hex.dropFirst() }

    public var description: String { hex }

    public static func parse(_ text: String) -> Color? {
        let lower = text.lowercased()
        if lower == "transparent" { return .transparent }
        if let rgb = named[lower] { return Color(rgb24: rgb) }
        if lower.hasPrefix("#") { return parseHex(lower.dropFirst()) }
        if lower.hasPrefix("rgb:") { return parseHex(lower.dropFirst(4)) }
        return nil
    }

    /// The nearest CSS name to a misspelt colour, for "did you mean" hints.
    static var allNames: [String] { ["transparent"] + named.keys.sorted() }

    init(rgb24: UInt32) {
        self.init(red: UInt8(rgb24 >> 16 & 0xFF), green: UInt8(rgb24 >> 8 & 0xFF), blue: UInt8(rgb24 & 0xFF))
    }

    private static func parseHex(_ digits: Substring) -> Color? {
        guard digits.allSatisfy({ $0.isHexDigit && $0.isASCII }) else { return nil }
        let values = digits.compactMap { $0.hexDigitValue }.map(UInt8.init)
        switch values.count {
        case 3: return Color(red: values[0] * 17, green: values[1] * 17, blue: values[2] * 17)
        case 4: return Color(red: values[0] * 17, green: values[1] * 17, blue: values[2] * 17, alpha: values[3] * 17)
        case 6: return Color(red: values[0] << 4 | values[1], green: values[2] << 4 | values[3], blue: values[4] << 4 | values[5])
        case 8:
            return Color(red: values[0] << 4 | values[1], green: values[2] << 4 | values[3],
                         blue: values[4] << 4 | values[5], alpha: values[6] << 4 | values[7])
        default: return nil
        }
    }
}
