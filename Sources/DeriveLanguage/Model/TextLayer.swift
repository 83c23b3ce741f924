/// `l_text:<font>_<size>[_<style>...]:<text>` with `co_<color>`.
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
    /// `_left`, `_center`, `_right`, `_justify` (`_start` and `_end` read as left and right):
    /// how lines shorter than the widest sit; nil is left.
    public var alignment: TextAlignment?
    /// `_line_spacing_<px>`: extra pixels between lines (negative tightens).
    public var lineSpacing: Int?
    /// `_stroke` with `bo_<width>px_solid_<colour>` beside `l_text`: an outline that many pixels
    /// wide around the letters, beneath their fill.
    public var stroke: TextStroke?
    /// `_antialias_none` turns it off: every pixel fully inked or not at all.
    public var antialias = true
    /// `fl_text_no_trim`: a transparent margin around the text, which is otherwise cut to its ink.
    public var noTrim = false

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

/// How the lines of a text layer line up.
public enum TextAlignment: String, Sendable, Hashable, CaseIterable {
    case left, center, right, justify
}

/// An outline around a text's letters (`_stroke` with `bo_<width>px_solid_<colour>`).
public struct TextStroke: Sendable, Hashable {
    public var width: Int
    public var color: Color

    public init(width: Int, color: Color) {
        self.width = width
        self.color = color
    }
}

extension TextLayer {
    /// The margin `fl_text_no_trim` leaves around the ink: Cloudinary documents only "a small
    /// amount of padding"; Derive leaves a tenth of the font size (at least 1 px) on every side.
    public var untrimmedMargin: Int { max(1, (size + 5) / 10) }
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
