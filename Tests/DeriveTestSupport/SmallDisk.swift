import Foundation

/// A filesystem of a few kilobytes that the test mounts (tmpfs with a size limit), for
/// writers that must meet a full disk: `grow` makes room again, as an operator freeing space
/// would. Unmounted and removed with the object. Needs root.
public final class SmallDisk: @unchecked Sendable {
    public let root: URL

    public static let available: Bool = {
        guard getuid() == 0 else { return false }
        let probe = try? SmallDisk(bytes: 64 * 1024)
        return probe != nil
    }()

    public init(bytes: Int) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("derive-disk-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        do {
            try Shell.run("mount -t tmpfs -o size=\(bytes),mode=0755 derive-test '\(root.path)'")
        } catch {
            try? FileManager.default.removeItem(at: root)
            throw error
        }
    }

    /// Changes the filesystem's size in place; what is on it stays.
    public func grow(to bytes: Int) throws {
        try Shell.run("mount -o remount,size=\(bytes) '\(root.path)'")
    }

    deinit {
        try? Shell.run("umount -l '\(root.path)'")
        try? FileManager.default.removeItem(at: root)
    }
}
