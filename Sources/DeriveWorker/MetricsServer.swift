import DeriveCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Serves `GET /metrics` (Prometheus' text format), and with a `Health`, `GET /healthz` (the
/// worker's loop is turning) and `GET /readyz` (and its database and store answer), on a TCP
/// port, one short connection at a time on its own thread: a scrape or a probe every few
/// seconds needs nothing more.
public final class MetricsServer: Sendable {
    public let port: Int
    private let descriptor: Int32

    /// Listens on `address:port` (port 0: any free port, reported by `port`).
    public init(address: String = "0.0.0.0", port: Int, metrics: Metrics, health: Health? = nil) throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw MetricsServerError("cannot open a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(socketDescriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var bound = sockaddr_in()
        bound.sin_family = sa_family_t(AF_INET)
        bound.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, address, &bound.sin_addr) == 1 else {
            close(socketDescriptor)
            throw MetricsServerError("\(address) is not an IPv4 address")
        }
        let bindResult = withUnsafePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bindResult == 0, listen(socketDescriptor, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(socketDescriptor)
            throw MetricsServerError("cannot listen on \(address):\(port): \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        descriptor = socketDescriptor
        let thread = Thread { Self.serve(socketDescriptor, metrics: metrics, health: health) }
        thread.name = "derive-metrics"
        thread.start()
    }

    private static func serve(_ listener: Int32, metrics: Metrics, health: Health?) {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            // A client that sends nothing cannot hold the thread for long.
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(client, &buffer, buffer.count, 0)
            let request = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
            let line = request.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            let parts = line.split(separator: " ")
            let path = parts.count >= 2 && parts[0] == "GET" ? String(parts[1].split(separator: "?").first ?? "") : ""
            let (status, type, body): (String, String, String)
            switch (path, health) {
            case ("/metrics", _):
                (status, type, body) = ("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics.render())
            case ("/healthz", let health?):
                let (ok, report) = health.live()
                (status, type, body) = (ok ? "200 OK" : "503 Service Unavailable", "application/json", JSONWriter.compact(report) + "\n")
            case ("/readyz", let health?):
                let (ok, report) = health.ready()
                (status, type, body) = (ok ? "200 OK" : "503 Service Unavailable", "application/json", JSONWriter.compact(report) + "\n")
            default:
                (status, type, body) = ("404 Not Found", "text/plain", "Derive serves /metrics, /healthz and /readyz\n")
            }
            let response = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
            let bytes = Array(response.utf8)
            var sent = 0
            while sent < bytes.count {
                let written = bytes.withUnsafeBytes { buffer in
                    send(client, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                }
                if written <= 0 { break }
                sent += written
            }
            close(client)
        }
    }

    /// Stops accepting scrapes.
    public func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }
}

public struct MetricsServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
