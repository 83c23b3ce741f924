import DeriveCore
import FlyingFox
import FlyingSocks
import Foundation
import Logging
import Synchronization

/// Serves `GET /metrics` (Prometheus' text format), and with a `Health`, `GET /healthz` (the
/// worker's loop is turning) and `GET /readyz` (and its database and store answer), over
/// FlyingFox's HTTP server on Swift's concurrency pool: the worker's own threads never serve.
/// It listens on loopback unless told otherwise (`DERIVE_METRICS_ADDRESS`).
public final class MetricsServer: Sendable {
    /// The port it listens on (the one the system chose, when asked for port 0).
    public let port: Int
    public let address: String
    private let server: HTTPServer
    private let running: Task<Void, Never>
    private let quiet: FlyingFoxLogger.Quiet

    private init(address: String, port: Int, server: HTTPServer, running: Task<Void, Never>, quiet: FlyingFoxLogger.Quiet) {
        self.address = address
        self.port = port
        self.server = server
        self.running = running
        self.quiet = quiet
    }

    /// Listens on `address:port` (an IPv4 or IPv6 address; port 0: any free port, reported by
    /// `port`), and returns once it does; throws, saying why, when it cannot.
    public static func start(address: String = "127.0.0.1", port: Int, metrics: Metrics, health: Health? = nil,
                             logger: Logger = Logger(label: "derive.metrics")) async throws -> MetricsServer {
        guard (0...65535).contains(port) else { throw MetricsServerError("\(port) is not a port (0 to 65535)") }
        let socketAddress: any SocketAddress
        do {
            socketAddress = address.contains(":") ? try sockaddr_in6.inet6(ip6: address, port: UInt16(port))
                                                  : try sockaddr_in.inet(ip4: address, port: UInt16(port))
        } catch {
            throw MetricsServerError("\(address) is not an IP address (say 127.0.0.1, 0.0.0.0 or ::1)")
        }
        let quiet = FlyingFoxLogger.Quiet()
        let server = HTTPServer(address: socketAddress, timeout: 10, logger: FlyingFoxLogger(logger: logger, quiet: quiet))
        await server.appendRoute("GET /metrics") { _ in
            HTTPResponse(statusCode: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                         body: Data(metrics.registry.emitToBuffer()))
        }
        if let health {
            await server.appendRoute("GET /healthz") { _ in Self.json(health.live()) }
            await server.appendRoute("GET /readyz") { _ in Self.json(health.ready()) }
        }
        await server.appendRoute("*") { _ in
            HTTPResponse(statusCode: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                         body: Data("Derive serves /metrics, /healthz and /readyz\n".utf8))
        }

        // Either it listens, or `run()` ends at once (the address is in use, or not this host's).
        let failure = Failure()
        let running = Task {
            do { try await server.run() } catch { failure.value.withLock { $0 = error } }
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while true {
            if await server.isListening, let listening = await server.listeningAddress {
                let actual = switch listening {
                case .ip4(_, let port), .ip6(_, let port): Int(port)
                case .unix: port
                }
                quiet.value.withLock { $0 = false }
                return MetricsServer(address: address, port: actual, server: server, running: running, quiet: quiet)
            }
            if let error = failure.value.withLock({ $0 }) {
                throw MetricsServerError("cannot listen on \(address):\(port): \(Self.describe(error))")
            }
            if ContinuousClock.now > deadline {
                running.cancel()
                throw MetricsServerError("cannot listen on \(address):\(port): not listening after 10 s")
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Stops accepting scrapes, lets those under way finish (a quarter of a second at most:
    /// FlyingFox's socket pool only ends when cancelled, so this is what a stop costs).
    public func stop() async {
        quiet.value.withLock { $0 = true }
        await server.stop(timeout: 0.25)
        running.cancel()
        await running.value
    }

    private static func json(_ result: (ok: Bool, report: DeriveCore.JSONValue)) -> HTTPResponse {
        HTTPResponse(statusCode: result.ok ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                     body: Data((JSONWriter.compact(result.report) + "\n").utf8))
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? SocketError, case .failed(_, let errno, let message) = error {
            return "\(message) (errno \(errno))"
        }
        return "\(error)"
    }

    private final class Failure: Sendable {
        let value = Mutex<(any Error)?>(nil)
    }
}

public struct MetricsServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// FlyingFox's log lines in the worker's log: its per-connection chatter at debug, its failures
/// as warnings and errors (its own default prints to standard output, which `--json` owns).
/// Quiet (all at debug) while it starts, when a failure to listen is thrown to the caller, and
/// once it is being stopped, when the end of its listening socket is no error.
struct FlyingFoxLogger: FlyingSocks.Logging {
    final class Quiet: Sendable {
        let value = Mutex(true)
    }

    let logger: Logger
    let quiet: Quiet

    private var level: Logger.Level { quiet.value.withLock { $0 } ? .debug : .error }

    func logDebug(_ debug: @autoclosure () -> String) { logger.debug("\(debug())") }
    func logInfo(_ info: @autoclosure () -> String) { logger.debug("\(info())") }
    func logWarning(_ warning: @autoclosure () -> String) { logger.log(level: level == .debug ? .debug : .warning, "\(warning())") }
    func logError(_ error: @autoclosure () -> String) { logger.log(level: level, "\(error())") }
    func logCritical(_ critical: @autoclosure () -> String) { logger.log(level: level, "\(critical())") }
}
