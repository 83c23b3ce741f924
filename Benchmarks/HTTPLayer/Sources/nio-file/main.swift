// SwiftNIO's HTTP/1 pipeline directly: the floor under Hummingbird.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]),
      let bytes = FileManager.default.contents(atPath: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: nio-file <port> <file>\n".utf8))
    exit(2)
}
let file = ByteBuffer(bytes: bytes)
let healthz = ByteBuffer(string: "ok\n")

final class FileHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private var uri = ""
    private var keepAlive = true

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            uri = head.uri
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            let (status, type, body): (HTTPResponseStatus, String, ByteBuffer) =
                uri == "/f" ? (.ok, "image/webp", file) : uri == "/healthz" ? (.ok, "text/plain", healthz) : (.notFound, "text/plain", healthz)
            var headers = HTTPHeaders([("Content-Type", type), ("Content-Length", String(body.readableBytes))])
            if !keepAlive { headers.add(name: "Connection", value: "close") }
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            let keepAlive = self.keepAlive
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { [context] _ in
                if !keepAlive { context.close(promise: nil) }
            }
        }
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
let channel = try await ServerBootstrap(group: group)
    .serverChannelOption(ChannelOptions.backlog, value: 256)
    .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true).flatMap {
            channel.pipeline.addHandler(FileHandler())
        }
    }
    .bind(host: "127.0.0.1", port: port).get()
try await channel.closeFuture.get()
