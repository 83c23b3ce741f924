import DeriveLanguage

/// An IPv4 or IPv6 address, parsed strictly, with the classification the fetcher's SSRF guard
/// uses: which special-purpose range (IANA registries) an address falls in, if any.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    /// Sixteen bytes, network order.
    case v6([UInt8])

    // MARK: - Parsing

    /// A literal address: dotted-quad IPv4, or IPv6 (optionally in brackets). Zone ids are
    /// refused: they name an interface, which a URL from outside must not choose.
    public static func parse(_ text: String) -> IPAddress? {
        var text = Substring(text)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if text.contains(":") { return parseV6(text) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let n = UInt32(part), n <= 255 else { return nil }
            value = value << 8 | n
        }
        return .v4(value)
    }

    /// A URL host as browsers and libcurl read it: IPv4 may be written in 1–4 parts, each
    /// decimal, octal (leading 0) or hexadecimal (0x), so `2130706433`, `0177.0.0.1`, `0x7f.1`
    /// and `127.1` are all 127.0.0.1. Returns nil for a host name.
    public static func parseHost(_ host: String) -> IPAddress? {
        if host.hasPrefix("[") { return parse(host) }
        var parts = host.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count > 1 && parts.last == "" { parts.removeLast() }
        guard (1...4).contains(parts.count), let last = parts.last, !last.isEmpty, number(last) != nil else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard let n = number(part) else { return nil }
            numbers.append(n)
        }
        for n in numbers.dropLast() where n > 255 { return nil }
        let lastLimit = UInt64(1) << (8 * UInt64(5 - numbers.count))
        guard numbers.last! < lastLimit else { return nil }
        var value = numbers.last!
        for (i, n) in numbers.dropLast().enumerated() { value += n << (8 * UInt64(3 - i)) }
        return .v4(UInt32(value))
    }

    /// One part of a WHATWG IPv4 host: decimal, 0-prefixed octal, or 0x-prefixed hexadecimal.
    static func number(_ part: Substring) -> UInt64? {
        guard !part.isEmpty, part.count <= 34, part.allSatisfy(\.isASCII) else { return nil }
        let lower = part.lowercased()
        if lower.hasPrefix("0x") {
            let digits = lower.dropFirst(2)
            return digits.isEmpty ? 0 : UInt64(digits, radix: 16)
        }
        if lower.count > 1 && lower.hasPrefix("0") { return UInt64(lower.dropFirst(), radix: 8) }
        return UInt64(lower, radix: 10)
    }

    static func parseV6(_ text: Substring) -> IPAddress? {
        guard !text.contains("%"), text.count <= 45 else { return nil }
        var head: [UInt16] = [], tail: [UInt16] = []
        let halves = text.components(separatedBy: "::")
        guard halves.count <= 2 else { return nil }
        func groups(_ s: String, allowV4: Bool) -> [UInt16]? {
            if s.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = s.split(separator: ":", omittingEmptySubsequences: false)
            for (i, piece) in pieces.enumerated() {
                if allowV4 && i == pieces.count - 1 && piece.contains(".") {
                    guard case .v4(let v)? = parse(String(piece)) else { return nil }
                    result += [UInt16(v >> 16), UInt16(v & 0xFFFF)]
                } else {
                    guard (1...4).contains(piece.count), let n = UInt16(piece, radix: 16) else { return nil }
                    result.append(n)
                }
            }
            return result
        }
        if halves.count == 2 {
            guard let h = groups(halves[0], allowV4: false), let t = groups(halves[1], allowV4: true), h.count + t.count <= 7 else { return nil }
            head = h
            tail = t
        } else {
            guard let all = groups(halves[0], allowV4: true), all.count == 8 else { return nil }
            head = all
        }
        let words = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        return .v6(words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
    }

    public var description: String {
        switch self {
        case .v4(let v):
            return "\(v >> 24).\(v >> 16 & 0xFF).\(v >> 8 & 0xFF).\(v & 0xFF)"
        case .v6(let bytes):
            let words = (0..<8).map { UInt16(bytes[$0 * 2]) << 8 | UInt16(bytes[$0 * 2 + 1]) }
            // Compress the longest run of zero words (RFC 5952).
            var best = (start: -1, length: 0), run = (start: -1, length: 0)
            for (i, w) in words.enumerated() {
                if w == 0 {
                    run = run.start < 0 ? (i, 1) : (run.start, run.length + 1)
                    if run.length > best.length { best = run }
                } else {
                    run = (-1, 0)
                }
            }
            let hex = words.map { String($0, radix: 16) }
            guard best.length > 1 else { return hex.joined(separator: ":") }
            let left = hex[..<best.start].joined(separator: ":")
            let right = hex[(best.start + best.length)...].joined(separator: ":")
            return left + "::" + right
        }
    }

    /// The IPv4 address embedded in an IPv4-mapped, NAT64 or 6to4 IPv6 address.
    var embeddedV4: IPAddress? {
        guard case .v6(let b) = self else { return nil }
        func v4(at i: Int) -> IPAddress { .v4(UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])) }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return v4(at: 12) }
        if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0][...] { return v4(at: 12) }
        if b[0] == 0x20 && b[1] == 0x02 { return v4(at: 2) }
        return nil
    }

    // MARK: - Classification

    /// The special-purpose range this address is in, or nil for a globally routable address.
    public var specialRange: SpecialRange? {
        switch self {
        case .v4:
            return SpecialRange.ipv4.first { $0.network.contains(self) }
        case .v6:
            if let inner = embeddedV4 {
                // An IPv4 address in IPv6 form (mapped, NAT64, 6to4) is whatever that IPv4 is.
                guard let range = inner.specialRange else { return nil }
                let prefix = SpecialRange.ipv6.first { $0.network.contains(self) && $0.kind == .embedsIPv4 }?.network
                return SpecialRange(network: range.network, kind: range.kind, via: prefix)
            }
            if let range = SpecialRange.ipv6.first(where: { $0.network.contains(self) && $0.kind != .embedsIPv4 }) { return range }
            // Only 2000::/3 is global unicast; the rest of the space is reserved.
            if case .v6(let b) = self, b[0] & 0xE0 != 0x20 {
                return SpecialRange(network: CIDR(.v6([UInt8](repeating: 0, count: 16)), 0), kind: .reserved)
            }
            return nil
        }
    }
}

