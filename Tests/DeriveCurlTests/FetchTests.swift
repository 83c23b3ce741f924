import DeriveLanguage
import DeriveJobs
@testable import DeriveCurl
import DeriveTestSupport
import Foundation
import Testing

/// The fetcher against a real HTTP origin on loopback (started by Scripts/test.sh).
@Suite(.enabled(if: TestServers.available, "needs the HTTP origin Scripts/test.sh starts"))
struct FetchTests {
    /// Loopback is refused by default, so these tests allow the origin's address explicitly.
    static func settings(_ change: (inout FetchSettings) -> Void = { _ in }) throws -> FetchSettings {
        var settings = FetchSettings(attempts: 3, backoff: Backoff(base: 0.05, factor: 2, maximum: 0.2))
        settings.addressPolicy = try AddressPolicy.parse("127.0.0.1/32")
        change(&settings)
        return settings
    }

    static func fetcher(_ change: (inout FetchSettings) -> Void = { _ in }, cache: DiskSourceCache? = nil) throws -> CurlFetcher {
        try CurlFetcher(settings: settings(change), cache: cache)
    }

    /// A path unique to the test, so counts on the shared origin are the test's own.
    static func unique(_ path: String) -> String {
        path + (path.contains("?") ? "&" : "?") + "n=\(UUID().uuidString)"
    }

    @Test func fetchesAnImageAndSaysWhatItAccepts() throws {
        let origin = try TestServers.origin()
        let path = Self.unique("/fixture/photos/grace_hopper_noexif.jpg")
        let fetched = try Self.fetcher().fetch(origin + path)
        let fixture = [UInt8](try Data(contentsOf: Paths.fixture("photos/grace_hopper_noexif.jpg")))
        #expect(fetched.image.bytes == fixture && fetched.format == .jpeg && fetched.origin == .network)
        #expect(fetched.transferredBytes == fixture.count && fetched.etag != nil)
        let request = try #require(try TestServers.requests(path).requests.first)
        #expect(request["accept"]?.hasPrefix("image/avif,image/webp,image/jpeg") == true)
        #expect(request["user-agent"]?.hasPrefix("Derive/") == true)
    }

