import DeriveLanguage

extension MemoryJobQueue: UploadMappings {
    public func uploadMappings(cloud: String, after: String?, limit: Int) throws(DeriveError) -> [UploadMapping] {
        try withState { state, _ in
            (state.uploadMappings[cloud] ?? [:]).filter { mapping in after.map { mapping.key > $0 } ?? true }.sorted { $0.key < $1.key }
                .prefix(max(0, limit)).map { UploadMapping(folder: $0.key, template: $0.value) }
        }
    }

    public func uploadMapping(cloud: String, folder: String) throws(DeriveError) -> UploadMapping? {
        try withState { state, _ in state.uploadMappings[cloud]?[folder].map { UploadMapping(folder: folder, template: $0) } }
    }

    public func createUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool {
        try withState { state, _ in
            guard state.uploadMappings[cloud]?[mapping.folder] == nil else { return false }
            state.uploadMappings[cloud, default: [:]][mapping.folder] = mapping.template
            return true
        }
    }

    public func updateUploadMapping(_ mapping: UploadMapping, cloud: String) throws(DeriveError) -> Bool {
        try withState { state, _ in
            guard state.uploadMappings[cloud]?[mapping.folder] != nil else { return false }
            state.uploadMappings[cloud]?[mapping.folder] = mapping.template
            return true
        }
    }

    public func deleteUploadMapping(cloud: String, folder: String) throws(DeriveError) -> Bool {
        try withState { state, _ in state.uploadMappings[cloud]?.removeValue(forKey: folder) != nil }
    }
}
