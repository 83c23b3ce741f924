/// A named, versioned set of outputs (Cloudinary's named transformations and eager lists).
///
/// A job may name a preset instead of listing outputs; a chain may include a single-output
/// preset as a step (`t_name`, `{"preset": "name"}`), which inlines its chain and its explicit
/// settings.
public struct Preset: Sendable, Hashable {
    public var name: String
    public var version: Int
    public var outputs: [OutputSpec]

    public init(name: String, version: Int, outputs: [OutputSpec]) {
        self.name = name
        self.version = version
        self.outputs = outputs
    }
}

/// Where presets come from: memory in tests and `explain`, the database in a worker.
public protocol PresetCatalog: Sendable {
    /// The current version of a preset, or nil if there is none by that name. Errors (a
    /// database that went away) propagate unchanged so the caller can retry.
    func preset(named name: String) throws -> Preset?
}

public struct InMemoryPresetCatalog: PresetCatalog {
    public var presets: [String: Preset]

    public init(_ presets: [Preset] = []) {
        self.presets = Dictionary(presets.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
    }

    public func preset(named name: String) throws -> Preset? { presets[name] }
}

/// A job with presets expanded and every output in canonical form.
public struct ResolvedJob: Sendable, Hashable {
    public var source: String?
    public var outputs: [CanonicalOutput]

    /// The image that stands in for a source that does not exist (`d_`): the job decodes one
    /// source, so only when every output names the same one.
    public var defaultImage: String? {
        let names = Set(outputs.map(\.encoding.defaultImage))
        guard names.count == 1, let name = names.first else { return nil }
        return name
    }
    /// The job-level preset, if the job named one.
    public var preset: PresetReference?
    /// The job's tags and context, which the planner's conditions read.
    public var asset: AssetFacts

    public init(source: String?, outputs: [CanonicalOutput], preset: PresetReference? = nil, asset: AssetFacts = .none) {
        self.source = source
        self.outputs = outputs
        self.preset = preset
        self.asset = asset
    }
}

/// Turns a decoded job into canonical outputs, expanding presets through a catalog.
public struct JobResolver: Sendable {
    public var limits: ChainLimits
    public var catalog: any PresetCatalog

    public static let maxPresetDepth = 8

    public init(limits: ChainLimits = .default, catalog: any PresetCatalog = InMemoryPresetCatalog()) {
        self.limits = limits
        self.catalog = catalog
    }

    public func resolve(_ job: JobSpec) throws -> ResolvedJob {
        var issues: [ValidationIssue] = []
        var outputs = job.outputs
        var jobPreset: PresetReference?
        if let name = job.preset {
            guard let preset = try catalog.preset(named: name) else {
                throw ValidationError(location: "preset", reason: unknownPresetMessage(name))
            }
            jobPreset = PresetReference(name: preset.name, version: preset.version)
            outputs = preset.outputs
            if outputs.isEmpty {
                throw ValidationError(location: "preset", reason: "preset \(Quoted(name)) has no outputs")
            }
        }
        if outputs.count > limits.maxOutputsPerJob {
            issues.append(ValidationIssue(location: "outputs", reason: "has \(outputs.count) outputs; the limit is \(limits.maxOutputsPerJob)"))
        }
        var resolved: [CanonicalOutput] = []
        for (i, output) in outputs.enumerated() {
            let location = job.preset == nil ? "outputs[\(i)]" : "preset \(Quoted(job.preset!)) output \(Quoted(output.name))"
            var settings = output.settings
            var references: [PresetReference] = jobPreset.map { [$0] } ?? []
            let chain = try expand(output.chain, settings: &settings, references: &references,
                                   trail: job.preset.map { [$0] } ?? [], location: location, issues: &issues)
            if chain.length > limits.maxChainLength {
                issues.append(ValidationIssue(location: "\(location).chain", reason: "has \(chain.length) steps after expanding presets; the limit is \(limits.maxChainLength)"))
            }
            for issue in StepRules.settingsIssues(settings, limits: limits) {
                issues.append(ValidationIssue(location: "\(location).\(issue.field)", reason: issue.reason))
            }
            if settings.formats != nil && settings.format != nil {
                issues.append(ValidationIssue(location: "\(location).formats", reason: "cannot be combined with a format (here \(settings.format?.rawValue ?? "")); list every format in formats"))
            }
            // A format set becomes one output per format, each the same as the output written
            // with that one format: its identity, key and derivatives row are that output's.
            let formats: [OutputFormat?] = settings.formats ?? [settings.format]
            for format in formats {
                var single = settings
                single.formats = nil
                single.format = format
                resolved.append(CanonicalOutput(name: output.name, chain: Normalizer.normalize(chain),
                                                encoding: EncodingSettings(single), presets: references, notes: output.notes))
            }
        }
        if resolved.count > limits.maxOutputsPerJob && outputs.count <= limits.maxOutputsPerJob {
            issues.append(ValidationIssue(location: "outputs", reason: "makes \(resolved.count) outputs with its format sets; the limit is \(limits.maxOutputsPerJob)"))
        }
        if !issues.isEmpty { throw ValidationError(issues) }
        return ResolvedJob(source: job.source, outputs: resolved, preset: jobPreset, asset: job.asset)
    }

