/// Columns of text padded to their widest cell, numbers to the right, fitted to a terminal's
/// width by shortening the one column that can give (a path: its middle goes first).
public struct TextTable: Sendable {
    public enum Alignment: Sendable { case left, right }

    public struct Column: Sendable {
        public var title: String
        public var alignment: Alignment
        /// This column is shortened (in its middle) when the table is wider than the terminal.
        public var shrinks: Bool

        public init(_ title: String, _ alignment: Alignment = .left, shrinks: Bool = false) {
            self.title = title
            self.alignment = alignment
            self.shrinks = shrinks
        }
    }

    /// A cell: its text, and the colour it is painted in after padding.
    public struct Cell: Sendable, ExpressibleByStringLiteral {
        public var text: String
        public var colour: Style.Colour?

        public init(_ text: String, _ colour: Style.Colour? = nil) {
            self.text = text
            self.colour = colour
        }

        public init(stringLiteral text: String) { self.init(text) }
    }

    public var columns: [Column]
    public var rows: [[Cell]] = []

    public init(_ columns: [Column]) { self.columns = columns }

    public mutating func add(_ cells: [Cell]) { rows.append(cells) }

    /// The lines, the header first (bold), two spaces between columns, none wider than `width`
    /// when the shrinking column can give enough; no trailing spaces.
    public func lines(width: Int = .max, style: Style = .plain) -> [String] {
        var widths = columns.indices.map { index in
            rows.reduce(columns[index].title.count) { max($0, index < $1.count ? $1[index].text.count : 0) }
        }
        let total = widths.reduce(0, +) + 2 * max(0, columns.count - 1)
        if total > width, let shrinking = columns.firstIndex(where: \.shrinks) {
            widths[shrinking] = max(columns[shrinking].title.count, 12, widths[shrinking] - (total - width))
        }
        let header = columns.map { Cell($0.title, .bold) }
        return ([header] + rows).map { cells in
            var line = ""
            for (index, column) in columns.enumerated() {
                let cell = index < cells.count ? cells[index] : Cell("")
                let text = column.shrinks ? cell.text.truncatedInMiddle(to: widths[index]) : cell.text
                let pad = String(repeating: " ", count: max(0, widths[index] - text.count))
                let last = index == columns.count - 1
                let padded = column.alignment == .right ? pad + style.paint(text, cell.colour) : style.paint(text, cell.colour) + (last ? "" : pad)
                line += (index == 0 ? "" : "  ") + padded
            }
            return String(line.reversed().drop { $0 == " " }.reversed())
        }
    }
}
