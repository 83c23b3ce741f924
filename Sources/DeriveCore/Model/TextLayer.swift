/// `l_text:<font>_<size>[_bold][_italic]:<text>` with `co_<color>`.
public struct TextLayer: Sendable, Hashable {
    /// Literal text and `$(name)` variables, which the planner writes in before the engine
    /// renders the text. Adjacent literals are always joined, so one text has one spelling.
    public var parts: [TextPart] {
        didSet { parts = TextPart.joined(parts) }
    }
    public var font: String
    public var size: Int
    public var bold: Bool
    public var italic: Bool
    public var color: Color
    /// Wraps the text into lines no wider than this many pixels (`c_fit,w_<n>` beside `l_text`);
    /// nil keeps it on one line (or the lines its `%0A` breaks make).
    public var width: Int?
    /// `_underline`, `_strikethrough` and `_letter_spacing_<px>` in the style: a line under or
    /// through the text, and extra space (pixels, negative tightens) between letters.
    public var underline = false
    public var strikethrough = false
    public var letterSpacing: Int?

    public init(text: String, font: String = "sans", size: Int = 32, bold: Bool = false, italic: Bool = false,
                color: Color = .black, width: Int? = nil) {
        self.parts = TextPart.joined([.literal(text)])
        self.font = font
        self.size = size
        self.bold = bold
        self.italic = italic
        self.color = color
        self.width = width
    }
}

extension TextLayer {
    /// The text as the engine renders it: the literal parts, with any variable not yet written
    /// in shown as `$(name)`.
    public var text: String {
        get { parts.map { part in
            switch part {
            case .literal(let t): t
            case .variable(let name): "$(\(name))"
            }
        }.joined() }
        set { parts = TextPart.joined([.literal(newValue)]) }
    }

    /// The variables the text names.
    public var variableNames: [String] {
        parts.compactMap { if case .variable(let name) = $0 { name } else { nil } }
    }
}

/// A piece of a text layer's text.
public enum TextPart: Sendable, Hashable {
    case literal(String)
    /// `$(name)` in `l_text`: the variable's value, as text.
    case variable(String)

    /// Adjacent literals joined, empty ones dropped.
    static func joined(_ parts: [TextPart]) -> [TextPart] {
        var out: [TextPart] = []
        for part in parts {
            if case .literal(let t) = part {
                if t.isEmpty { continue }
                if case .literal(let previous)? = out.last {
                    out[out.count - 1] = .literal(previous + t)
                    continue
                }
            }
            out.append(part)
        }
        return out
    }
}
