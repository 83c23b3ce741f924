@testable import DeriveLanguage
@testable import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// An address from text, failing the test if it does not parse.
func address(_ text: String) throws -> IPAddress {
    try #require(IPAddress.parse(text), "\(text) does not parse")
}

/// The address classifier behind the SSRF guard, tested without connecting anywhere.
@Suite struct AddressClassificationTests {
    /// Every IPv4 special-purpose range, at its first, an inner and its last address.
    @Test(arguments: [
        ("0.0.0.0", SpecialRange.Kind.unspecified), ("0.1.2.3", .reserved), ("0.255.255.255", .reserved),
        ("10.0.0.0", .private), ("10.20.30.40", .private), ("10.255.255.255", .private),
        ("100.64.0.0", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback),
        ("169.254.0.1", .linkLocal), ("169.254.169.254", .linkLocal), ("169.254.255.255", .linkLocal),
        ("172.16.0.0", .private), ("172.31.255.255", .private),
        ("192.0.0.8", .protocolAssignments), ("192.0.2.1", .documentation), ("192.88.99.1", .reserved),
        ("192.168.0.1", .private), ("192.168.255.255", .private),
        ("198.18.0.1", .benchmarking), ("198.19.255.255", .benchmarking),
        ("198.51.100.7", .documentation), ("203.0.113.9", .documentation),
        ("224.0.0.1", .multicast), ("239.255.255.255", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.254", .reserved), ("255.255.255.255", .broadcast),
    ])
    func reservedIPv4(text: String, kind: SpecialRange.Kind) throws {
        #expect(try address(text).specialRange?.kind == kind, "\(text)")
    }

    @Test(arguments: ["1.1.1.1", "8.8.8.8", "93.184.215.14", "100.63.255.255", "100.128.0.0", "172.15.255.255",
                      "172.32.0.0", "192.0.1.255", "192.169.0.0", "198.17.255.255", "198.20.0.0", "223.255.255.255"])
    func globalIPv4(text: String) throws {
        #expect(try address(text).specialRange == nil, "\(text)")
    }

    /// Every IPv6 special-purpose range, and IPv4 addresses in IPv6 clothing.
    @Test(arguments: [
        ("::", SpecialRange.Kind.unspecified), ("::1", .loopback), ("::ffff:127.0.0.1", .loopback),
        ("::ffff:7f00:1", .loopback), ("::ffff:10.1.2.3", .private), ("::ffff:169.254.169.254", .linkLocal),
        ("64:ff9b::7f00:1", .loopback), ("64:ff9b::a9fe:a9fe", .linkLocal), ("64:ff9b:1::1", .private),
        ("::1.2.3.4", .reserved), ("100::1", .discard), ("2001:db8::1", .documentation),
        ("2001::1", .protocolAssignments), ("2001:1ff::1", .protocolAssignments), ("2002:7f00:1::", .loopback),
        ("2002:c0a8:101::1", .private), ("3fff::1", .documentation), ("5f00::1", .reserved),
        ("fc00::1", .uniqueLocal), ("fd12:3456::1", .uniqueLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("fec0::1", .private), ("ff02::1", .multicast), ("ff05::2", .multicast), ("4000::1", .reserved), ("1::1", .reserved),
    ])
    func reservedIPv6(text: String, kind: SpecialRange.Kind) throws {
        #expect(try address(text).specialRange?.kind == kind, "\(text)")
    }

    @Test(arguments: ["2606:4700:4700::1111", "2a00:1450:4001:81b::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])
    func globalIPv6(text: String) throws {
        #expect(try address(text).specialRange == nil, "\(text)")
    }

    /// Odd spellings of hosts that libcurl and browsers accept all name the same address.
    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1"), ("2130706433", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"), ("0x7f.0.0.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"), ("127.1", "127.0.0.1"), ("127.0.1", "127.0.0.1"), ("0x7F.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"), ("127.0.0.1.", "127.0.0.1"), ("0", "0.0.0.0"), ("0x0", "0.0.0.0"),
        ("3232235777", "192.168.1.1"), ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"), ("[::1]", "::1"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"), ("[0:0:0:0:0:0:0:1]", "::1"),
    ])
    func oddHostSpellings(host: String, expected: String) throws {
        let parsed = try #require(IPAddress.parseHost(host))
        #expect(parsed.description == expected, "\(host)")
        #expect(parsed.specialRange != nil)
    }

    @Test(arguments: ["example.com", "localhost", "1.2.3.example", "256.0.0.1.example", "0x.com", ""])
    func hostNamesAreNotAddresses(host: String) {
        #expect(IPAddress.parseHost(host) == nil, "\(host)")
    }

