import DeriveLanguage

/// Plans outputs written as Cloudinary strings or JSON, named o0, o1, … in order.
/// `asset` is the job's tags and context.
public func plan(_ outputs: [String], _ facts: SourceFacts, limits: ChainLimits = .default, asset: AssetFacts = .none) throws -> Plan {
    let specs = try outputs.enumerated().map { i, text -> OutputSpec in
        let first = text.first
        if first == "{" || first == "[" {
            var output = try TransformationInput.parse(text).outputs[0]
            output.name = "o\(i)"
            return output
        }
        return try TransformationInput.output(named: "o\(i)", transformation: text)
    }
    let resolved = try JobResolver(limits: limits).resolve(JobSpec(source: nil, outputs: specs, asset: asset))
    return try Planner(limits: limits).plan(resolved, source: facts)
}
