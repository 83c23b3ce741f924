import DeriveTerminal
import Foundation
import Synchronization
import Testing

@Suite struct ProgressLineTests {
    let state = ProgressState(label: "deriving", unit: "sources", done: 50, total: 200,
                              counts: [.init("failed", 2, colour: .red, hiddenAtZero: true)], current: "IMG_0050.jpg")

    @Test func saysCountsRateAndTimeLeft() {
        let line = ProgressLine.running(state, elapsed: 10, width: 120)
        // A quarter of a 22-column bar.
        #expect(line.hasPrefix("deriving [====>                 ]  "))
        #expect(line.contains("50/200 sources"))
        #expect(line.contains("5.0/s"))
        // 150 left at 5 a second: 30 seconds.
        #expect(line.contains("0:30 left"))
        #expect(line.contains("2 failed"))
        #expect(line.hasSuffix("IMG_0050.jpg"))
    }

    @Test func neverAsWideAsTheTerminal() {
        var long = state
        long.current = String(repeating: "very-long-folder-name/", count: 10) + "photo.jpg"
        for width in [20, 40, 60, 80, 120] {
            let line = ProgressLine.running(long, elapsed: 3, width: width)
            #expect(line.visibleWidth <= width - 1, "\(width): \(line)")
        }
        let wide = ProgressLine.running(long, elapsed: 3, width: 100)
        #expect(wide.contains("…") && wide.hasSuffix("photo.jpg"))
    }

    @Test func theBarFillsWithTheWork() {
        #expect(ProgressLine.running(ProgressState(label: "x", unit: "y", done: 0, total: 4), elapsed: 1, width: 200).contains("[" + String(repeating: " ", count: 28) + "]"))
        #expect(ProgressLine.running(ProgressState(label: "x", unit: "y", done: 4, total: 4), elapsed: 1, width: 200).contains("[" + String(repeating: "=", count: 28) + "]"))
        #expect(ProgressLine.running(ProgressState(label: "x", unit: "y", done: 2, total: 4), elapsed: 1, width: 200)
            .contains("[" + String(repeating: "=", count: 13) + ">" + String(repeating: " ", count: 14) + "]"))
    }

    @Test func withoutATotalItCountsAndKeepsTime() {
        let live = ProgressState(label: "working", unit: "done", done: 12,
                                 counts: [.init("failed", 0, colour: .red), .init("waiting", 30, colour: .yellow)])
        let line = ProgressLine.running(live, elapsed: 65, width: 100)
        #expect(line == "working  12 done  0.18/s  1:05  0 failed  30 waiting")
    }

    @Test func failuresHiddenUntilThereAreSome() {
        var none = state
        none[count: "failed"] = 0
        #expect(!ProgressLine.running(none, elapsed: 1, width: 120).contains("failed"))
    }

    @Test func theLastLineSaysWhatWasDone() {
        var done = state
        done.done = 200
        #expect(ProgressLine.finished(done, verb: "derived", elapsed: 40) == "derived 200 sources in 40.0 s (5.0/s), 2 failed")
        #expect(ProgressLine.finished(state, verb: "derived", elapsed: 40) == "derived 50/200 sources in 40.0 s (1.2/s), 2 failed")
    }

    @Test func colourOnlyWhenWanted() {
        let coloured = ProgressLine.running(state, elapsed: 10, width: 120, style: Style(enabled: true))
        #expect(coloured.contains("\u{1B}[31m2 failed\u{1B}[0m"))
        #expect(coloured.withoutEscapes == ProgressLine.running(state, elapsed: 10, width: 120))
        #expect(!ProgressLine.running(state, elapsed: 10, width: 120).contains("\u{1B}"))
        // Cut short, a colour is closed.
        let cut = ProgressLine.running(state, elapsed: 10, width: 72, style: Style(enabled: true))
        #expect(cut.visibleWidth <= 71)
        #expect(cut.components(separatedBy: "\u{1B}[").count % 2 == 1)
    }
}

@Suite struct ProgressReporterTests {
    final class Written: Sendable {
        let text = Mutex("")
        var value: String { text.withLock { $0 } }
        var write: @Sendable (String) -> Void { { line in self.text.withLock { $0 += line } } }
    }

    let terminal = Terminal(isTerminal: true, width: 80, colours: false)

    @Test func redrawsInPlaceAndLeavesOneLine() {
        let written = Written()
        let progress = ProgressReporter(ProgressState(label: "submitting", unit: "jobs", total: 3), terminal: terminal, write: written.write, redrawEvery: nil)
        progress.update { $0.done = 1 }
        Thread.sleep(forTimeInterval: 0.06)
        progress.update { $0.done = 2 }
        progress.note("derive submit: b.jpg: not found")
        progress.update { $0.done = 3 }
        progress.finish(verb: "submitted")
        let text = written.value
        // Every draw starts by going back and clearing the line; the note sits on a line of its own.
        #expect(text.hasPrefix("\r\u{1B}[2Ksubmitting ["))
        #expect(text.contains("\r\u{1B}[2Kderive submit: b.jpg: not found\n\r\u{1B}[2Ksubmitting ["))
        #expect(text.hasSuffix("\r\u{1B}[2Ksubmitted 3 jobs in " + text.split(separator: "in ").last!))
        #expect(text.filter { $0 == "\n" }.count == 2)
    }

    @Test func nothingButNotesWhenNotATerminalOrQuiet() {
        for (terminal, quiet) in [(Terminal(isTerminal: false), false), (terminal, true)] {
            let written = Written()
            let progress = ProgressReporter(ProgressState(label: "deriving", unit: "sources", total: 2), quiet: quiet, terminal: terminal,
                                            write: written.write, redrawEvery: 0.01)
            #expect(!progress.shows)
            progress.update { $0.done = 1 }
            progress.note("derive run: x.jpg: corrupt_image")
            Thread.sleep(forTimeInterval: 0.05)
            let line = progress.finish(verb: "derived")
            #expect(written.value == "derive run: x.jpg: corrupt_image\n")
            #expect(line.hasPrefix("derived 1/2 sources in "))
        }
    }

    @Test func theTickerRedrawsBetweenUpdatesAndStopsAtTheEnd() {
        let written = Written()
        let progress = ProgressReporter(ProgressState(label: "working", unit: "done"), terminal: terminal, write: written.write, redrawEvery: 0.02)
        Thread.sleep(forTimeInterval: 0.2)
        progress.finish(verb: "worked")
        let draws = written.value.components(separatedBy: "\r\u{1B}[2Kworking").count - 1
        #expect(draws >= 3)
        let after = written.value
        Thread.sleep(forTimeInterval: 0.1)
        #expect(written.value == after)
    }
}
