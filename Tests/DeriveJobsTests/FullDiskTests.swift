import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// A folder store on a full disk: the write fails as a retryable storage error (it used to
/// trap inside Foundation and take the worker down) and leaves nothing behind, neither the
/// object nor its temporary file.
@Suite(.enabled(if: SmallDisk.available, "needs root to mount a small filesystem"))
struct FullDiskTests {
    @Test(arguments: [false, true])
    func aWriteThatMeetsAFullDiskFailsRetryablyAndLeavesNothing(fromFile: Bool) throws {
        let disk = try SmallDisk(bytes: 32 * 1024)
        let store = FileAssetStore(root: disk.root.appendingPathComponent("store"))
        let body = [UInt8](repeating: 7, count: 256 * 1024)
        let key = try StorageKey("abc/thumb.webp")
        let error = #expect(throws: DeriveError.self) {
            if fromFile {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("derive-body-\(UUID().uuidString)")
                defer { try? FileManager.default.removeItem(at: file) }
                try Data(body).write(to: file)
                _ = try store.put(file: file, key: key, contentType: "image/webp")
            } else {
                _ = try store.put(body, key: key, contentType: "image/webp")
            }
        }
        #expect(error?.code == .storageFailed)
        #expect(error?.isRetryable == true)
        #expect(error.map { "\($0)".contains("space") } == true, "\(String(describing: error))")
        let left = FileManager.default.enumerator(atPath: disk.root.path)?.allObjects as? [String] ?? []
        #expect(left.allSatisfy { !$0.hasSuffix(".tmp") && !$0.hasSuffix(".webp") }, "\(left)")

        // Room again: the same write succeeds.
        try disk.grow(to: 4 << 20)
        _ = try store.put(body, key: key, contentType: "image/webp")
        #expect(try store.get(key) == body)
    }
}
