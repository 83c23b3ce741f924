internal import CCurl
internal import CCurlShim
import DeriveLanguage
import DeriveJobs
import Foundation
import Synchronization

/// One HTTP request. Redirects are not followed here: the fetcher follows them itself so that
/// every hop's scheme and host are checked.
struct HTTPRequest {
    var method = "GET"
    var url: String
    var headers: [String] = []
    var body: [UInt8]?
    var maxResponseBytes: Int
    var connectTimeout: Double
    var totalTimeout: Double
    var stallTimeout: Double
    var userAgent: String?
    /// Checked against every address curl connects to; nil for trusted endpoints (S3).
    var policy: AddressPolicy?
    /// `user:password` for basic or SigV4 credentials.
    var credentials: String?
    /// `aws:amz:<region>:s3`: curl signs the request with SigV4.
    var awsSigV4: String?
}

struct HTTPResponse {
    var status: Int
    /// Header names lowercased; the last value wins.
    var headers: [String: String]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// libcurl is initialised once per process, before any thread uses it.
enum CurlRuntime {
    static let started: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    static func start() throws(DeriveError) {
        guard started else { throw DeriveError(.internalError, "libcurl failed to initialise") }
    }
}

/// One easy handle and the address guard it uses; handles are reused so connections stay open.
/// `@unchecked Sendable`: a handle is used by one thread at a time — taken out of the client's
/// pool, used for one transfer, reset and put back.
final class CurlHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer
    let guardrail: UnsafeMutablePointer<ccurl_guard>

    init() throws(DeriveError) {
        try CurlRuntime.start()
        guard let raw = curl_easy_init() else { throw DeriveError(.internalError, "libcurl could not create a handle") }
        self.raw = raw
        self.guardrail = .allocate(capacity: 1)
        guardrail.initialize(to: ccurl_guard(decide: nil, context: nil))
    }

    deinit {
        curl_easy_cleanup(raw)
        guardrail.deallocate()
    }
}

/// What the callbacks of one transfer share with Swift.
private final class Transfer {
    var body: [UInt8] = []
    let limit: Int
    var exceeded = false
    var headers: [String: String] = [:]
    let policy: AddressPolicy?
    let host: String
    var refusal: String?
    var upload: [UInt8]?
    var uploadRemaining = 0
    var uploadOffset = 0
    /// Stall detection: the last time a byte moved, and how long without one is too long.
    let stallLimit: UInt64
    var lastMoved: UInt64 = DispatchTime.now().uptimeNanoseconds
    var lastCount: Int64 = -1
    var stalled = false

    init(limit: Int, policy: AddressPolicy?, host: String, stallSeconds: Double) {
        self.limit = limit
        self.policy = policy
        self.host = host
        self.stallLimit = UInt64(stallSeconds * 1_000_000_000)
    }
}

/// Performs requests with pooled libcurl handles.
final class HTTPClient: Sendable {
    private let pool = Mutex<[CurlHandle]>([])
    static let poolSize = 16

    init() {}

    private func take() throws(DeriveError) -> CurlHandle {
        if let handle = pool.withLock({ $0.popLast() }) { return handle }
        return try CurlHandle()
    }

    private func giveBack(_ handle: CurlHandle) {
        curl_easy_reset(handle.raw)
        pool.withLock { pool in
            if pool.count < Self.poolSize { pool.append(handle) }
        }
    }