    /// The default policy refuses loopback, without the origin ever seeing a request; the
    /// allowlist opts it back in.
    @Test func loopbackIsRefusedUnlessAllowed() throws {
        let origin = try TestServers.origin()
        let path = Self.unique("/fixture/photos/grace_hopper_noexif.jpg")
        let strict = try CurlFetcher(settings: FetchSettings())
        #expect {
            try strict.fetch(origin + path)
        } throws: { error in
            guard let error = error as? DeriveError else { return false }
            return error.code == .sourceRefused && !error.isRetryable && error.detail.contains("loopback address (127.0.0.0/8)")
        }
        #expect(try TestServers.requests(path).requests.isEmpty)
        // A host name that resolves to loopback is caught at the socket, after DNS.
        let port = URLComponents(string: origin)!.port!
        #expect {
            try strict.fetch("http://localhost:\(port)\(path)")
        } throws: { ($0 as? DeriveError)?.detail.contains("localhost resolves to") == true }
        #expect(try TestServers.requests(path).requests.isEmpty)
        #expect(try Self.fetcher().fetch(origin + path).format == .jpeg)
    }

    @Test(arguments: ["http://2130706433:PORT/x", "http://0177.0.0.1:PORT/x", "http://0x7f.1:PORT/x", "http://127.1:PORT/x",
                      "http://[::ffff:127.0.0.1]:PORT/x", "http://[::1]:PORT/x"])
    func oddSpellingsOfLoopbackAreRefused(spelling: String) throws {
        let port = URLComponents(string: try TestServers.origin())!.port!
        let strict = try CurlFetcher(settings: FetchSettings())
        #expect {
            try strict.fetch(spelling.replacingOccurrences(of: "PORT", with: String(port)))
        } throws: { ($0 as? DeriveError)?.code == .sourceRefused }
    }

    /// Redirects are followed and each hop checked: from an allowed origin to a refused
    /// loopback spelling, to a non-HTTP scheme, or too many times, the fetch is refused.
    @Test func redirectsAreCheckedHopByHop() throws {
        let origin = try TestServers.origin()
        let port = URLComponents(string: origin)!.port!
        let fetcher = try Self.fetcher()
        let followed = try fetcher.fetch(origin + "/redirect?to=" + "/fixture/photos/grace_hopper_noexif.jpg".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        #expect(followed.format == .jpeg && followed.finalLocation.hasSuffix("/fixture/photos/grace_hopper_noexif.jpg"))
        for target in ["http://[::1]:\(port)/fixture/photos/grace_hopper_noexif.jpg", "file:///etc/passwd", "gopher://127.0.0.1:\(port)/x"] {
            let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect("\(target)") {
                try fetcher.fetch(origin + "/redirect?to=" + encoded)
            } throws: { ($0 as? DeriveError)?.code == .sourceRefused }
        }
        #expect(try fetcher.fetch(origin + "/chain/5").format == .jpeg)
        #expect(throws: DeriveError.self) { try fetcher.fetch(origin + "/chain/6") }
    }

    @Test func slowBodiesArriveAndStalledOnesAreAbandoned() throws {
        let origin = try TestServers.origin()
        let slow = try Self.fetcher { $0.stallTimeout = 2 }.fetch(origin + Self.unique("/drip?bytes=61306&delay=0.1"))
        #expect(slow.image.bytes.count == 61306)
        let started = Date()
        #expect {
            try Self.fetcher { $0.stallTimeout = 1; $0.attempts = 1 }.fetch(origin + Self.unique("/stall?seconds=20"))
        } throws: { error in
            guard let error = error as? DeriveError else { return false }
            return error.code == .sourceUnavailable && error.isRetryable && error.detail.contains("timed out")
        }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(throws: DeriveError.self) {
            try Self.fetcher { $0.totalTimeout = 1; $0.stallTimeout = 5; $0.attempts = 1 }.fetch(origin + Self.unique("/drip?bytes=61306&delay=0.2"))
        }
    }

    /// The size limit is enforced while the body streams: the transfer stops, nothing larger
    /// than the limit is kept.
    @Test func oversizedBodiesAreStoppedWhileStreaming() throws {
        let origin = try TestServers.origin()
        for declared in ["1", "0"] {
            let started = Date()
            #expect {
                try Self.fetcher { $0.maxBytes = 1 << 20 }.fetch(origin + Self.unique("/big?bytes=500000000&declare=\(declared)"))
            } throws: { error in
                guard let error = error as? DeriveError else { return false }
                return error.code == .limitExceeded && !error.isRetryable
            }
            #expect(Date().timeIntervalSince(started) < 5, "declare=\(declared)")
        }
        let sent = try TestServers.requests("/big").bigSent ?? 0
        #expect(sent < 100_000_000)
    }

    @Test func retriesHonourRetryAfterAndStopOnClientErrors() throws {
        let origin = try TestServers.origin()
        let flaky = Self.unique("/flaky/\(UUID().uuidString)?fail=2&status=503&retry_after=1")
        let started = Date()
        #expect(try Self.fetcher().fetch(origin + flaky).format == .jpeg)
        #expect(try TestServers.requests(String(flaky.prefix(while: { $0 != "?" }))).requests.count == 3)
        #expect(Date().timeIntervalSince(started) >= 2)

        let throttled = Self.unique("/flaky/\(UUID().uuidString)?fail=5&status=429&retry_after=120")
        #expect {
            try Self.fetcher().fetch(origin + throttled)
        } throws: { error in
            guard let error = error as? DeriveError else { return false }
            return error.isRetryable && error.retryAfter == 120
        }
        #expect(try TestServers.requests(String(throttled.prefix(while: { $0 != "?" }))).requests.count == 1)

        let missing = Self.unique("/status/404")
        #expect {
            try Self.fetcher().fetch(origin + missing)
        } throws: { ($0 as? DeriveError).map { $0.code == .sourceRefused && !$0.isRetryable } ?? false }
        #expect(try TestServers.requests(missing).requests.count == 1)

        let broken = Self.unique("/status/500")
        #expect { try Self.fetcher().fetch(origin + broken) } throws: { ($0 as? DeriveError)?.isRetryable == true }
        #expect(try TestServers.requests(broken).requests.count == 3)
    }

    @Test func contentIsSniffedNotTrustedFromHeaders() throws {
        let origin = try TestServers.origin()
        #expect {
            try Self.fetcher().fetch(origin + Self.unique("/text"))
        } throws: { error in
            guard let error = error as? DeriveError else { return false }
            return error.code == .unsupportedFormat && error.detail.contains("the server called it image/jpeg")
        }
        let png = try Self.fetcher().fetch(origin + Self.unique("/fixture/photos/coffee_noexif.png?type=image/jpeg"))
        #expect(png.format == .png)
    }

    @Test func freshEntriesAreServedAndStaleOnesRevalidated() throws {
        let origin = try TestServers.origin()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-fetch-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try DiskSourceCache(directory: folder, capacity: 50 << 20)
        let fetcher = try Self.fetcher(cache: cache)

        let fresh = Self.unique("/fixture/photos/grace_hopper_noexif.jpg?cc=max-age%3D60")
        #expect(try fetcher.fetch(origin + fresh).origin == .network)
        let again = try fetcher.fetch(origin + fresh)
        #expect(again.origin == .cache && again.transferredBytes == 0 && again.format == .jpeg)
        #expect(try TestServers.requests(fresh).requests.count == 1)

        let stale = Self.unique("/fixture/photos/grace_hopper_noexif.jpg?cc=max-age%3D0")
        let first = try fetcher.fetch(origin + stale)
        let second = try fetcher.fetch(origin + stale)
        #expect(second.origin == .revalidated && second.image.bytes == first.image.bytes && second.transferredBytes == 0)
        let seen = try TestServers.requests(stale).requests
        #expect(seen.count == 2 && seen[1]["if-none-match"] == first.etag && seen[1]["if-modified-since"] != nil)
    }

    /// Concurrent fetches of one source in one worker become one transfer.
    @Test func concurrentFetchesOfOneSourceAreMerged() async throws {
        let origin = try TestServers.origin()
        let path = Self.unique("/slow?delay=0.8")
        let fetcher = try Self.fetcher()
        let results = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        Thread.detachNewThread {
                            continuation.resume(returning: (try? fetcher.fetch(origin + path))?.image.bytes.count ?? -1)
                        }
                    }
                }
            }
            var sizes: [Int] = []
            for await size in group { sizes.append(size) }
            return sizes
        }
        #expect(results.count == 8 && results.allSatisfy { $0 == 61306 })
        #expect(try TestServers.requests(path).requests.count == 1)
    }

    /// Credentials go to the host they are configured for, and only there.
    @Test func perHostCredentialsAreSentOnlyToTheirHost() throws {
        let origin = try TestServers.origin()
        let port = URLComponents(string: origin)!.port!
        let fetcher = try Self.fetcher {
            $0.hosts = ["127.0.0.1": HostCredentials(headers: ["X-Derive-Test": "1"], bearer: "secret")]
            $0.addressPolicy = AddressPolicy(allowedHosts: ["localhost"], allowedNetworks: [CIDR.parse("127.0.0.1/32")!])
        }
        let path = Self.unique("/auth")
        #expect(try fetcher.fetch(origin + path).format == .jpeg)
        let sent = try #require(try TestServers.requests(path).requests.first)
        #expect(sent["authorization"] == "Bearer secret" && sent["x-derive-test"] == "1")
        #expect { try Self.fetcher().fetch(origin + Self.unique("/auth")) } throws: { ($0 as? DeriveError)?.code == .sourceRefused }
        let elsewhere = "http://localhost:\(port)" + Self.unique("/auth")
        #expect(throws: DeriveError.self) {
            try fetcher.fetch(origin + "/redirect?to=" + elsewhere.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        }
        let leaked = try TestServers.requests(String(elsewhere.dropFirst("http://localhost:\(port)".count))).requests
        #expect(leaked.count == 1 && leaked[0]["authorization"] == nil)
    }

    /// A redirect to another port of the same host (as to another scheme) does not carry the
    /// host's credentials.
    @Test func credentialsDoNotFollowARedirectToAnotherPort() throws {
        let origin = try TestServers.origin()
        let other = try SecondOrigin()
        let fetcher = try Self.fetcher { $0.hosts = ["127.0.0.1": HostCredentials(bearer: "secret")] }
        let path = Self.unique("/auth")
        let target = other.url + path
        #expect(throws: DeriveError.self) {
            try fetcher.fetch(origin + "/redirect?to=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
        }
        let received = try other.requests(path)
        #expect(received == 1, "the redirect reached the second origin")
        #expect(try other.authorizationHeaders(path).isEmpty)
    }

    @Test func fileAndDataSources() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("derive-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let inside = root.appendingPathComponent("photo.jpg")
        try Data(contentsOf: Paths.fixture("photos/grace_hopper_noexif.jpg")).write(to: inside)
        let link = root.appendingPathComponent("escape.jpg")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: Paths.fixture("photos/jolla-phone.jpg"))
        let fetcher = try Self.fetcher { $0.fileRoots = [root] }
        #expect(try fetcher.fetch(inside.absoluteString).origin == .file)
        #expect(try fetcher.fetch(inside.path).format == .jpeg)
        for outside in [Paths.fixture("photos/jolla-phone.jpg").path, link.path, root.path + "/../" + root.lastPathComponent + "/../x.jpg"] {
            #expect { try fetcher.fetch(outside) } throws: { ($0 as? DeriveError)?.detail.contains("DERIVE_FILE_ROOTS") == true }
        }
        #expect { try Self.fetcher().fetch(inside.path) } throws: { ($0 as? DeriveError)?.code == .sourceRefused }
        let pixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
        #expect(try fetcher.fetch(pixel).format == .png)
        #expect { try fetcher.fetch("ftp://example.com/a.jpg") } throws: { ($0 as? DeriveError)?.code == .sourceRefused }
    }
}

/// Another HTTP origin on another loopback port, for redirects that change the port.
final class SecondOrigin {
    let process = Process()
    let url: String

    init() throws {
        let port = try Int(Python.run("import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
            .output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Paths.repository.appendingPathComponent("Tests/Servers/origin.py").path, "--port", String(port),
                             "--fixtures", Paths.fixtures.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        url = "http://127.0.0.1:\(port)"
        for _ in 0..<100 where (try? TestServers.fetch(url + "/requests?path=/none")) == nil { Thread.sleep(forTimeInterval: 0.05) }
    }

    deinit { process.terminate() }

    func requests(_ path: String) throws -> Int {
        try entries(path).count
    }

    func authorizationHeaders(_ path: String) throws -> [String] {
        try entries(path).compactMap { ($0["headers"] as? [String: String])?["authorization"] }
    }

    private func entries(_ path: String) throws -> [[String: Any]] {
        var components = URLComponents(string: url + "/requests")!
        components.queryItems = [URLQueryItem(name: "path", value: path)]
        let data = Data(try TestServers.fetch(components.string!).utf8)
        return ((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["requests"] as? [[String: Any]]) ?? []
    }
}