    @Test(arguments: ["256.1.1.1", "1.2.3.4.5", "999999999999", "0x1.0x1.0x1.0x100", "[fe80::1%eth0]", "[::1::2]", "[12345::]", "[::g]"])
    func invalidAddressesAreRefusedByTheParser(host: String) {
        #expect(IPAddress.parseHost(host) == nil, "\(host)")
    }

    @Test func cidrMatching() throws {
        let v4 = try #require(CIDR.parse("10.0.0.0/8"))
        #expect(v4.contains(.v4(0x0A_FF_00_01)) && !v4.contains(.v4(0x0B_00_00_00)))
        let v6 = try #require(CIDR.parse("fe80::/10"))
        let inside = try address("febf:ffff::1"), outside = try address("fec0::1")
        #expect(v6.contains(inside) && !v6.contains(outside))
        #expect(CIDR.parse("127.0.0.1")?.prefixLength == 32 && CIDR.parse("::1")?.prefixLength == 128)
        #expect(CIDR.parse("10.0.0.0/33") == nil && CIDR.parse("bad/8") == nil)
        #expect(try #require(CIDR.parse("0.0.0.0/0")).contains(.v4(12345)))
    }

    @Test func addressFormattingFollowsRFC5952() throws {
        #expect(try address("2001:0db8:0000:0000:0000:0000:0000:0001").description == "2001:db8::1")
        #expect(try address("2001:db8:0:1:0:0:0:1").description == "2001:db8:0:1::1")
        #expect(try address("fe80:0:0:0:1:0:0:0").description == "fe80::1:0:0:0")
    }
}

@Suite struct AddressPolicyTests {
    @Test func refusesWithTheRuleThatApplies() throws {
        let policy = AddressPolicy()
        let reason = try #require(policy.refusal(host: "metadata.internal", address: try address("169.254.169.254")))
        #expect(reason.contains("169.254.169.254, a link-local address (169.254.0.0/16)") && reason.contains("DERIVE_FETCH_ALLOW"))
        let mapped = try #require(policy.refusal(host: "[::ffff:127.0.0.1]", address: try address("::ffff:127.0.0.1")))
        #expect(mapped.contains("loopback address (127.0.0.0/8 through ::ffff:0:0/96)"))
        #expect(policy.refusal(host: "example.com", address: .v4(0x5D_B8_D7_0E)) == nil)
    }

    @Test func theAllowlistOptsHostsAndNetworksBackIn() throws {
        let policy = try AddressPolicy.parse("127.0.0.1/32, internal.example.com, *.svc.cluster.local, fd00::/8")
        let loopback = try address("127.0.0.1")
        #expect(policy.refusal(host: "127.0.0.1", address: loopback) == nil)
        #expect(policy.refusal(host: "localhost", address: loopback) == nil)
        #expect(policy.refusal(host: "other", address: try address("127.0.0.2")) != nil)
        #expect(policy.refusal(host: "[::1]", address: try address("::1")) != nil)
        #expect(policy.refusal(host: "INTERNAL.example.com.", address: .v4(0x0A_00_00_05)) == nil)
        #expect(policy.refusal(host: "images.svc.cluster.local", address: .v4(0x0A_00_00_05)) == nil)
        #expect(policy.refusal(host: "svc.cluster.local", address: .v4(0x0A_00_00_05)) != nil)
        #expect(policy.refusal(host: "x", address: try address("fd12::1")) == nil)
        #expect(throws: ValidationError.self) { try AddressPolicy.parse("10.0.0.0/99") }
    }
}

@Suite struct RetryAndCachingRuleTests {
    @Test func backoffCeilingsGrowAndStopAtTheMaximum() {
        let backoff = Backoff(base: 0.5, factor: 2, maximum: 4)
        #expect([1, 2, 3, 4, 5].map { backoff.ceiling(attempt: $0) } == [0.5, 1, 2, 4, 4])
        var random = SeededRandom(seed: 3)
        for attempt in 1...6 {
            let delay = backoff.delay(attempt: attempt, using: &random)
            #expect(delay >= 0 && delay <= backoff.ceiling(attempt: attempt))
        }
    }

