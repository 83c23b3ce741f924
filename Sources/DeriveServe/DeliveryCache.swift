import DeriveHTTP
import Foundation
import Synchronization

/// The delivery responses `derive serve` gave most recently, kept in memory so that a hot
/// derivative is answered without reading the database or the store (issue 39: a recorded
/// derivative at half of nginx's rate needs a request path with no I/O in it).
///
/// Kept: a `GET`'s whole `200` answer to an upload delivery URL (not a fetch delivery, whose
/// origin is revalidated on requests; not a range, not a redirect), under its path and query
/// and, for an answer that varies (`Vary: Accept`, client hints, `Save-Data`), the values of
/// the request headers it names. A `HEAD`, an `If-None-Match` or an `If-Modified-Since` is
/// answered from the same entry.
///
/// Dropped, all of it, when the database's generation number for the cloud moves
/// (`ServedAssets.servedAssetGeneration`: triggers move it on every overwrite, rename or
/// delete of an asset or a derivative, whichever process makes it). A server reads the number
/// after each of its own changes and every `pollInterval` otherwise, so another process's
/// overwrite or delete is seen within that interval (100 ms by default). Bounded by the bytes
/// of the bodies it holds; the oldest entries go first.
final class DeliveryCache: Sendable {
    static let pollInterval: Duration = .milliseconds(100)

    private struct Entry: Sendable {
        var vary: [HTTPHeader]
        var responses: [[String]: HTTPResponse]
    }

    private struct State: Sendable {
        var generation: Int64 = -1
        var entries: [String: Entry] = [:]
        var order: [(key: String, variant: [String], bytes: Int)] = []
        var firstKept = 0
        var bytes = 0
    }

    let maxBytes: Int
    private let state = Mutex(State())

    /// `maxBytes` 0 keeps nothing.
    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// The generation the entries belong to; a response made after reading it may be kept
    /// under it (if the number moved meanwhile, `observe` drops it with the rest).
    var generation: Int64 { state.withLock { $0.generation } }

    /// The database's number as just read: a different one drops every entry.
    func observe(generation: Int64) {
        state.withLock { state in
            guard state.generation != generation else { return }
            state = State()
            state.generation = generation
        }
    }

    /// The number could not be read: nothing kept is trusted until it is read again.
    func forget() {
        state.withLock { $0 = State() }
    }

    static func key(_ request: HTTPRequest) -> String {
        request.query.isEmpty ? request.path : request.path + "?" + request.query.map { $0.name + "=" + $0.value }.joined(separator: "&")
    }

    /// The kept answer to `request`, if there is one (a GET or HEAD with no range).
    func answer(_ request: HTTPRequest) -> HTTPResponse? {
        guard maxBytes > 0, request.method == .GET || request.method == .HEAD,
              request.headers[.range] == nil else { return nil }
        let key = Self.key(request)
        guard var response = state.withLock({ state -> HTTPResponse? in
            guard let entry = state.entries[key] else { return nil }
            return entry.responses[entry.vary.map { request.headers[$0] ?? "" }]
        }) else { return nil }
        if CloudinaryService.notModified(request, etag: response.headers[.eTag] ?? "",
                                         lastModified: response.headers[.lastModified].flatMap(IMFDate.parse)) {
            response.statusCode = .notModified
            response.headers[.contentType] = nil
            response.body = Data()
        } else if request.method == .HEAD {
            response.headers[.contentLength] = String(response.body.count)
            response.body = Data()
        }
        return response
    }

    /// Keeps `response` to `request` if it is a whole 200 answer small enough to keep, made
    /// from what the database said at `generation`.
    func keep(_ response: HTTPResponse, for request: HTTPRequest, generation: Int64) {
        guard maxBytes > 0, request.method == .GET, response.statusCode.code == 200, request.headers[.range] == nil,
              response.body.count <= maxBytes / 8 else { return }
        let key = Self.key(request)
        let vary = (response.headers[HTTPHeader("Vary")] ?? "").split(separator: ",")
            .map { HTTPHeader($0.trimmingCharacters(in: .whitespaces)) }.filter { !$0.name.isEmpty }
        let variant = vary.map { request.headers[$0] ?? "" }
        state.withLock { state in
            guard state.generation == generation else { return }
            var entry = state.entries[key] ?? Entry(vary: vary, responses: [:])
            guard entry.vary == vary, entry.responses[variant] == nil else { return }
            var prepared = response
            prepared.prepare()
            entry.responses[variant] = prepared
            state.entries[key] = entry
            state.order.append((key, variant, response.body.count))
            state.bytes += response.body.count
            while state.bytes > maxBytes, state.firstKept < state.order.count {
                let oldest = state.order[state.firstKept]
                state.firstKept += 1
                state.bytes -= oldest.bytes
                state.entries[oldest.key]?.responses[oldest.variant] = nil
                if state.entries[oldest.key]?.responses.isEmpty == true { state.entries[oldest.key] = nil }
            }
            if state.firstKept > 1024, state.firstKept * 2 > state.order.count {
                state.order.removeFirst(state.firstKept)
                state.firstKept = 0
            }
        }
    }
}
