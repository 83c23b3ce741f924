import Foundation
import Synchronization

/// A progress line on standard error while a long command runs: redrawn in place (carriage
/// return, clear the line) as the work advances and every quarter second between, so the rate
/// and the time left move while one big item takes its time; lines said meanwhile (a failure,
/// a log line) go above it; when the work ends one line stays, saying what was done.
///
/// Only for a person: when standard error is not a terminal, or `--quiet` was given, it draws
/// nothing and `note` writes plain lines, so logs and pipes never see a carriage return.
public final class ProgressReporter: Sendable {
    /// Whether the line is drawn at all.
    public let shows: Bool
    private let width: Int
    public let style: Style
    private let write: @Sendable (String) -> Void
    private let started = Date()

    private struct Inner {
        var state: ProgressState
        var lastDraw: Date?
        var drawn = false
        var finished = false
    }

    private let inner: Mutex<Inner>

    /// Shows the line when `terminal` (standard error's) is one and the user did not ask for
    /// quiet. `redrawEvery` nil draws only on updates (tests).
    public init(_ state: ProgressState, quiet: Bool = false, terminal: Terminal = .standardError,
                write: @escaping @Sendable (String) -> Void = ProgressReporter.standardError, redrawEvery: Double? = 0.25) {
        shows = !quiet && terminal.isTerminal
        width = terminal.width
        style = Style(terminal)
        self.write = write
        inner = Mutex(Inner(state: state))
        if shows, let interval = redrawEvery {
            let thread = Thread { [self] in self.tick(every: interval) }
            thread.name = "derive-progress"
            thread.start()
        }
    }

    public static let standardError: @Sendable (String) -> Void = { text in
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }

    /// The state now.
    public var state: ProgressState { inner.withLock { $0.state } }

    /// Changes the state and redraws (at most every 50 ms: a list of ten thousand does not
    /// write ten thousand lines).
    public func update(_ change: (inout ProgressState) -> Void) {
        inner.withLock { inner in
            change(&inner.state)
            guard shows, !inner.finished else { return }
            let now = Date()
            if let last = inner.lastDraw, now.timeIntervalSince(last) < 0.05 { return }
            draw(&inner, at: now)
        }
    }

    /// A line for the person above the progress line (a failure, a log line), or on its own
    /// when no line is drawn. `text` has no newline at its end.
    public func note(_ text: String) {
        inner.withLock { inner in
            guard shows, inner.drawn, !inner.finished else {
                write(text + "\n")
                return
            }
            write("\r\u{1B}[2K" + text + "\n")
            draw(&inner, at: Date())
        }
    }

    /// Ends the line: it is replaced by what was done (`derived 200 sources in 48.2 s (4.1/s)`),
    /// which stays. Returns that line, for a caller that says it some other way when nothing
    /// was drawn. Later calls do nothing.
    @discardableResult
    public func finish(verb: String) -> String {
        finish { state, elapsed in ProgressLine.finished(state, verb: verb, elapsed: elapsed, style: style) }
    }

    /// Ends the line with a last line of the caller's, from the state and the seconds elapsed.
    @discardableResult
    public func finish(_ line: (ProgressState, Double) -> String) -> String {
        inner.withLock { inner in
            let text = line(inner.state, Date().timeIntervalSince(started))
            guard !inner.finished else { return text }
            inner.finished = true
            if shows { write("\r\u{1B}[2K" + text + "\n") }
            return text
        }
    }

    /// Seconds since the reporter was made.
    public var elapsed: Double { Date().timeIntervalSince(started) }

    /// Takes the line away without a last line (the command failed and says why instead).
    public func clear() {
        inner.withLock { inner in
            guard !inner.finished else { return }
            inner.finished = true
            if shows && inner.drawn { write("\r\u{1B}[2K") }
        }
    }

    private func draw(_ inner: inout Inner, at now: Date) {
        let line = ProgressLine.running(inner.state, elapsed: now.timeIntervalSince(started), width: width, style: style)
        write("\r\u{1B}[2K" + line)
        inner.drawn = true
        inner.lastDraw = now
    }

    /// Redraws between updates until finished; the lock keeps it from drawing after the last line.
    private func tick(every interval: Double) {
        while true {
            Thread.sleep(forTimeInterval: interval)
            let over = inner.withLock { inner -> Bool in
                guard !inner.finished else { return true }
                draw(&inner, at: Date())
                return false
            }
            if over { return }
        }
    }
}
