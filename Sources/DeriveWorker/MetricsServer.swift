import DeriveLanguage
import DeriveJobs
import DeriveHTTP
import Foundation
import Logging

/// Serves `GET /metrics` (Prometheus' text format), and with a `Health`, `GET /healthz` (the
/// worker's loop is turning) and `GET /readyz` (and its database and store answer), over
/// DeriveHTTP's server on SwiftNIO's event loops: the worker's own threads never serve.
/// It listens on loopback unless told otherwise (`DERIVE_METRICS_ADDRESS`).
public final class MetricsServer: Sendable {
    /// The port it listens on (the one the system chose, when asked for port 0).
    public var port: Int { listener.port }
    public var address: String { listener.address }
    private let listener: HTTPListener

    private init(listener: HTTPListener) {
        self.listener = listener
    }

    /// Listens on `address:port` (an IPv4 or IPv6 address; port 0: any free port, reported by
    /// `port`), and returns once it does; throws, saying why, when it cannot. `more` adds
    /// routes after these (the dashboard's pages, with their own catch-all).
    public static func start(address: String = "127.0.0.1", port: Int, metrics: Metrics, health: Health? = nil,
                             more: HTTPRoutes? = nil,
                             logger: Logger = Logger(label: "derive.metrics")) async throws -> MetricsServer {
        do {
            var routes = HTTPRoutes()
            routes.append("GET /metrics") { _ in
                HTTPResponse(statusCode: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                             body: Data(metrics.registry.emitToBuffer()))
            }
            if let health {
                routes.append("GET /healthz") { _ in Self.json(health.live()) }
                routes.append("GET /readyz") { _ in Self.json(health.ready()) }
            }
            if let more { routes.append(contentsOf: more) }
            routes.append("*") { _ in
                HTTPResponse(statusCode: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                             body: Data("Derive serves /metrics, /healthz and /readyz\n".utf8))
            }
            return MetricsServer(listener: try await HTTPListener.start(address: address, port: port, timeout: 10, logger: logger, routes: routes))
        } catch {
            throw MetricsServerError(error.description)
        }
    }

    /// Stops accepting scrapes, lets those under way finish.
    public func stop() async {
        await listener.stop()
    }

    private static func json(_ result: (ok: Bool, report: DeriveLanguage.JSONValue)) -> HTTPResponse {
        HTTPResponse(statusCode: result.ok ? .ok : .serviceUnavailable, headers: [.contentType: "application/json"],
                     body: Data((JSONWriter.compact(result.report) + "\n").utf8))
    }
}

public struct MetricsServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
