import Foundation

/// The files of a corpus: a file itself, or every regular file under a folder, in name order
/// (a replay that fails names the same file each time).
public enum FuzzFiles {
    public static func list(_ path: String) -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { return [path] }
        let names = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String]) ?? []
        return names.sorted().map { path + "/" + $0 }.filter {
            var folder: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &folder) && !folder.boolValue && !$0.hasSuffix("/README.md")
        }
    }
}
