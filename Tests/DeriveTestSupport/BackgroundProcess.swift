import Foundation

/// A product of this package (`derive work`) running in the background, its standard error
/// going to a file, for tests that signal, kill or wait for it.
public final class BackgroundProcess: @unchecked Sendable {
    public let process = Process()
    public let log: URL
    private let stdout = Pipe()
    private var output = Data()
    private let reader: Thread

    /// `launcher` runs it through another program that execs it in place (`ip netns exec NAME`),
    /// so the process's pid is still the product's.
    public init(_ arguments: [String], environment: [String: String] = [:], executable: String = "derive", launcher: [String] = []) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("derive-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let product = DeriveBinary.url.deletingLastPathComponent().appendingPathComponent(executable)
        // Through env(1), which execs it in place with SIGTERM and SIGINT at their defaults: the
        // test process ignores them, children inherit that, and a signal sent before the
        // product watches for them would be lost (a worker's start-up never looks like that in
        // production, where nothing ignores them).
        let words = launcher + ["/usr/bin/env", "--default-signal=TERM,INT", product.path] + arguments
        process.executableURL = URL(fileURLWithPath: words[0])
        process.arguments = Array(words.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardOutput = stdout
        let handle = stdout.fileHandleForReading
        nonisolated(unsafe) var collected = Data()
        reader = Thread { collected = handle.readDataToEndOfFile() }
        try process.run()
        reader.start()
        self.collectedOutput = { collected }
    }

    private var collectedOutput: () -> Data = { Data() }

    public var pid: Int32 { process.processIdentifier }

    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits up to `timeout` seconds; nil if it is still running (then it is killed).
    public func wait(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        return process.terminationStatus
    }

    /// What it printed on standard output (after it exited).
    public var standardOutput: String { String(decoding: collectedOutput(), as: UTF8.self) }

    /// Its log so far, one line per entry.
    public var logLines: [String] {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: log)
    }
}

extension BackgroundProcess {
    /// The port a server names in its log after `prefix` (`derive dashboard --port 0` says
    /// "listening on http://127.0.0.1:PORT"), or nil when it has not after 10 s.
    public func listeningPort(after prefix: String = "listening on http://127.0.0.1:") -> Int? {
        for _ in 0..<400 {
            if let port = logLines.joined().components(separatedBy: prefix).dropFirst().first
                .flatMap({ Int($0.prefix { $0.isNumber }) }) { return port }
            Thread.sleep(forTimeInterval: 0.025)
        }
        return nil
    }
}
