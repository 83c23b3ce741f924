import ArgumentParser
import DeriveLanguage

/// `--tag` and `--context key=value`: the asset's tags and context (Cloudinary's), which the
/// job carries, the store keeps on the asset's row and conditions read (`if_!sale!_in_tags`,
/// `if_ctx:!productType!_eq_!shoes!`). Shared by `derive run`, `submit`, `upload` and `explain`.
struct AssetOptions: ParsableArguments {
    @Option(name: .customLong("tag"), help: "A tag of the asset (repeat for several), for conditions such as if_!sale!_in_tags.")
    var tags: [String] = []

    @Option(name: .customLong("context"), help: "A context entry of the asset, key=value (repeat for several), for conditions such as if_ctx:!key!_eq_!value!.")
    var context: [String] = []

    /// The flags' facts over the document's: tags added, context entries replacing the
    /// document's of the same key. Every bad value is reported at once.
    func applied(to document: AssetFacts) throws -> AssetFacts {
        var entries = document.context
        var problems: [String] = []
        for text in context {
            guard let (key, value) = AssetFacts.contextEntry(text) else {
                problems.append("--context \(Quoted(text)): write key=value")
                continue
            }
            entries[key] = value
        }
        let facts = AssetFacts(tags: document.tags + tags, context: entries)
        problems += facts.issues.map { "--tag/--context: \($0)" }
        if !problems.isEmpty { throw CLIError(problems.joined(separator: "\n")) }
        return facts
    }
}
