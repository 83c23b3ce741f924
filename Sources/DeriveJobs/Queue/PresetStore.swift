import DeriveLanguage
import Foundation
import Synchronization

/// Named, versioned presets kept in the queue's database (`derive.presets`): saving a name
/// again makes a new version; jobs resolve the newest version that is not retired.
public protocol PresetStore: Sendable {
    /// Saves `outputs` (the job JSON's `outputs` array, already validated) as the next version
    /// of `name`; returns that version.
    func savePreset(name: String, outputs: JSONValue) throws(DeriveError) -> Int
    /// The newest version of each preset, retired ones too when asked.
    func presets(includingRetired: Bool) throws(DeriveError) -> [StoredPreset]
    /// Every version of one preset, newest first.
    func presetVersions(_ name: String) throws(DeriveError) -> [StoredPreset]
    /// Retires every version of `name`: jobs naming it fail; the rows stay for the record.
    /// Returns whether there was such a preset.
    func retirePreset(_ name: String) throws(DeriveError) -> Bool
}

public struct StoredPreset: Sendable, Equatable {
    public var name: String
    public var version: Int
    public var outputs: JSONValue
    public var createdAt: Date
    public var retiredAt: Date?

    public init(name: String, version: Int, outputs: JSONValue, createdAt: Date, retiredAt: Date?) {
        self.name = name
        self.version = version
        self.outputs = outputs
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// Presets for job resolution, read from the database and kept for a few seconds, so a busy
/// worker does not ask for the same preset for every job, and a new version is picked up soon.
public final class DatabasePresetCatalog: PresetCatalog {
    private let store: any PresetStore
    private let ttl: Double
    private let cached = Mutex<(at: Date, presets: [String: StoredPreset])?>(nil)

    public init(store: any PresetStore, ttl: Double = 5) {
        self.store = store
        self.ttl = ttl
    }

    public func preset(named name: String) throws -> Preset? {
        let presets = try current()
        guard let stored = presets[name], stored.retiredAt == nil else { return nil }
        let outputs = try JSONChainDecoder().decodeOutputs(stored.outputs)
        return Preset(name: stored.name, version: stored.version, outputs: outputs)
    }

    private func current() throws(DeriveError) -> [String: StoredPreset] {
        if let known = cached.withLock({ $0 }), Date().timeIntervalSince(known.at) < ttl { return known.presets }
        let fresh = Dictionary(try store.presets(includingRetired: false).map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        cached.withLock { $0 = (Date(), fresh) }
        return fresh
    }
}
