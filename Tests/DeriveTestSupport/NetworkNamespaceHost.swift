import Foundation

/// A second machine for fault tests: a Linux network namespace the test creates, joined to
/// this one by veth pairs ("links"), with chosen loopback services of this machine mirrored
/// into it on the same ports. A process started with `launcher` sees the test's PostgreSQL,
/// origin and S3 server at the same `127.0.0.1` URLs as every other process, but reaches
/// them over a link, which `cut` takes down (packets dropped, connections left hanging, as
/// when a host drops off the network) and `heal` brings back.
///
/// The links use 198.18.0.0/15, the range reserved for network tests (RFC 2544), and exist
/// only between this machine and the namespace. Needs root (CAP_NET_ADMIN) and `ip`.
public final class NetworkNamespaceHost: @unchecked Sendable {
    public let name: String
    /// The command prefix that runs a program on this host.
    public var launcher: [String] { [Self.ip, "netns", "exec", name] }
    private var links: [String: Link] = [:]
    private var forwarders: [Process] = []
    private static let ip = "/usr/sbin/ip"

    struct Link {
        /// The veth end on this machine (the one `cut` takes down).
        var device: String
        /// This machine's address on the link, and the host's.
        var local: String
        var remote: String
    }

    /// Whether this machine lets a test create namespaces and links (root with `ip`).
    public static let available: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: ip) else { return false }
        let probe = "derive-probe-\(UUID().uuidString.prefix(6))"
        defer { try? Shell.run("\(ip) netns del \(probe)") }
        return (try? Shell.run("\(ip) netns add \(probe)")) != nil
    }()

    /// Creates the namespace and one link per label (`["database", "services"]`), each
    /// its own /30 so one can be cut while the others carry on.
    public init(links labels: [String]) throws {
        let id = String(UUID().uuidString.prefix(4).lowercased())
        name = "derive-\(id)"
        try Shell.run("\(Self.ip) netns add \(name) && \(Self.ip) -n \(name) link set lo up")
        // A /30 per link in 198.18.0.0/15: the third octet from the id, the fourth per link.
        let subnet = Int(id.prefix(2), radix: 16)!
        for (index, label) in labels.enumerated() {
            let device = "dv\(id)\(index)", peer = "dg\(id)\(index)"
            let link = Link(device: device, local: "198.18.\(subnet).\(index * 4 + 1)", remote: "198.18.\(subnet).\(index * 4 + 2)")
            try Shell.run("""
                \(Self.ip) link add \(device) type veth peer name \(peer) netns \(name)
                \(Self.ip) addr add \(link.local)/30 dev \(device) && \(Self.ip) link set \(device) up
                \(Self.ip) -n \(name) addr add \(link.remote)/30 dev \(peer) && \(Self.ip) -n \(name) link set \(peer) up
                """)
            links[label] = link
        }
    }

    deinit {
        for process in forwarders {
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { Thread.sleep(forTimeInterval: 0.02) }
        }
        // Deleting the namespace deletes its veth ends, and with them this machine's.
        try? Shell.run("\(Self.ip) netns del \(name)")
    }

    /// Makes this machine's `127.0.0.1:port` reachable on the host at its own
    /// `127.0.0.1:port`, through `link`: a forwarder on this machine's end of the link and
    /// one on the host's loopback.
    public func mirror(port: Int, over label: String) throws {
        let link = try self.link(label)
        let script = Paths.repository.appendingPathComponent("Tests/Servers/forward.py").path
        try start(["/usr/bin/env", "python3", script, String(port), "127.0.0.1", String(port), link.local])
        try start(launcher + ["/usr/bin/env", "python3", script, String(port), link.local, String(port)])
        let check = "import socket; socket.create_connection(('127.0.0.1', \(port)), 1)"
        let deadline = Date().addingTimeInterval(20)
        while (try? Shell.run("\(launcher.joined(separator: " ")) python3 -c \"\(check)\"")) == nil {
            guard Date() < deadline else { throw Shell.Failed(description: "port \(port) never answered on \(name)") }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Takes the link down: whatever the host sends over it is lost until `heal`.
    public func cut(_ label: String) throws { try Shell.run("\(Self.ip) link set \(try link(label).device) down") }

    public func heal(_ label: String) throws { try Shell.run("\(Self.ip) link set \(try link(label).device) up") }

    private func link(_ label: String) throws -> Link {
        guard let link = links[label] else { throw Shell.Failed(description: "\(name) has no link \(label)") }
        return link
    }

    private func start(_ words: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: words[0])
        process.arguments = Array(words.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        forwarders.append(process)
    }
}
