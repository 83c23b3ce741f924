import Foundation

/// Polls `condition` every 50 ms until it holds, or fails the test after `timeout` seconds.
public func waitUntil(_ what: String, timeout: Double = 20, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return }
        Thread.sleep(forTimeInterval: 0.05)
    }
    throw TimedOut(description: "timed out waiting until \(what)")
}

public struct TimedOut: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

public struct Missing: Error {
    public init() {}
}
