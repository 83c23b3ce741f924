/// The one entry point for transformation text as people type it: JSON (a job, an outputs
/// object, an output, or a chain array) or a Cloudinary string.
public enum TransformationInput {
    /// Parses `text` into a job. A Cloudinary string becomes one output named `default`.
    public static func parse(_ text: String, limits: ChainLimits = .default) throws(ValidationError) -> JobSpec {
        let trimmed = text.drop(while: { $0.isWhitespace })
        if trimmed.hasPrefix("{") || trimmed.hasPrefix("[") {
            return try JSONChainDecoder(limits: limits).decodeDocument(JSONChainDecoder.parse(text))
        }
        return JobSpec(source: nil, outputs: [try output(named: "default", transformation: text, limits: limits)])
    }

    /// One output from a Cloudinary string, with settings checked under their parameter names.
    public static func output(named name: String, transformation: String, limits: ChainLimits = .default) throws(ValidationError) -> OutputSpec {
        let parsed = CloudinaryParser(limits: limits).parse(transformation)
        let issues = parsed.issues + StepRules.settingsIssues(parsed.settings, limits: limits).map { $0.inString(at: "chain") }
        if !issues.isEmpty { throw ValidationError(issues) }
        return OutputSpec(name: name, chain: parsed.steps, settings: parsed.settings, notes: parsed.notes)
    }
}
