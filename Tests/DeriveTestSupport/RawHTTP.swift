import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Sends bytes to a server on loopback over a plain TCP socket, exactly as given: requests no
/// HTTP client would write (a bad request line, a lying Content-Length, raw bytes in a form),
/// which is what the listeners' fuzz tests need. Only ever loopback.
public enum RawHTTP {
    /// What came back: the status of the first response line, or nil when the server closed
    /// (or timed out) without a response, and everything read.
    public struct Reply: Sendable {
        public let status: Int?
        public let bytes: [UInt8]
        public var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// Connects to 127.0.0.1:`port`, writes `request`, half-closes, and reads until the
    /// server closes or `timeout` seconds pass without data (generous by default: a server in a
    /// test process shares two threads with every test running beside it). The socket calls block, so they
    /// run on a thread of Dispatch's, not on the cooperative pool that an in-process server
    /// answers on (two threads on two cores: blocking them would starve the server).
    public static func send(_ request: [UInt8], port: Int, timeout: Double = 120) async -> Reply {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: sendBlocking(request, port: port, timeout: timeout)) }
        }
    }

    /// `send`, on the calling thread.
    public static func sendBlocking(_ request: [UInt8], port: Int, timeout: Double = 120) -> Reply {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return Reply(status: nil, bytes: []) }
        defer { close(socket) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return Reply(status: nil, bytes: []) }
        var offset = 0
        while offset < request.count {
            let written = request.withUnsafeBytes { write(socket, $0.baseAddress! + offset, request.count - offset) }
            if written <= 0 { break }
            offset += written
        }
        shutdown(socket, Int32(SHUT_WR))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while received.count < 8 << 20 {
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress!, $0.count) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return Reply(status: status(of: received), bytes: received)
    }

    /// A request with a correct Content-Length for `body`.
    public static func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    static func status(of bytes: [UInt8]) -> Int? {
        let line = String(decoding: bytes.prefix(64), as: UTF8.self)
        guard line.hasPrefix("HTTP/1."), line.count >= 12 else { return nil }
        return Int(line.dropFirst(9).prefix(3))
    }
}
