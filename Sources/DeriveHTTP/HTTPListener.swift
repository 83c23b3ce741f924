import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// Derive's HTTP servers (`derive serve`, the dashboard, `/metrics`) on Hummingbird 2, the layer
/// issue 39 chose by measurement (Benchmarks/RESULTS.md, "The HTTP layer"): SwiftNIO's event
/// loops, keep-alive and pipelining, at a fraction of a plain SwiftNIO server's build cost in
/// code of our own. This file is the only one that knows Hummingbird: handlers see HTTPRequest
/// and HTTPResponse. It returns once it listens, or throws saying why it cannot (a bad address,
/// a port in use), and reports the port the system chose for port 0.
public final class HTTPListener: Sendable {
    public let address: String
    /// The port it listens on (the one the system chose, when asked for port 0).
    public let port: Int
    private let group: ServiceGroup
    private let running: Task<Void, Never>

    private init(address: String, port: Int, group: ServiceGroup, running: Task<Void, Never>) {
        self.address = address
        self.port = port
        self.group = group
        self.running = running
    }

    /// Listens on `address:port` (IPv4 or IPv6), answering with `routes`; `timeout` closes a
    /// connection idle that long (seconds).
    public static func start(address: String, port: Int, timeout: Double, logger: Logger,
                             routes: HTTPRoutes) async throws(HTTPListenerError) -> HTTPListener {
        guard (0...65535).contains(port) else { throw HTTPListenerError("\(port) is not a port (0 to 65535)") }
        guard isIPAddress(address) else { throw HTTPListenerError("\(address) is not an IP address (say 127.0.0.1, 0.0.0.0 or ::1)") }

        // Hummingbird logs each request's failures (a malformed request line, a reset
        // connection) at debug; Derive's own lines keep the level they were given.
        let started = Started()
        let responder = CallbackResponder<PeerContext> { request, context in
            let response = await routes.respond(to: HTTPRequest(request, remoteAddress: context.remoteAddress))
            return response.wire?.response ?? Response(response)
        }
        let application = Application(
            responder: responder,
            server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(timeout * 1000)))),
            configuration: ApplicationConfiguration(address: .hostname(address, port: port), serverName: nil, reuseAddress: true),
            onServerRunning: { channel in started.resolve(.success(channel.localAddress?.port ?? port)) },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        let running = Task {
            do {
                try await group.run()
                started.resolve(.failure(HTTPListenerError("cannot listen on \(address):\(port): the server stopped")))
            } catch {
                started.resolve(.failure(HTTPListenerError("cannot listen on \(address):\(port): \(describe(error))")))
            }
        }
        switch await started.value() {
        case .success(let actual):
            return HTTPListener(address: address, port: actual, group: group, running: running)
        case .failure(let error):
            running.cancel()
            throw error
        }
    }

    /// Stops accepting, lets requests under way finish, closes idle connections; a connection
    /// still busy after a second is cut.
    public func stop() async {
        await group.triggerGracefulShutdown()
        let running = running
        let cut = Task {
            try? await Task.sleep(for: .seconds(1))
            running.cancel()
        }
        await running.value
        cut.cancel()
    }

    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return "\(error.description) (errno \(error.errnoCode))" }
        return "\(error)"
    }

    /// The first of: the server listens (its port), or it fails.
    private final class Started: Sendable {
        private let state = Mutex<(result: Result<Int, HTTPListenerError>?, waiter: CheckedContinuation<Result<Int, HTTPListenerError>, Never>?)>((nil, nil))

        func resolve(_ result: Result<Int, HTTPListenerError>) {
            let waiter = state.withLock { state -> CheckedContinuation<Result<Int, HTTPListenerError>, Never>? in
                guard state.result == nil else { return nil }
                state.result = result
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: result)
        }

        func value() async -> Result<Int, HTTPListenerError> {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Result<Int, HTTPListenerError>? in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

public struct HTTPListenerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Hummingbird's request context, with the peer's address (the dashboard throttles logins by it).
struct PeerContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: HTTPRemoteAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = switch source.channel.remoteAddress {
        case .v4(let address)?: .ip4(address.host, port: source.channel.remoteAddress?.port ?? 0)
        case .v6(let address)?: .ip6(address.host, port: source.channel.remoteAddress?.port ?? 0)
        case .unixDomainSocket?: .unix(source.channel.remoteAddress?.pathname ?? "")
        case nil: nil
        }
    }
}

extension HTTPRequest {
    /// Hummingbird's request as Derive's: the target decoded as FlyingFox did before it (issue
    /// 39 moved the layer; the handlers' view of a request did not change), the body streamed.
    init(_ request: Request, remoteAddress: HTTPRemoteAddress? = nil) {
        var headers: HTTPHeaders = [:]
        // HTTP types hold an HTTP/1 request's Host as the authority pseudo-header.
        if let authority = request.head.authority { headers[.host] = authority }
        for field in request.headers {
            let name = HTTPHeader(field.name.rawName)
            if let earlier = headers[name] {
                headers[name] = earlier + (name == .cookie ? "; " : ", ") + field.value
            } else {
                headers[name] = field.value
            }
        }
        let body = request.body
        self.init(method: HTTPMethod(request.method.rawValue), target: request.head.path ?? "", headers: headers, remoteAddress: remoteAddress,
                  body: HTTPRequestBody {
                      var chunks = body.makeAsyncIterator()
                      return { try await chunks.next().map { Data($0.readableBytesView) } }
                  })
    }
}

extension Response {
    init(_ response: HTTPResponse) {
        var fields = HTTPFields()
        for (header, value) in response.headers {
            guard let name = HTTPField.Name(header.name) else { continue }
            fields.append(HTTPField(name: name, value: value))
        }
        self.init(status: .init(code: response.statusCode.code, reasonPhrase: response.statusCode.phrase), headers: fields,
                  body: ResponseBody(byteBuffer: ByteBuffer(bytes: response.body)))
        // A 304 or 204 has no body, and no length of one (a 304's length would describe the
        // representation it stands for); Hummingbird would write `Content-Length: 0`.
        if [204, 304].contains(response.statusCode.code) { headers[.contentLength] = response.headers[.contentLength] }
    }
}

/// A response in Hummingbird's form, kept with the `HTTPResponse` it was made from
/// (`HTTPResponse.prepare()`). Hummingbird's body writes a copy of the buffer it holds, so one
/// `Response` answers any number of requests.
final class WireResponse: Sendable {
    let response: Response

    init(_ response: HTTPResponse) {
        self.response = Response(response)
    }
}
