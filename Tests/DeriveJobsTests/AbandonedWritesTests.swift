@testable import DeriveLanguage
@testable import DeriveJobs
import Foundation
import Testing

/// Removing what writers killed mid-write left in a folder store: only the store's own
/// temporary files, only once they are older than the threshold.
@Suite struct AbandonedWritesTests {
    static let id = "0F8E2C8A-6B1D-4C3E-9A7F-2D5B8E1C4A90"

    @Test func onlyTheExactTemporaryNameTheStoreWritesMatches() {
        // What the store writes, for every kind of key segment.
        for name in ["thumb-0123456789abcdef.webp", "photo.jpg", "a", "x_y-z.1.2", ".hidden"] {
            let written = AbandonedWrites.temporaryName(for: name)
            #expect(AbandonedWrites.isTemporaryName(written), "\(written)")
        }
        #expect(AbandonedWrites.temporaryName(for: "thumb.webp", id: UUID(uuidString: Self.id)!) == ".thumb.webp.\(Self.id).tmp")
        #expect(AbandonedWrites.isTemporaryName(".thumb.webp.\(Self.id).tmp"))
        // Resembling it in a different form is not enough.
        for name in [
            "thumb.webp.\(Self.id).tmp",                  // no leading dot
            ".thumb.webp.\(Self.id.lowercased()).tmp",    // a UUID the store does not spell
            ".thumb.webp.\(Self.id).tmp.bak",             // something after .tmp
            ".thumb.webp.\(Self.id).temp",
            ".thumb.webp-\(Self.id).tmp",                 // no dot before the UUID
            ".thumb.webp.\(Self.id.dropLast()).tmp",      // a UUID one digit short
            ".thumb.webp.\(Self.id.replacingOccurrences(of: "-", with: "")).tmp",
            ".thumb.webp.ZZZZZZZZ-6B1D-4C3E-9A7F-2D5B8E1C4A90.tmp",
            ".\(Self.id).tmp", "..\(Self.id).tmp",        // no name
            "...\(Self.id).tmp", "....\(Self.id).tmp",    // "." and ".." are no names
            ".th umb.\(Self.id).tmp",                     // not a key segment
            ".thumb.webp.tmp", ".tmp", "thumb.webp", "",
        ] {
            #expect(!AbandonedWrites.isTemporaryName(name), "\(name)")
        }
    }

