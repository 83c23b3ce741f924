import DeriveLanguage
import Foundation

/// What interrupted writes leave in a store: a folder store's temporary file when its writer
/// was killed between writing and renaming, and an S3 store's multipart upload when its writer
/// was killed before completing or aborting it. Nothing else ever removes them, so any worker
/// (and `derive prune`) removes those older than an age no write takes.
public enum AbandonedWrites {
    /// `DERIVE_ABANDONED_AFTER`'s default: an hour, far longer than any write takes.
    public static let defaultAge: Double = 3600

    /// The temporary file a folder store writes an object named `name` through before renaming
    /// it over the key: `.<name>.<UUID>.tmp`, beside the key.
    public static func temporaryName(for name: String, id: UUID = UUID()) -> String {
        ".\(name).\(id.uuidString).tmp"
    }

    /// Whether a file name is exactly one that `temporaryName(for:)` makes: a dot, a key
    /// segment (`A-Z a-z 0-9 . _ -`), a dot, a UUID in upper case, `.tmp`. Anything merely
    /// resembling it is not the store's and is left alone.
    public static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return false }
        let inner = name.dropFirst().dropLast(4)             // <name>.<UUID>
        guard inner.count >= 38 else { return false }        // at least one character, a dot and 36
        let id = String(inner.suffix(36))
        let separator = inner.dropLast(36)
        guard separator.last == ".", UUID(uuidString: id)?.uuidString == id else { return false }
        let base = separator.dropLast()
        return !base.isEmpty && base != "." && base != ".."
            && base.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }
}

/// What one removal of abandoned (or unrecorded) writes did.
public struct AbandonedWriteSweep: Sendable, Equatable {
    /// What was removed: a folder store's files (relative to its root), an S3 store's uploads
    /// (`key (upload ID)`), or the keys of unrecorded writes.
    public var removed: [String] = []
    /// What could not be removed, with the reason; tried again at the next sweep.
    public var failures: [String] = []

    public init(removed: [String] = [], failures: [String] = []) {
        self.removed = removed
        self.failures = failures
    }
}
