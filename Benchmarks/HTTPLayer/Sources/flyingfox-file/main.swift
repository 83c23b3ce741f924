// FlyingFox (Derive's HTTP layer today) serving one file's bytes from memory.
import FlyingFox
import FlyingSocks
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = UInt16(arguments[1]),
      let bytes = FileManager.default.contents(atPath: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: flyingfox-file <port> <file>\n".utf8))
    exit(2)
}

/// TCP_NODELAY on every socket, as Derive's NoDelayPool does (without it every kept-alive
/// request waits 40 ms for a delayed ACK).
struct NoDelayPool: AsyncSocketPool {
    let pool: any AsyncSocketPool = HTTPServer.defaultPool()
    func prepare() async throws { try await pool.prepare() }
    func run() async throws { try await pool.run() }
    func suspendSocket(_ socket: Socket, untilReadyFor events: Socket.Events) async throws {
        try? socket.setValue(true, for: BoolSocketOption(level: Int32(IPPROTO_TCP), name: Int32(TCP_NODELAY)))
        try await pool.suspendSocket(socket, untilReadyFor: events)
    }
}

let server = HTTPServer(config: HTTPServer.Configuration(address: try sockaddr_in.inet(ip4: "127.0.0.1", port: port),
                                                         pool: NoDelayPool(), logger: .disabled))
await server.appendRoute("GET /f") { _ in
    HTTPResponse(statusCode: .ok, headers: [HTTPHeader("Content-Type"): "image/webp"] as HTTPHeaders, body: bytes)
}
await server.appendRoute("GET /healthz") { _ in
    HTTPResponse(statusCode: .ok, headers: [HTTPHeader("Content-Type"): "text/plain"] as HTTPHeaders, body: Data("ok\n".utf8))
}
try await server.run()
