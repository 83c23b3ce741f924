import Foundation

/// A real terminal for tests of what a person sees: a detached tmux session of its own (its
/// own server socket), a shell in it, keys typed into it and the screen read back, as
/// `tmux send-keys` and `capture-pane` do. `Scripts/test.sh` installs tmux; outside it a suite
/// that needs one is skipped, and says so.
public final class TerminalSession {
    /// Whether the suites that need a terminal can run: tmux is here, or the project's test
    /// command is running (then a missing tmux is a failure, not a skip).
    public static var available: Bool { installed || Python.required }

    static var installed: Bool { (try? tmux(["-V"], socket: nil)) != nil }

    public let width: Int
    public let height: Int
    private let socket = "derive-test-\(UUID().uuidString.prefix(8))"

    /// A `width` x `height` terminal running bash (no profile) in `directory`,
    /// with `environment` added to the test's own.
    public init(width: Int = 120, height: Int = 40, directory: URL, environment: [String: String] = [:]) throws {
        guard Self.installed else {
            throw TestServers.Missing(description: "tmux is not installed: run the tests with Scripts/test.sh, which installs it")
        }
        self.width = width
        self.height = height
        var variables = ["TERM": "xterm-256color", "LANG": "C.UTF-8", "HISTFILE": "/dev/null"]
        variables.merge(environment) { $1 }
        // The server this starts outlives the command: it must not hold a pipe of ours open.
        try Self.tmux(["new-session", "-d", "-x", "\(width)", "-y", "\(height)", "-c", directory.path]
                      + variables.sorted { $0.key < $1.key }.flatMap { ["-e", "\($0.key)=\($0.value)"] }
                      + ["bash --norc --noprofile"], socket: socket, output: false)
        // The shell is up once its prompt shows.
        _ = try waitFor(timeout: 10) { $0.contains { !$0.isEmpty } }
    }

    deinit { _ = try? Self.tmux(["kill-server"], socket: socket) }

    /// Types `line` and Enter.
    public func type(_ line: String) throws {
        try Self.tmux(["send-keys", "-l", line], socket: socket)
        try Self.tmux(["send-keys", "Enter"], socket: socket)
    }

    /// The screen as it is now, one string per line (trailing spaces trimmed by tmux).
    public func screen() throws -> [String] {
        try Self.tmux(["capture-pane", "-p"], socket: socket).components(separatedBy: "\n")
    }

    /// Reads the screen every 50 ms until `done` holds for it (returning it) or `timeout`
    /// seconds pass (throwing, with the screen in the message). `each` sees every screen read.
    public func waitFor(timeout: Double, each: ([String]) -> Void = { _ in }, _ done: ([String]) -> Bool) throws -> [String] {
        let end = Date().addingTimeInterval(timeout)
        var last: [String] = []
        while Date() < end {
            last = try screen()
            each(last)
            if done(last) { return last }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw TestServers.Missing(description: "the terminal never showed what was awaited in \(timeout) s; it shows:\n" + last.joined(separator: "\n"))
    }

    /// Runs `command` in the shell and waits for it to end; returns the screen then and its
    /// exit status (the shell prints it on a line of its own).
    @discardableResult
    public func run(_ command: String, timeout: Double = 120, each: ([String]) -> Void = { _ in }) throws -> (screen: [String], status: Int32) {
        let marker = "exit-\(UUID().uuidString.prefix(8))"
        try type("clear; \(command); echo \(marker)=$?")
        let screen = try waitFor(timeout: timeout, each: each) { lines in lines.contains { $0.hasPrefix(marker + "=") } }
        let line = screen.first { $0.hasPrefix(marker + "=") }!
        return (screen, Int32(line.dropFirst(marker.count + 1)) ?? -1)
    }

    /// Runs tmux with posix_spawn and waitpid, its output through a file: the server a first
    /// command starts outlives it, and under Foundation's Process it never answered.
    @discardableResult
    static func tmux(_ arguments: [String], socket: String?, output: Bool = true) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("derive-tmux-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: file) }
        let words = ["tmux"] + (socket.map { ["-L", $0] } ?? []) + arguments
        let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let script = "exec \(quoted) > '\(file.path)' 2> /dev/null < /dev/null"
        let shell: [String] = ["/bin/sh", "-c", script]
        let argv: [UnsafeMutablePointer<CChar>?] = shell.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // No signal blocked and the stopping ones at their defaults, whatever the test's thread
        // has: the server and its shell inherit them, and kill-server ends them by SIGHUP.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t(), defaults = sigset_t()
        sigemptyset(&unblocked)
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGTERM, SIGCHLD, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", nil, &attributes, argv, environ) == 0 else { throw Shell.Failed(description: "could not start tmux") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw Shell.Failed(description: "waitpid: \(errno)") }
        }
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw Shell.Failed(description: "tmux \(arguments.first ?? ""): exit \(status >> 8)")
        }
        return output ? ((try? String(contentsOf: file, encoding: .utf8)) ?? "") : ""
    }
}