/// An address range: `10.0.0.0/8`, `fe80::/10`.
public struct CIDR: Sendable, Hashable, CustomStringConvertible {
    public var address: IPAddress
    public var prefixLength: Int

    public init(_ address: IPAddress, _ prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    /// `10.0.0.0/8`, `::1/128`, or a single address (`127.0.0.1` means /32).
    public static func parse(_ text: String) -> CIDR? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress.parse(String(parts[0])) else { return nil }
        let bits: Int
        if case .v4 = address { bits = 32 } else { bits = 128 }
        guard parts.count == 2 else { return CIDR(address, bits) }
        guard let prefix = Int(parts[1]), (0...bits).contains(prefix) else { return nil }
        return CIDR(address, prefix)
    }

    public func contains(_ other: IPAddress) -> Bool {
        switch (address, other) {
        case (.v4(let a), .v4(let b)):
            guard prefixLength > 0 else { return true }
            let mask = prefixLength >= 32 ? UInt32.max : ~(UInt32.max >> UInt32(prefixLength))
            return a & mask == b & mask
        case (.v6(let a), .v6(let b)):
            var remaining = prefixLength
            for i in 0..<16 where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a[i] & mask != b[i] & mask { return false }
                remaining -= bits
            }
            return true
        default:
            return false
        }
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

/// A special-purpose range and why a source there is refused.
public struct SpecialRange: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case unspecified, loopback, `private` = "private", sharedAddressSpace = "shared address space (carrier-grade NAT)"
        case linkLocal = "link-local", protocolAssignments = "IETF protocol assignment", documentation
        case benchmarking, multicast, reserved, broadcast, uniqueLocal = "unique local", discard = "discard-only"
        case embedsIPv4 = "IPv4-embedding"
    }

    public var network: CIDR
    public var kind: Kind
    /// For an IPv4 range reached through an IPv6 form (mapped, NAT64, 6to4), that prefix.
    public var via: CIDR?

    init(network: CIDR, kind: Kind, via: CIDR? = nil) {
        self.network = network
        self.kind = kind
        self.via = via
    }

    static func range(_ text: String, _ kind: Kind) -> SpecialRange { SpecialRange(network: CIDR.parse(text)!, kind: kind) }

    /// IANA IPv4 Special-Purpose Address Registry: the ranges not globally reachable.
    static let ipv4: [SpecialRange] = [
        range("0.0.0.0/32", .unspecified), range("0.0.0.0/8", .reserved), range("10.0.0.0/8", .private),
        range("100.64.0.0/10", .sharedAddressSpace), range("127.0.0.0/8", .loopback), range("169.254.0.0/16", .linkLocal),
        range("172.16.0.0/12", .private), range("192.0.0.0/24", .protocolAssignments), range("192.0.2.0/24", .documentation),
        range("192.88.99.0/24", .reserved), range("192.168.0.0/16", .private), range("198.18.0.0/15", .benchmarking),
        range("198.51.100.0/24", .documentation), range("203.0.113.0/24", .documentation), range("224.0.0.0/4", .multicast),
        range("255.255.255.255/32", .broadcast), range("240.0.0.0/4", .reserved),
    ]

    /// IANA IPv6 Special-Purpose Address Registry, and the prefixes that embed an IPv4 address
    /// (classified by that address).
    static let ipv6: [SpecialRange] = [
        range("::/128", .unspecified), range("::1/128", .loopback), range("::ffff:0:0/96", .embedsIPv4),
        range("64:ff9b::/96", .embedsIPv4), range("64:ff9b:1::/48", .private), range("::/96", .reserved),
        range("100::/64", .discard), range("2001:db8::/32", .documentation), range("2001::/23", .protocolAssignments),
        range("2002::/16", .embedsIPv4), range("3fff::/20", .documentation), range("5f00::/16", .reserved),
        range("fc00::/7", .uniqueLocal), range("fe80::/10", .linkLocal), range("fec0::/10", .private),
        range("ff00::/8", .multicast),
    ]
}
