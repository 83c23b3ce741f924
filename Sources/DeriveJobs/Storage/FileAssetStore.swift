import DeriveLanguage
import Foundation

/// Objects as files under a root folder. Writes go to a temporary file in the same folder,
/// are flushed to disk, then renamed over the key, so a reader (or a crash) never sees half
/// an object. Keys are `StorageKey`s, which cannot leave the root.
public struct FileAssetStore: AssetStore {
    public let root: URL
    /// Prefix for object URLs (`https://cdn.example.com/`); without one, `file://` URLs.
    public let publicBaseURL: String?

    public init(root: URL, publicBaseURL: String? = nil) {
        self.root = root.standardizedFileURL
        self.publicBaseURL = publicBaseURL
    }

    public var description: String { "folder \(root.path)" }

    /// The file an object is kept in.
    public func path(_ key: StorageKey) -> URL { root.appendingPathComponent(key.value) }

    public func sourceLocation(of key: StorageKey) -> String { path(key).absoluteString }

    func url(_ key: StorageKey) -> String {
        if let base = publicBaseURL { return base.hasSuffix("/") ? base + key.value : base + "/" + key.value }
        return path(key).absoluteString
    }

    public func put(_ data: [UInt8], key: StorageKey, contentType: String) throws(DeriveError) -> StoredObject {
        try write(key) { handle in try handle.write(contentsOf: data) }
        return StoredObject(key: key, url: url(key), bytes: data.count)
    }

    public func put(file: URL, key: StorageKey, contentType: String) throws(DeriveError) -> StoredObject {
        guard let input = FileHandle(forReadingAtPath: file.path) else {
            throw DeriveError(.sourceRefused, "cannot read \(file.path)")
        }
        defer { try? input.close() }
        var total = 0
        try write(key) { handle in
            while true {
                guard let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty else { break }
                try handle.write(contentsOf: chunk)
                total += chunk.count
            }
        }
        return StoredObject(key: key, url: url(key), bytes: total)
    }

    public func get(_ key: StorageKey) throws(DeriveError) -> [UInt8]? {
        let target = path(key)
        guard FileManager.default.fileExists(atPath: target.path) else { return nil }
        guard let data = FileManager.default.contents(atPath: target.path) else {
            throw DeriveError(.storageFailed, "cannot read \(target.path)")
        }
        return [UInt8](data)
    }

    public func exists(_ key: StorageKey) throws(DeriveError) -> Bool {
        FileManager.default.fileExists(atPath: path(key).path)
    }

    public func delete(_ key: StorageKey) throws(DeriveError) {
        let target = path(key)
        guard FileManager.default.fileExists(atPath: target.path) else { return }
        do {
            try FileManager.default.removeItem(at: target)
        } catch {
            throw DeriveError(.storageFailed, "cannot delete \(target.path): \(error.localizedDescription)")
        }
    }

    /// Deletes the temporary files of writes whose writer died before renaming them: regular
    /// files named exactly as `write` names them (`AbandonedWrites.isTemporaryName`) and last
    /// modified before `cutoff`, anywhere under the root. Symbolic links are not followed.
    public func removeAbandonedWrites(olderThan cutoff: Date) throws(DeriveError) -> AbandonedWriteSweep {
        let files = FileManager.default
        var sweep = AbandonedWriteSweep()
        guard files.fileExists(atPath: root.path) else { return sweep }   // nothing written yet
        var folders = [root.path]
        while let folder = folders.popLast() {
            let names: [String]
            do {
                names = try files.contentsOfDirectory(atPath: folder)
            } catch {
                if folder == root.path { throw DeriveError(.storageFailed, "cannot list \(folder): \(error.localizedDescription)") }
                sweep.failures.append("\(relative(folder)): cannot list: \(error.localizedDescription)")
                continue
            }
            for name in names {
                let path = folder + "/" + name
                // lstat: a link is neither followed nor removed. Gone meanwhile: nothing to do.
                guard let attributes = try? files.attributesOfItem(atPath: path) else { continue }
                let type = attributes[.type] as? FileAttributeType
                if type == .typeDirectory {
                    folders.append(path)
                    continue
                }
                guard type == .typeRegular, AbandonedWrites.isTemporaryName(name),
                      let modified = attributes[.modificationDate] as? Date, modified < cutoff else { continue }
                if unlink(path) == 0 {
                    sweep.removed.append(relative(path))
                } else if errno != ENOENT {   // ENOENT: another sweeper was first
                    sweep.failures.append("\(relative(path)): \(String(cString: strerror(errno)))")
                }
            }
        }
        return sweep
    }

    private func relative(_ path: String) -> String {
        path.hasPrefix(root.path + "/") ? String(path.dropFirst(root.path.count + 1)) : path
    }

    /// Temporary file, fsync, rename, fsync of the folder: the rename is the commit. Writes
    /// go through FileHandle's throwing calls: its older `write(_:)` traps on ENOSPC, which
    /// took the whole worker down on a full disk.
    private func write(_ key: StorageKey, _ body: (FileHandle) throws -> Void) throws(DeriveError) {
        let target = path(key)
        let folder = target.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent(AbandonedWrites.temporaryName(for: target.lastPathComponent))
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
                throw DeriveError(.storageFailed, "cannot create \(temporary.path)")
            }
            let handle = try FileHandle(forWritingTo: temporary)
            do {
                try body(handle)
                try handle.synchronize()
                try handle.close()
            } catch {
                try? handle.close()
                throw error
            }
            guard rename(temporary.path, target.path) == 0 else {
                throw DeriveError(.storageFailed, "cannot move \(temporary.lastPathComponent) to \(target.path): \(String(cString: strerror(errno)))")
            }
            let directory = open(folder.path, O_RDONLY)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
        } catch let error as DeriveError {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw DeriveError(.storageFailed, "cannot write \(target.path): \(error.localizedDescription)")
        }
    }
}