    func perform(_ request: HTTPRequest) throws(DeriveError) -> HTTPResponse {
        let handle = try take()
        defer { giveBack(handle) }
        let curl = handle.raw
        let host = URLComponents(string: request.url)?.host ?? ""
        let transfer = Transfer(limit: request.maxResponseBytes, policy: request.policy, host: host, stallSeconds: request.stallTimeout)
        let context = Unmanaged.passUnretained(transfer).toOpaque()

        var headerList: UnsafeMutablePointer<curl_slist>?
        // "Expect:" (no 100-continue round trip) is left out of SigV4 requests: curl 7.88 signs
        // the header it then does not send, and S3 rejects the signature.
        let expect = request.awsSigV4 == nil ? ["Expect:"] : []
        for line in request.headers + expect { headerList = curl_slist_append(headerList, line) }
        defer { curl_slist_free_all(headerList) }

        _ = ccurl_setopt_string(curl, CURLOPT_URL, request.url)
        _ = ccurl_setopt_string(curl, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = ccurl_setopt_long(curl, CURLOPT_FOLLOWLOCATION, 0)
        _ = ccurl_setopt_long(curl, CURLOPT_NOSIGNAL, 1)
        // Environment proxies would make the proxy the connected address and defeat the guard.
        _ = ccurl_setopt_string(curl, CURLOPT_PROXY, "")
        _ = ccurl_setopt_long(curl, CURLOPT_CONNECTTIMEOUT_MS, Int(request.connectTimeout * 1000))
        _ = ccurl_setopt_long(curl, CURLOPT_TIMEOUT_MS, Int(request.totalTimeout * 1000))
        _ = ccurl_setopt_off_t(curl, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxResponseBytes))
        _ = ccurl_setopt_long(curl, CURLOPT_TCP_KEEPALIVE, 1)
        _ = ccurl_setopt_slist(curl, CURLOPT_HTTPHEADER, headerList)
        if let agent = request.userAgent { _ = ccurl_setopt_string(curl, CURLOPT_USERAGENT, agent) }
        if let credentials = request.credentials { _ = ccurl_setopt_string(curl, CURLOPT_USERPWD, credentials) }
        if let sigv4 = request.awsSigV4 { _ = ccurl_setopt_string(curl, CURLOPT_AWS_SIGV4, sigv4) }

        _ = ccurl_set_write(curl, { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            // The limit is enforced while streaming: past it the transfer is aborted.
            if transfer.body.count + length > transfer.limit {
                transfer.exceeded = true
                return 0
            }
            if let data { transfer.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length)) }
            return length
        }, context)
        _ = ccurl_set_header(curl, { data, size, count, context in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let length = size * count
            guard let data else { return length }
            let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("HTTP/") {
                transfer.headers = [:]
            } else if let colon = line.firstIndex(of: ":") {
                transfer.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return length
        }, context)

        // A transfer that moves no byte for the stall timeout is abandoned; curl's own low-speed
        // check averages over a window and notices seconds later.
        _ = ccurl_set_progress(curl, { context, _, downloaded, _, uploaded in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            let now = DispatchTime.now().uptimeNanoseconds
            let moved = Int64(downloaded) + Int64(uploaded)
            if moved != transfer.lastCount {
                transfer.lastCount = moved
                transfer.lastMoved = now
                return 0
            }
            if now - transfer.lastMoved > transfer.stallLimit {
                transfer.stalled = true
                return 1
            }
            return 0
        }, context)

        handle.guardrail.pointee = ccurl_guard(decide: { context, family, bytes in
            let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
            guard let bytes else { return 0 }
            let address: IPAddress = family == 4
                ? .v4(UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3]))
                : .v6((0..<16).map { bytes[$0] })
            if let policy = transfer.policy, let reason = policy.refusal(host: transfer.host, address: address) {
                transfer.refusal = reason
                return 0
            }
            return 1
        }, context: context)
        _ = ccurl_set_address_guard(curl, handle.guardrail)

        switch request.method {
        case "GET": _ = ccurl_setopt_long(curl, CURLOPT_HTTPGET, 1)
        case "HEAD": _ = ccurl_setopt_long(curl, CURLOPT_NOBODY, 1)
        default: _ = ccurl_setopt_string(curl, CURLOPT_CUSTOMREQUEST, request.method)
        }
        if let body = request.body {
            transfer.upload = body
            transfer.uploadRemaining = body.count
            _ = ccurl_setopt_long(curl, CURLOPT_UPLOAD, 1)
            _ = ccurl_setopt_off_t(curl, CURLOPT_INFILESIZE_LARGE, curl_off_t(body.count))
            if request.method != "PUT" { _ = ccurl_setopt_string(curl, CURLOPT_CUSTOMREQUEST, request.method) }
            _ = ccurl_set_read(curl, { buffer, size, count, context in
                let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
                let wanted = min(size * count, transfer.uploadRemaining)
                guard wanted > 0, let buffer, let upload = transfer.upload else { return 0 }
                upload.withUnsafeBytes { bytes in
                    UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + transfer.uploadOffset, byteCount: wanted)
                }
                transfer.uploadOffset += wanted
                transfer.uploadRemaining -= wanted
                return wanted
            }, context)
        }

        let code = curl_easy_perform(curl)
        withExtendedLifetime(transfer) {}
        guard code == CURLE_OK else { throw classify(code, transfer: transfer, request: request) }
        var status = 0
        _ = ccurl_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status)
        return HTTPResponse(status: status, headers: transfer.headers, body: transfer.body)
    }

    private func classify(_ code: CURLcode, transfer: Transfer, request: HTTPRequest) -> DeriveError {
        let url = Redacted.url(request.url)
        let message = String(cString: curl_easy_strerror(code))
        if let refusal = transfer.refusal {
            return DeriveError(.sourceRefused, "refused \(url): \(refusal)")
        }
        switch code {
        case CURLE_WRITE_ERROR where transfer.exceeded, CURLE_FILESIZE_EXCEEDED:
            var error = SourceSizeLimit(request.maxResponseBytes).refusal(of: url)
            error.detail += "; the transfer was stopped"
            return error
        case CURLE_ABORTED_BY_CALLBACK where transfer.stalled:
            return DeriveError(.sourceUnavailable, "\(url) stalled: no data for \(request.stallTimeout) s (DERIVE_FETCH_STALL_TIMEOUT); timed out")
        case CURLE_OPERATION_TIMEDOUT:
            return DeriveError(.sourceUnavailable, "\(url) timed out (connect \(request.connectTimeout) s, total \(request.totalTimeout) s, stalled after \(request.stallTimeout) s without data): \(message)")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return DeriveError(.sourceRefused, "\(url): \(message); only http and https are fetched")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
            return DeriveError(.sourceRefused, "\(url): TLS verification failed: \(message)")
        default:
            return DeriveError(.sourceUnavailable, "\(url): \(message)")
        }
    }
}