    @Test func retryAfterTakesSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(HTTPDate.format(now.addingTimeInterval(30)), now: now) == 30)
        #expect(RetryAfter.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == 0)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        #expect(RetryAfter.seconds("-5", now: now) == nil)
    }

    @Test func freshnessFollowsCacheControlAndExpires() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let maxAge = Freshness(headers: ["cache-control": "public, max-age=60", "etag": "\"x\""], now: now)
        #expect(maxAge.lifetime == 60 && maxAge.isCacheable && maxAge.isFresh(storedAt: now, now: now.addingTimeInterval(59)))
        #expect(!maxAge.isFresh(storedAt: now, now: now.addingTimeInterval(61)))
        let expires = Freshness(headers: ["date": HTTPDate.format(now), "expires": HTTPDate.format(now.addingTimeInterval(300))], now: now)
        #expect(expires.lifetime == 300)
        #expect(!Freshness(headers: ["cache-control": "no-store", "etag": "\"x\""]).isCacheable)
        let noCache = Freshness(headers: ["cache-control": "no-cache, max-age=600", "last-modified": "x"])
        #expect(noCache.isCacheable && !noCache.isFresh(storedAt: now, now: now))
        #expect(!Freshness(headers: [:]).isCacheable)
    }

    @Test func dataURIs() throws {
        let pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
        let bytes = try DataURI.decode("data:image/png;base64,\(pixel)", maxBytes: 1000)
        #expect(ImageSniffer.format(of: bytes) == .png)
        #expect(try DataURI.decode("data:,hello%20world", maxBytes: 100) == Array("hello world".utf8))
        #expect(throws: DeriveError.self) { try DataURI.decode("data:image/png;base64,\(pixel)", maxBytes: 10) }
        #expect(throws: DeriveError.self) { try DataURI.decode("data:image/png;base64,@@@", maxBytes: 100) }
        #expect(throws: DeriveError.self) { try DataURI.decode("data:nocomma", maxBytes: 100) }
    }

    @Test func redactionDropsCredentialsAndQueries() {
        #expect(Redacted.url("https://user:pass@cdn.example.com/a.jpg?X-Amz-Signature=abc&t=1") == "https://cdn.example.com/a.jpg?…")
        #expect(Redacted.url("http://example.com/a.jpg") == "http://example.com/a.jpg")
    }

    @Test func hostCredentialsFromJSON() throws {
        let hosts = try FetchSettings.hosts(json: #"{"CDN.example.com": {"bearer": "t0k"}, "img.example.org": {"basic": {"user": "u", "password": "p"}, "headers": {"X-Key": "v"}}}"#)
        #expect(hosts["cdn.example.com"]?.headerLines == ["Authorization: Bearer t0k"])
        #expect(hosts["img.example.org"]?.headerLines == ["X-Key: v", "Authorization: Basic dTpw"])
        #expect(throws: ValidationError.self) { try FetchSettings.hosts(json: #"{"a": {"bearr": "x"}}"#) }
        #expect(throws: ValidationError.self) { try FetchSettings.hosts(json: #"{"a": {"headers": {"X": "a\nb"}}}"#) }
    }
}

@Suite struct StorageTests {
    @Test(arguments: ["a.jpg", "ab/cd/ef-1_.webp", "0123/x"])
    func safeKeys(key: String) throws {
        #expect(try StorageKey(key).value == key)
    }

    @Test(arguments: ["", "/etc/passwd", "../x", "a/../../x", "a//b", "a/./b", "a\\b", "a b", "ä.jpg", "a/", "a=b", "a+b", String(repeating: "a", count: 1025)])
    func unsafeKeysAreRefused(key: String) {
        #expect(throws: DeriveError.self) { try StorageKey(key) }
    }

    @Test func keyTemplatesOnlyTakeSafePlaceholders() throws {
        let values = KeyTemplate.Values(sourceHash: String(repeating: "a", count: 64), name: "thumb", identity: String(repeating: "b", count: 64),
                                        breakpointWidth: 320, width: 320, height: 200, format: .webp)
        #expect(try KeyTemplate.default.key(values).value == "\(String(repeating: "a", count: 64))/thumb-320w-bbbbbbbbbbbbbbbb.webp")
        #expect(try KeyTemplate("derived/{source_hash_short}/{identity}/{width}x{height}.{ext}").key(values).value
                == "derived/aaaaaaaaaaaaaaaa/\(String(repeating: "b", count: 64))/320x200.webp")
        #expect(throws: ValidationError.self) { try KeyTemplate("{source_hash}/{nmae}-{identity}") }
        #expect(throws: ValidationError.self) { try KeyTemplate("{name}.{ext}") }
        #expect(throws: ValidationError.self) { try KeyTemplate("{source_hash}/{identity") }
    }

    @Test func fileStoreWritesAtomicallyInsideItsRoot() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("derive-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileAssetStore(root: root, publicBaseURL: "https://cdn.example.com/assets")
        let key = try StorageKey("ab/cd/thumb.webp")
        let stored = try store.put(Array("first".utf8), key: key, contentType: "image/webp")
        #expect(stored.url == "https://cdn.example.com/assets/ab/cd/thumb.webp" && stored.bytes == 5)
        _ = try store.put(Array("second".utf8), key: key, contentType: "image/webp")
        #expect(try store.get(key) == Array("second".utf8))
        // Nothing but the object is left in its folder: no temporary files.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("ab/cd").path) == ["thumb.webp"])
        let big = root.appendingPathComponent("source.bin")
        try Data(repeating: 7, count: 3 << 20).write(to: big)
        #expect(try store.put(file: big, key: StorageKey("big/copy.bin"), contentType: "application/octet-stream").bytes == 3 << 20)
        try store.delete(key)
        #expect(try store.get(key) == nil)
        try store.delete(key)
    }
}

