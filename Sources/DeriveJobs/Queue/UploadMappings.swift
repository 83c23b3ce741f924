import DeriveLanguage

/// One of Cloudinary's upload mappings (auto-upload): the first delivery of a public id in
/// `folder` (`<folder>/<path>`) that Derive has not recorded fetches `<template><path>` and
/// records it as an upload, so an application can move its images to Derive by changing the
/// address of its image URLs and nothing else.
public struct UploadMapping: Sendable, Equatable {
    /// A folder of public ids, without slashes at either end (`remote_media`, `shop/legacy`).
    public var folder: String
    /// The URL prefix the rest of the public id is appended to (`https://images.example.com/`).
    public var template: String

    public init(folder: String, template: String) {
        self.folder = folder
        self.template = template
    }
}

/// Where `derive serve` keeps its upload mappings, per cloud (Migrations/0018), so every serve
/// process sharing the database maps the same folders. Each store implements it.
public protocol UploadMappings: Sendable {
    /// The cloud's mappings in folder order, at most `limit`, those after the folder `after`.
    func uploadMappings(cloud: String, after: String?, limit: Int) throws(DeriveError) -> [UploadMapping]

    /// The mapping of exactly `folder`, or nil.
    func uploadMapping(cloud: String, folder: String) throws(DeriveError) -> UploadMapping?

    /// Adds `mapping`; false (and nothing changes) when its folder is mapped already.
    func createUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool

    /// Sets the template of the folder's mapping; false when the folder is not mapped.
    func updateUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool

    /// Forgets the folder's mapping (the assets it brought stay); false when there was none.
    func deleteUploadMapping(cloud: String, folder: String) throws(DeriveError) -> Bool
}

extension UploadMappings {
    /// The mapping of the deepest folder `publicID` is in (`a/b/c.jpg` looks at `a/b`, then
    /// `a`), or nil. At most 8 folders deep are looked at: this runs for every public id that
    /// is not recorded.
    public func uploadMapping(cloud: String, containing publicID: String) throws(DeriveError) -> UploadMapping? {
        let parts = publicID.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 1 else { return nil }
        for depth in stride(from: min(parts.count - 1, 8), through: 1, by: -1) {
            if let mapping = try uploadMapping(cloud: cloud, folder: parts.prefix(depth).joined(separator: "/")) { return mapping }
        }
        return nil
    }
}
