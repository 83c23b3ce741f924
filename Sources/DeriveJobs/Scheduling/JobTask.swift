import DeriveLanguage

/// The jobs that are not derivations: a job document with `"task"` names one of these, and a
/// worker expands or runs it instead of deriving.
public enum JobTask: String, Sendable, CaseIterable {
    /// Enqueue a derivation for each asset a preset should be derived again for.
    case reprocess
    /// Enqueue a source check for each source due to be asked again.
    case revalidate
    /// Ask one source's origin whether it changed, and derive again if it did.
    case checkSource = "check-source"
}