@Suite struct SourceCacheTests {
    @Test func evictsLeastRecentlyUsedDownToTheLowWaterMark() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try DiskSourceCache(directory: folder, capacity: 1000, lowWaterFraction: 0.5)
        let fresh = Freshness(lifetime: 60, etag: "\"e\"")
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        for (i, name) in ["a", "b", "c", "d"].enumerated() {
            cache.store("http://x/\(name)", body: [UInt8](repeating: UInt8(i), count: 300), freshness: fresh, now: start.addingTimeInterval(Double(i)))
        }
        // Storing d passed 1000 bytes: a, b and c (oldest first) go until at most 500 remain.
        #expect(cache.lookup("http://x/a") == nil && cache.lookup("http://x/b") == nil && cache.lookup("http://x/c") == nil)
        #expect(cache.lookup("http://x/d")?.body.count == 300)
        #expect(cache.totalBytes == 300)
        // Reading an entry makes it recent: it survives the next eviction, the older one does not.
        cache.store("http://x/e", body: [UInt8](repeating: 9, count: 300), freshness: fresh)
        _ = cache.lookup("http://x/d")
        cache.store("http://x/f", body: [UInt8](repeating: 9, count: 500), freshness: fresh)
        #expect(cache.lookup("http://x/e") == nil && cache.lookup("http://x/f") != nil)
        // A new process finds what the last one left.
        #expect(try DiskSourceCache(directory: folder, capacity: 1000).count == cache.count)
    }

    @Test func refreshingAfterA304ExtendsTheLifetime() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = try DiskSourceCache(directory: folder, capacity: 1 << 20)
        let then = Date(timeIntervalSince1970: 1_700_000_000)
        cache.store("http://x/a", body: [1, 2, 3], freshness: Freshness(lifetime: 10, etag: "\"v1\""), now: then)
        let (entry, _) = try #require(cache.lookup("http://x/a"))
        #expect(!entry.isFresh(now: then.addingTimeInterval(20)))
        cache.refresh("http://x/a", entry: entry, freshness: Freshness(lifetime: 10), now: then.addingTimeInterval(20))
        let (refreshed, body) = try #require(cache.lookup("http://x/a"))
        #expect(refreshed.isFresh(now: then.addingTimeInterval(25)) && refreshed.etag == "\"v1\"" && body == [1, 2, 3])
        #expect(!Freshness(headers: [:]).isCacheable)
        cache.store("http://x/uncacheable", body: [1], freshness: Freshness(headers: [:]))
        #expect(cache.lookup("http://x/uncacheable") == nil)
    }
}

@Suite struct RequestMergerTests {
    @Test func concurrentCallersShareOneRun() async throws {
        let merger = RequestMerger<Int>()
        let runs = Counter()
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        Thread.detachNewThread {
                            let result = try? merger.run("same") { () throws(DeriveError) -> Int in
                                runs.increment()
                                Thread.sleep(forTimeInterval: 0.3)
                                return 42
                            }
                            continuation.resume(returning: (result?.value ?? -1, result?.leader ?? false))
                        }
                    }
                }
            }
            var all: [(Int, Bool)] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.allSatisfy { $0.0 == 42 })
        #expect(runs.value == 1 && results.filter(\.1).count == 1)
        #expect(merger.inFlight == 0)
        // Errors are shared the same way, and the next call runs again.
        #expect(throws: DeriveError.self) { try merger.run("same") { () throws(DeriveError) -> Int in throw DeriveError(.sourceUnavailable, "down") } }
        #expect(try merger.run("same") { () throws(DeriveError) -> Int in 7 }.value == 7)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
