import DeriveLanguage

/// Which addresses a source may be fetched from. By default only globally routable ones:
/// loopback, private, link-local (169.254.169.254 too), multicast, unspecified, documentation
/// and every other special-purpose range are refused, for IPv4 and IPv6 alike. An allowlist of
/// host names and address ranges opts back in (internal origins, tests).
///
/// The fetcher applies this to the address it is about to connect to, after DNS and after every
/// redirect, so a name that resolves differently between a check and the connection gains
/// nothing.
public struct AddressPolicy: Sendable, Hashable {
    /// Exact host names, or `*.example.com` for any subdomain.
    public var allowedHosts: [String]
    public var allowedNetworks: [CIDR]

    public init(allowedHosts: [String] = [], allowedNetworks: [CIDR] = []) {
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
        self.allowedNetworks = allowedNetworks
    }

    /// Parses an allowlist such as `127.0.0.1/32, internal.example.com, *.svc.local, ::1`.
    public static func parse(_ text: String) throws(ValidationError) -> AddressPolicy {
        var hosts: [String] = []
        var networks: [CIDR] = []
        for entry in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\n" }).map(String.init) {
            if let network = CIDR.parse(entry) {
                networks.append(network)
            } else if entry.contains("/") || entry.isEmpty {
                throw ValidationError(location: "DERIVE_FETCH_ALLOW", reason: "\(Quoted(entry)) is neither a host name nor an address range such as 10.0.0.0/8")
            } else {
                hosts.append(entry)
            }
        }
        return AddressPolicy(allowedHosts: hosts, allowedNetworks: networks)
    }

    public func allowsHost(_ host: String) -> Bool {
        let host = Self.normalised(host)
        return allowedHosts.contains { pattern in
            if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) && host.count > pattern.count - 1 }
            return pattern == host
        }
    }

    /// Why connecting to `address` for `host` is refused, or nil when it is allowed.
    public func refusal(host: String, address: IPAddress) -> String? {
        if allowsHost(host) { return nil }
        if allowedNetworks.contains(where: { $0.contains(address) }) { return nil }
        guard let range = address.specialRange else { return nil }
        let via = range.via.map { " through \($0)" } ?? ""
        let single: String
        if case .v4 = address { single = "\(address)/32" } else { single = "\(address)/128" }
        return "\(Self.normalised(host)) resolves to \(address), a \(range.kind.rawValue) address (\(range.network)\(via)); sources must be globally routable unless allowed with DERIVE_FETCH_ALLOW (such as \(single) or the host name)"
    }

    /// Lowercased, without brackets or a trailing dot: the form hosts are compared in.
    public static func normalised(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}
