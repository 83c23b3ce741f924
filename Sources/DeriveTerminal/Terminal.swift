import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one of the process's streams is connected to, read once per command: whether a person
/// is watching it (a terminal), how wide it is, and whether colour is wanted there.
public struct Terminal: Sendable, Equatable {
    /// A terminal, not a pipe or a file: progress and tables are for it; scripts get JSON.
    public var isTerminal: Bool
    /// Columns; 80 when the stream is not a terminal and `COLUMNS` does not say.
    public var width: Int
    /// Lines on the screen, when the stream is a terminal that says.
    public var height: Int?
    /// Colour is used only on a terminal, and never when `NO_COLOR` is set (no-color.org) or
    /// `TERM` is `dumb`.
    public var colours: Bool

    public init(isTerminal: Bool, width: Int = 80, height: Int? = nil, colours: Bool = false) {
        self.isTerminal = isTerminal
        self.width = max(20, width)
        self.height = height.map { max(5, $0) }
        self.colours = colours
    }

    /// The stream `descriptor` (1 standard output, 2 standard error) as this process sees it.
    public init(descriptor: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let isTerminal = isatty(descriptor) == 1
        let size = Self.size(of: descriptor, environment: environment)
        self.init(isTerminal: isTerminal, width: size.width, height: size.height,
                  colours: Self.wantsColour(isTerminal: isTerminal, environment: environment))
    }

    public static var standardOutput: Terminal { Terminal(descriptor: 1) }
    public static var standardError: Terminal { Terminal(descriptor: 2) }

    /// Colour only for a person at a terminal that can show it, unless they said not to.
    public static func wantsColour(isTerminal: Bool, environment: [String: String]) -> Bool {
        isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
    }

    /// The terminal's own size when the stream is one, else `COLUMNS` and `LINES`, else 80
    /// columns and no height.
    static func size(of descriptor: Int32, environment: [String: String]) -> (width: Int, height: Int?) {
        var size = winsize()
        if isatty(descriptor) == 1, ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return (Int(size.ws_col), size.ws_row > 0 ? Int(size.ws_row) : nil)
        }
        let columns = environment["COLUMNS"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
        let lines = environment["LINES"].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil }
        return (columns ?? 80, lines)
    }
}