    static func makeRoot() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("derive-abandoned-\(UUID().uuidString)")
    }

    /// Writes a file and sets its modification time.
    static func file(_ url: URL, modified: Date, contents: String = "partial") throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
        let set = try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
        #expect(abs((set ?? .distantFuture).timeIntervalSince(modified)) < 1, "the modification time of \(url.lastPathComponent) was set")
    }

    @Test func oldTemporaryFilesGoAndEverythingElseStays() throws {
        let root = Self.makeRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let store = FileAssetStore(root: root)
        let files = FileManager.default
        let hash = String(repeating: "ab", count: 32)
        // Real outputs and an original, written by the store.
        let output = try StorageKey("\(hash)/thumb-0123456789abcdef.webp")
        let original = try StorageKey("originals/\(hash).jpg")
        _ = try store.put(Array("output".utf8), key: output, contentType: "image/webp")
        _ = try store.put(Array("original".utf8), key: original, contentType: "image/jpeg")
        let now = Date()
        let old = now.addingTimeInterval(-2 * 3600)
        // What killed writers left: beside an output and beside an original, two hours ago.
        let abandoned = [
            root.appendingPathComponent(hash).appendingPathComponent(AbandonedWrites.temporaryName(for: "thumb-0123456789abcdef.webp")),
            root.appendingPathComponent("originals").appendingPathComponent(AbandonedWrites.temporaryName(for: "\(hash).jpg")),
        ]
        for url in abandoned { try Self.file(url, modified: old) }
        // A write in progress: the store's name, a minute old.
        let fresh = root.appendingPathComponent(hash).appendingPathComponent(AbandonedWrites.temporaryName(for: "card.avif"))
        try Self.file(fresh, modified: now.addingTimeInterval(-60))
        // Old files that only resemble the store's, an old real output, and an old folder with
        // the store's name pattern: all stay.
        let lookalikes = [
            "\(hash)/thumb.webp.\(Self.id).tmp", "\(hash)/.thumb.webp.\(Self.id.lowercased()).tmp", "\(hash)/.thumb.webp.tmp",
            "\(hash)/.thumb.webp.\(Self.id).tmp.bak", "notes/.draft.\(Self.id).temp",
        ].map { root.appendingPathComponent($0) }
        for url in lookalikes { try Self.file(url, modified: old) }
        try files.setAttributes([.modificationDate: old], ofItemAtPath: store.path(output).path)
        let folderNamedLikeOne = root.appendingPathComponent(".folder.\(Self.id).tmp")
        try files.createDirectory(at: folderNamedLikeOne, withIntermediateDirectories: true)
        try files.setAttributes([.modificationDate: old], ofItemAtPath: folderNamedLikeOne.path)
        // A link named like one, to a file outside the store: neither followed nor removed.
        let outside = root.deletingLastPathComponent().appendingPathComponent("derive-outside-\(UUID().uuidString)")
        try Self.file(outside, modified: old)
        defer { try? files.removeItem(at: outside) }
        let link = root.appendingPathComponent(hash).appendingPathComponent(".link.\(Self.id).tmp")
        try files.createSymbolicLink(at: link, withDestinationURL: outside)

        for url in abandoned + [fresh] + lookalikes { #expect(files.fileExists(atPath: url.path), "\(url.path) exists before the sweep") }
        let sweep = try store.removeAbandonedWrites(olderThan: now.addingTimeInterval(-3600))
        #expect(Set(sweep.removed) == Set(abandoned.map { String($0.path.dropFirst(root.path.count + 1)) }), "\(sweep.removed)")
        #expect(sweep.removed.count == 2 && sweep.failures.isEmpty, "\(sweep)")
        for url in abandoned { #expect(!files.fileExists(atPath: url.path), "\(url.lastPathComponent) was removed") }
        for url in [fresh, folderNamedLikeOne, outside] + lookalikes { #expect(files.fileExists(atPath: url.path), "\(url.path) stays") }
        #expect((try? files.destinationOfSymbolicLink(atPath: link.path)) == outside.path, "the link stays")
        #expect(try store.get(output) == Array("output".utf8) && store.get(original) == Array("original".utf8))

        // Nothing is left to remove; once the write in progress is old too, it goes.
        #expect(try store.removeAbandonedWrites(olderThan: now.addingTimeInterval(-3600)).removed.isEmpty)
        let later = try store.removeAbandonedWrites(olderThan: now.addingTimeInterval(-30))
        #expect(later.removed == ["\(hash)/\(fresh.lastPathComponent)"], "\(later)")
        #expect(try store.get(output) == Array("output".utf8))
    }

    @Test func aStoreNotWrittenYetHasNothingToRemove() throws {
        let root = Self.makeRoot()
        #expect(try FileAssetStore(root: root).removeAbandonedWrites(olderThan: Date()) == AbandonedWriteSweep())
        #expect(!FileManager.default.fileExists(atPath: root.path))
    }

    @Test func theAgeAndTheWorkersSweepsAreSettings() throws {
        let cwd = URL(fileURLWithPath: "/srv/derive")
        let defaults = try Configuration.load([:], workingDirectory: cwd)
        #expect(defaults.store.abandonedAfter == 3600 && defaults.worker.abandonedSweepInterval == 3600)
        let set = try Configuration.load(["DERIVE_ABANDONED_AFTER": "7200", "DERIVE_ABANDONED_SWEEP_INTERVAL": "0"], workingDirectory: cwd)
        #expect(set.store.abandonedAfter == 7200 && set.worker.abandonedSweepInterval == 0)
        do {
            _ = try Configuration.load(["DERIVE_ABANDONED_AFTER": "0", "DERIVE_ABANDONED_SWEEP_INTERVAL": "hourly"], workingDirectory: cwd)
            Issue.record("bad settings were accepted")
        } catch {
            #expect(Set(error.issues.map(\.location)) == ["DERIVE_ABANDONED_AFTER", "DERIVE_ABANDONED_SWEEP_INTERVAL"], "\(error)")
        }
    }
}
