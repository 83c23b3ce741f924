import DeriveLanguage
import DeriveJobs
import Dispatch
import Foundation
import Synchronization

/// Makes a small picture from an output's bytes: the dashboard shows outputs at a hundred
/// pixels or so, and a derivative is often 1800. The dashboard has no image library of its
/// own (it depends on the jobs module, not on libvips): the command that builds it passes one
/// in (`derive dashboard` and `derive work --dashboard` pass libvips' thumbnail).
public struct DashboardThumbnailer: Sendable {
    /// The bytes of a picture that fits within `width`×`height` (never enlarged), and their
    /// media type.
    public let make: @Sendable (_ bytes: [UInt8], _ width: Int, _ height: Int) throws -> (bytes: [UInt8], mediaType: String)

    public init(make: @escaping @Sendable (_ bytes: [UInt8], _ width: Int, _ height: Int) throws -> (bytes: [UInt8], mediaType: String)) {
        self.make = make
    }
}

/// Thumbnails made once and kept in memory, the least recently used dropped first once they
/// hold more than `limit` bytes.
final class ThumbnailCache: Sendable {
    struct Entry {
        var bytes: [UInt8]
        var mediaType: String
        var used: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var total = 0
        var clock: UInt64 = 0
    }

    let limit: Int
    private let state = Mutex(State())
    /// One thread makes every thumbnail, one after another: libvips' work stays off the
    /// cooperative pool, and a sheet's first load costs one core, not all of them.
    private let maker = DispatchQueue(label: "derive.dashboard.thumbnails")

    func make(_ bytes: [UInt8], width: Int, height: Int, with thumbnailer: DashboardThumbnailer) async throws -> (bytes: [UInt8], mediaType: String) {
        try await withCheckedThrowingContinuation { continuation in
            maker.async { continuation.resume(with: Result { try thumbnailer.make(bytes, width, height) }) }
        }
    }

    init(limit: Int) {
        self.limit = limit
    }

    func get(_ key: String) -> (bytes: [UInt8], mediaType: String)? {
        state.withLock { state in
            guard var entry = state.entries[key] else { return nil }
            state.clock += 1
            entry.used = state.clock
            state.entries[key] = entry
            return (entry.bytes, entry.mediaType)
        }
    }

    func put(_ key: String, bytes: [UInt8], mediaType: String) {
        guard bytes.count <= limit else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries[key] { state.total -= old.bytes.count }
            state.entries[key] = Entry(bytes: bytes, mediaType: mediaType, used: state.clock)
            state.total += bytes.count
            while state.total > limit, let oldest = state.entries.min(by: { $0.value.used < $1.value.used }) {
                state.entries[oldest.key] = nil
                state.total -= oldest.value.bytes.count
            }
        }
    }

    /// Bytes held (for tests).
    var bytes: Int { state.withLock { $0.total } }
}

extension Views {
    /// Where a picture is shown, with the box it is shown within (CSS pixels); its thumbnail
    /// fits twice that box (for screens with two device pixels to one).
    public enum PictureBox: String, Sendable, CaseIterable {
        /// The assets' contact sheet.
        case sheet
        /// A row of an asset's derivatives.
        case row
        /// A job's outputs on its page.
        case job

        public var shown: (width: Int, height: Int) {
            switch self {
            case .sheet: (250, 96)
            case .row: (160, 120)
            case .job: (240, 180)
            }
        }

        public var thumbnail: (width: Int, height: Int) { (shown.width * 2, shown.height * 2) }
    }
}
