// Hummingbird 2 (SwiftNIO underneath) serving one file's bytes from memory.
import Foundation
import Hummingbird
import Logging

let arguments = CommandLine.arguments
guard arguments.count == 3, let port = Int(arguments[1]),
      let bytes = FileManager.default.contents(atPath: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: hummingbird-file <port> <file>\n".utf8))
    exit(2)
}
let buffer = ByteBuffer(bytes: bytes)
let router = Router()
router.get("f") { _, _ -> Response in
    Response(status: .ok, headers: [.contentType: "image/webp"], body: .init(byteBuffer: buffer))
}
router.get("healthz") { _, _ -> Response in
    Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
}
var logger = Logger(label: "hummingbird-file")
logger.logLevel = .error
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
try await app.runService()
