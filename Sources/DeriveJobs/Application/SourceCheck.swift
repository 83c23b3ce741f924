import DeriveLanguage
import DeriveDigest
import Foundation

/// Asks a source's origin whether it changed. A `304`, or the same content hash, costs that
/// one request and nothing else; changed content gets the outputs the old content had, derived
/// again (its completion records the new asset and moves the source to a new version).
package struct SourceCheck {
    let database: any JobStore & ReprocessStore
    let fetcher: any SourceFetcher

    package init(database: any JobStore & ReprocessStore, fetcher: any SourceFetcher) {
        self.database = database
        self.fetcher = fetcher
    }

    package func run(_ url: String, queue: String, priority: Int) throws(DeriveError) -> JSONValue {
        guard let state = try database.source(url) else {
            throw DeriveError(.invalidJob, "no source \(Quoted(Redacted.url(url))) is recorded: only sources of derived assets can be checked")
        }
        guard let fetched = try fetcher.revalidate(url, etag: state.etag, lastModified: state.lastModified) else {
            try database.sourceUnchanged(url, etag: nil, lastModified: nil)
            return .object(["source": .string(Redacted.url(url)), "outcome": .string("not-modified")])
        }
        let sha = ContentHash.sha256(fetched.image.bytes)
        let (presets, outputs) = try database.derivationsOf(assetSHA256: state.assetSHA256)
        // A PSD selection's outputs are recorded under an asset of their own (the hash of the
        // document's hash and the selection, `JobPipeline.recordHash`): the document is the
        // same when it and one of the recorded outputs' selections make that hash.
        guard sha != state.assetSHA256,
              !Self.selections(outputs).contains(where: { JobPipeline.recordHash(sourceHash: sha, selection: $0) == state.assetSHA256 }) else {
            try database.sourceUnchanged(url, etag: fetched.etag, lastModified: fetched.lastModified)
            return .object(["source": .string(Redacted.url(url)), "outcome": .string("unchanged")])
        }
        var jobs = presets.map { preset in
            NewJob(payload: .object([JSONMember(key: "version", value: .int(1)), JSONMember(key: "source", value: .string(url)),
                                     JSONMember(key: "preset", value: .string(preset))] + state.asset.documentMembers), queue: queue, priority: priority,
                   dedupeKey: "changed:\(preset):\(sha)")
        }
        if !outputs.isEmpty {
            jobs.append(NewJob(payload: .object([JSONMember(key: "version", value: .int(1)), JSONMember(key: "source", value: .string(url)),
                                                 JSONMember(key: "outputs", value: .array(outputs))] + state.asset.documentMembers), queue: queue,
                               priority: priority, dedupeKey: "changed::\(sha)"))
        }
        let submitted = try database.submit(jobs)
        return .object([
            "source": .string(Redacted.url(url)), "outcome": .string("changed"), "sha256": .string(sha),
            "jobs": .array(submitted.map { .int(Int($0.id)) }),
        ])
    }

    /// The PSD selections (`"psd"`) of recorded outputs, as their chains were written; an output
    /// that does not read back (or has none) adds nothing.
    static func selections(_ outputs: [JSONValue]) -> Set<PSDSelection> {
        var found = Set<PSDSelection>()
        for output in outputs {
            guard case .object(let members) = output, members.contains(where: { $0.key == "psd" }) else { continue }
            let payload = JSONValue.object([JSONMember(key: "version", value: .int(1)), JSONMember(key: "source", value: .string("/document.psd")),
                                            JSONMember(key: "outputs", value: .array([output]))])
            guard let spec = try? JSONChainDecoder().decodeJob(payload), let job = try? JobResolver().resolve(spec),
                  let selection = try? job.psdSelection() else { continue }
            found.insert(selection)
        }
        return found
    }
}
