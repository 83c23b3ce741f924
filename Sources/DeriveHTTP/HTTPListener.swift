import FlyingFox
import FlyingSocks
import Foundation
import Logging
import Synchronization

/// A FlyingFox server on an address and port, started and stopped the way Derive's servers
/// (`/metrics` and the dashboard) need: it returns once it listens or throws saying why it
/// cannot (a bad address, a port in use), reports the port the system chose for port 0, and
/// keeps FlyingFox's own lines in Derive's log, quiet while it starts and once it stops (the
/// end of its listening socket is no error then).
public final class HTTPListener: Sendable {
    public let address: String
    /// The port it listens on (the one the system chose, when asked for port 0).
    public let port: Int
    private let server: HTTPServer
    private let running: Task<Void, Never>
    private let quiet: ListenerLogger.Quiet

    private init(address: String, port: Int, server: HTTPServer, running: Task<Void, Never>, quiet: ListenerLogger.Quiet) {
        self.address = address
        self.port = port
        self.server = server
        self.running = running
        self.quiet = quiet
    }

    /// Listens on `address:port` (IPv4 or IPv6) with the routes `routes` adds.
    public static func start(address: String, port: Int, timeout: Double, logger: Logger,
                             routes: (HTTPServer) async -> Void) async throws(HTTPListenerError) -> HTTPListener {
        guard (0...65535).contains(port) else { throw HTTPListenerError("\(port) is not a port (0 to 65535)") }
        let socketAddress: any SocketAddress
        do {
            socketAddress = address.contains(":") ? try sockaddr_in6.inet6(ip6: address, port: UInt16(port))
                                                  : try sockaddr_in.inet(ip4: address, port: UInt16(port))
        } catch {
            throw HTTPListenerError("\(address) is not an IP address (say 127.0.0.1, 0.0.0.0 or ::1)")
        }
        let quiet = ListenerLogger.Quiet()
        let server = HTTPServer(config: HTTPServer.Configuration(address: socketAddress, timeout: timeout, pool: NoDelayPool(),
                                                                 logger: ListenerLogger(logger: logger, quiet: quiet)))
        await routes(server)

        // Either it listens, or `run()` ends at once (the address is in use, or not this host's).
        // The deadline only bounds a listener that never starts: `run()` is a task on the
        // cooperative pool, which a busy process (the whole test suite on two cores) can keep
        // from it for more than 10 s, so it is a minute.
        let failed = Failure()
        let running = Task {
            do { try await server.run() } catch { failed.value.withLock { $0 = error } }
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while true {
            if await server.isListening, let listening = await server.listeningAddress {
                let actual = switch listening {
                case .ip4(_, let port), .ip6(_, let port): Int(port)
                case .unix: port
                }
                quiet.value.withLock { $0 = false }
                return HTTPListener(address: address, port: actual, server: server, running: running, quiet: quiet)
            }
            if let error = failed.value.withLock({ $0 }) {
                throw HTTPListenerError("cannot listen on \(address):\(port): \(describe(error))")
            }
            if ContinuousClock.now > deadline {
                running.cancel()
                throw HTTPListenerError("cannot listen on \(address):\(port): not listening after 60 s")
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Stops accepting, lets requests under way finish (a quarter of a second at most:
    /// FlyingFox's socket pool only ends when cancelled, so this is what a stop costs).
    public func stop() async {
        quiet.value.withLock { $0 = true }
        await server.stop(timeout: 0.25)
        running.cancel()
        await running.value
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

public struct HTTPListenerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// FlyingFox's log lines in Derive's log: its per-connection chatter at debug, its failures as
/// warnings and errors, everything at debug while quiet.
struct ListenerLogger: FlyingSocks.Logging {
    final class Quiet: Sendable {
        let value = Mutex(true)
    }

    let logger: Logger
    let quiet: Quiet

    private func log(_ level: Logger.Level, _ message: String) {
        logger.log(level: quiet.value.withLock { $0 } ? .debug : level, "\(message)")
    }

    func logDebug(_ debug: @autoclosure () -> String) { logger.debug("\(debug())") }
    func logInfo(_ info: @autoclosure () -> String) { logger.debug("\(info())") }
    func logWarning(_ warning: @autoclosure () -> String) { log(.warning, warning()) }
    func logError(_ error: @autoclosure () -> String) { log(.error, error()) }
    func logCritical(_ critical: @autoclosure () -> String) { log(.error, critical()) }
}

/// FlyingFox's socket pool with Nagle's algorithm off on every socket it waits for: FlyingFox
/// writes a response's header and body separately, and on a kept-alive connection Nagle held
/// the body until the client's delayed ACK, 40 ms later — every request after a connection's
/// first took over 40 ms (a 676-byte page: 44 ms; with this, under 2). Accepted sockets inherit
/// the option from the listening one on Linux; it is set on each anyway (a failed set, as on a
/// Unix socket, changes nothing).
struct NoDelayPool: AsyncSocketPool {
    private let pool: any AsyncSocketPool = HTTPServer.defaultPool()

    func prepare() async throws { try await pool.prepare() }

    func run() async throws { try await pool.run() }

    func suspendSocket(_ socket: Socket, untilReadyFor events: Socket.Events) async throws {
        try? socket.setValue(true, for: BoolSocketOption(level: Int32(IPPROTO_TCP), name: Int32(TCP_NODELAY)))
        try await pool.suspendSocket(socket, untilReadyFor: events)
    }
}
