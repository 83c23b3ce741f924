import DeriveTerminal
import Testing

@Suite struct TerminalTests {
    @Test(arguments: [
        (true, [:], true), (false, [:], false), (true, ["NO_COLOR": "1"], false), (true, ["NO_COLOR": ""], true),
        (true, ["TERM": "dumb"], false), (false, ["TERM": "xterm-256color"], false),
    ] as [(Bool, [String: String], Bool)])
    func colourOnlyOnATerminalThatWantsIt(isTerminal: Bool, environment: [String: String], colours: Bool) {
        #expect(Terminal.wantsColour(isTerminal: isTerminal, environment: environment) == colours)
    }

    @Test func aPipeIsNoTerminalAndGetsNoColour() {
        // The test's own standard output is a pipe under `swift test`; COLUMNS is its width then.
        let terminal = Terminal(descriptor: -1, environment: ["COLUMNS": "132", "LINES": "50"])
        #expect(!terminal.isTerminal && !terminal.colours)
        #expect(terminal.width == 132 && terminal.height == 50)
        #expect(Terminal(descriptor: -1, environment: [:]).width == 80)
    }

    @Test func stylePaintsOnlyWhenEnabled() {
        #expect(Style(enabled: true).failure("failed") == "\u{1B}[31mfailed\u{1B}[0m")
        #expect(Style.plain.failure("failed") == "failed")
        #expect(Style(enabled: true).failure("failed").visibleWidth == 6)
    }

    @Test func shorteningKeepsTheEndOfAPath() {
        #expect("derived/IMG_0001/thumb.webp".truncatedInMiddle(to: 16) == "derived…umb.webp")
        #expect("short".truncatedInMiddle(to: 16) == "short")
        #expect("a long sentence".truncated(to: 7) == "a long…")
    }

    @Test(arguments: [
        (0, "0 B"), (812, "812 B"), (48_300, "48.3 kB"), (1_234_567, "1.23 MB"), (3_400_000_000, "3.40 GB"),
    ] as [(Int, String)])
    func bytes(count: Int, text: String) {
        #expect(Units.bytes(count) == text)
    }

    @Test(arguments: [(0.42, "0.42 s"), (8.1, "8.10 s"), (48.2, "48.2 s"), (65, "1m05s"), (7440, "2h04m")] as [(Double, String)])
    func seconds(value: Double, text: String) {
        #expect(Units.seconds(value) == text)
    }

    @Test func tablesPadAlignAndShrinkTheirPathColumn() {
        var table = TextTable([.init("output"), .init("bytes", .right), .init("written to", shrinks: true)])
        table.add(["thumb", "4.1 kB", "derived/photo/thumb.webp"])
        table.add(["full", "812 kB", "derived/photo/full-with-a-long-name.jpg"])
        #expect(table.lines() == [
            "output   bytes  written to",
            "thumb   4.1 kB  derived/photo/thumb.webp",
            "full    812 kB  derived/photo/full-with-a-long-name.jpg",
        ])
        let narrow = table.lines(width: 40)
        #expect(narrow.allSatisfy { $0.count <= 40 }, "\(narrow)")
        #expect(narrow[2].hasSuffix("name.jpg") && narrow[2].contains("…"))
        // Colour goes on after padding: the columns line up the same.
        #expect(table.lines(style: Style(enabled: true)).map(\.withoutEscapes) == table.lines())
    }
}