    /// Inlines preset steps (recursively, in overlays too), merging their explicit settings.
    func expand(_ chain: [Step], settings: inout OutputSettings, references: inout [PresetReference], trail: [String],
                location: String, issues: inout [ValidationIssue]) throws -> [Step] {
        var result: [Step] = []
        for step in chain {
            switch step {
            case .preset(let name):
                if trail.contains(name) {
                    issues.append(ValidationIssue(location: "\(location).chain", reason: "preset \(Quoted(name)) includes itself (\((trail + [name]).joined(separator: " → ")))"))
                    continue
                }
                if trail.count >= Self.maxPresetDepth {
                    issues.append(ValidationIssue(location: "\(location).chain", reason: "presets are nested more than \(Self.maxPresetDepth) deep"))
                    continue
                }
                guard let preset = try catalog.preset(named: name) else {
                    issues.append(ValidationIssue(location: "\(location).chain", reason: unknownPresetMessage(name)))
                    continue
                }
                guard preset.outputs.count == 1, let inner = preset.outputs.first else {
                    issues.append(ValidationIssue(location: "\(location).chain", reason: "preset \(Quoted(name)) has \(preset.outputs.count) outputs; only a single-output preset can be used as a step"))
                    continue
                }
                references.append(PresetReference(name: preset.name, version: preset.version))
                let (merged, conflicts) = settings.filling(from: inner.settings)
                settings = merged
                for field in conflicts {
                    issues.append(ValidationIssue(location: "\(location).\(field)", reason: "contradicts preset \(Quoted(name)), which sets \(field) differently"))
                }
                // The preset's first assignment of each variable is a default: a value the
                // chain set before `t_` overrides it, as Cloudinary lets a caller do.
                var seen: Set<String> = []
                let defaults = inner.chain.map { step -> Step in
                    guard case .assign(var a) = step, seen.insert(a.name).inserted else { return step }
                    a.isDefault = true
                    return .assign(a)
                }
                result += try expand(defaults, settings: &settings, references: &references, trail: trail + [name],
                                     location: location, issues: &issues)
            case .overlay(var overlay):
                var ignored = OutputSettings()
                overlay.chain = try expand(overlay.chain, settings: &ignored, references: &references, trail: trail,
                                           location: location, issues: &issues)
                if ignored != OutputSettings() {
                    issues.append(ValidationIssue(location: "\(location).chain", reason: "a preset used inside an overlay may not set output settings"))
                }
                result.append(.overlay(overlay))
            default:
                result.append(step)
            }
        }
        return result
    }

    private func unknownPresetMessage(_ name: String) -> String {
        let known = (catalog as? InMemoryPresetCatalog).map { Array($0.presets.keys) } ?? []
        return "unknown preset \(Quoted(name))\(Suggest.hint(for: name, among: known))"
    }
}
