/// Colour where it helps a person read a state (done, failed, waiting), as ANSI SGR codes, or
/// nothing at all when the terminal should not get them.
public struct Style: Sendable, Equatable {
    public enum Colour: String, Sendable, CaseIterable {
        case red = "31", green = "32", yellow = "33", cyan = "36", bold = "1", dim = "2"
    }

    public var enabled: Bool

    public init(enabled: Bool) { self.enabled = enabled }

    public init(_ terminal: Terminal) { enabled = terminal.colours }

    public static let plain = Style(enabled: false)

    public func paint(_ text: String, _ colour: Colour?) -> String {
        guard enabled, let colour, !text.isEmpty else { return text }
        return "\u{1B}[\(colour.rawValue)m\(text)\u{1B}[0m"
    }

    public func failure(_ text: String) -> String { paint(text, .red) }
    public func success(_ text: String) -> String { paint(text, .green) }
    public func waiting(_ text: String) -> String { paint(text, .yellow) }
    public func quiet(_ text: String) -> String { paint(text, .dim) }
}

extension String {
    /// The columns the text takes on a terminal: its characters without colour codes.
    public var visibleWidth: Int { withoutEscapes.count }

    /// The text without ANSI escape sequences (`ESC [ ... letter`).
    public var withoutEscapes: String {
        guard contains("\u{1B}") else { return self }
        var result = "", inEscape = false
        for scalar in unicodeScalars {
            if inEscape {
                if (0x40...0x7E).contains(scalar.value) && scalar != "[" { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// At most `width` characters: the middle of a long path or name becomes `…`, keeping its
    /// start and its end (the file name), as a person scans it.
    public func truncatedInMiddle(to width: Int) -> String {
        guard count > width else { return self }
        guard width > 1 else { return String(prefix(width)) }
        let tail = (width - 1) / 2 + (width - 1) % 2, head = width - 1 - tail
        return String(prefix(head)) + "…" + String(suffix(tail))
    }

    /// At most `width` characters, cut at the end with `…`.
    public func truncated(to width: Int) -> String {
        guard count > width else { return self }
        guard width > 1 else { return String(prefix(width)) }
        return String(prefix(width - 1)) + "…"
    }
}
