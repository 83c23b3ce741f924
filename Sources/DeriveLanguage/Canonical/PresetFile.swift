/// Presets from a JSON file, for the CLI when no database holds them: an object mapping each
/// name to a transformation string, a chain array, a single output object, or
/// `{"outputs": [...]}` for a multi-output preset. Every preset in a file is version 1.
public enum PresetFile {
    public static func parse(_ text: String, limits: ChainLimits = .default) throws(ValidationError) -> [Preset] {
        let json = try JSONChainDecoder.parse(text)
        guard case .object(let members) = json else {
            throw ValidationError(location: "", reason: "a preset file is an object mapping preset names to chains or outputs")
        }
        let decoder = JSONChainDecoder(limits: limits)
        var presets: [Preset] = []
        var issues: [ValidationIssue] = []
        for member in members {
            let name = member.key
            if let problem = StepRules.presetNameIssues(name, field: "").first {
                issues.append(ValidationIssue(location: JSONPath.root.appending(name).description, reason: problem.reason))
                continue
            }
            do throws(ValidationError) {
                let outputs: [OutputSpec]
                switch member.value {
                case .string(let transformation):
                    outputs = [try TransformationInput.output(named: name, transformation: transformation, limits: limits)]
                default:
                    let job = try decoder.decodeDocument(member.value)
                    if job.source != nil || job.preset != nil {
                        throw ValidationError(location: job.source != nil ? "source" : "preset",
                                              reason: "a preset holds outputs only; the job names its source and preset")
                    }
                    outputs = job.outputs.map { output in
                        var renamed = output
                        if renamed.name == "default" { renamed.name = name }
                        return renamed
                    }
                }
                presets.append(Preset(name: name, version: 1, outputs: outputs))
            } catch {
                issues += error.issues.map { ValidationIssue(location: "preset \(Quoted(name)) \($0.location)", reason: $0.reason) }
            }
        }
        if !issues.isEmpty { throw ValidationError(issues) }
        return presets
    }
}
