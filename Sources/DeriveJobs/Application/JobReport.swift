import DeriveLanguage

/// What running a job produced, as JSON: the source's metadata, the decode, every output's
/// metadata and where it was written, and the time each stage took.
public struct JobReport: Sendable {
    public var plan: Plan
    public var result: RenderResult
    /// Where each output went, in the order of `result.outputs`.
    public var locations: [String]
    /// Each output's key in the store, in the same order (empty when it was not stored under
    /// one: `derive run --out`): what the dashboard reads an output's bytes back by.
    public var keys: [String]
    /// `fl_getinfo`'s documents written by this run, by the key of the image each describes.
    public var infoLocations: [String: String] = [:]
    public var timings: StageTimings
    public var totalMilliseconds: Double
    /// How the source was fetched, when it was (not for local files).
    public var fetched: FetchedSource?
    /// False when every output was reused from an earlier run and nothing was decoded.
    public var decoded: Bool

    public init(plan: Plan, result: RenderResult, locations: [String], keys: [String] = [], timings: StageTimings, totalMilliseconds: Double,
                fetched: FetchedSource? = nil, decoded: Bool = true) {
        self.plan = plan
        self.result = result
        self.locations = locations
        self.keys = keys
        self.timings = timings
        self.totalMilliseconds = totalMilliseconds
        self.fetched = fetched
        self.decoded = decoded
    }

    /// How many outputs were reused rather than derived.
    public var reusedOutputs: Int { result.outputs.count { $0.reused } }

    public var json: JSONValue {
        let source = result.source
        let inspection = source.inspection
        var sourceMembers: [JSONMember] = [
            JSONMember(key: "location", value: .string(Redacted.url(source.location))),
            JSONMember(key: "sha256", value: .string(source.sha256)),
            JSONMember(key: "bytes", value: .int(source.bytes)),
            JSONMember(key: "format", value: .string(inspection.facts.format.rawValue)),
            JSONMember(key: "width", value: .int(inspection.facts.orientedSize.width)),
            JSONMember(key: "height", value: .int(inspection.facts.orientedSize.height)),
            JSONMember(key: "pages", value: .int(inspection.facts.pages)),
            JSONMember(key: "hasAlpha", value: .bool(inspection.facts.hasAlpha)),
            JSONMember(key: "orientation", value: .int(inspection.facts.orientation)),
            JSONMember(key: "colourSpace", value: .string(inspection.colorSpace)),
            JSONMember(key: "iccDescription", value: inspection.iccDescription.map(JSONValue.string) ?? .null),
            JSONMember(key: "exif", value: .object(inspection.exif.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) })),
            JSONMember(key: "hasLocation", value: .bool(inspection.hasLocation)),
            JSONMember(key: "perceptualHash", value: .string(source.perceptualHash)),
        ]
        sourceMembers.append(JSONMember(key: "decode", value: decoded ? plan.decode.json : .null))
        if let faces = source.faces { sourceMembers.append(JSONMember(key: "faces", value: faces.json)) }
        if let fetched {
            sourceMembers.append(JSONMember(key: "fetch", value: .object([
                "origin": .string(fetched.origin.rawValue), "transferredBytes": .int(fetched.transferredBytes),
                "finalLocation": .string(Redacted.url(fetched.finalLocation)),
                "etag": fetched.etag.map(JSONValue.string) ?? .null, "lastModified": fetched.lastModified.map(JSONValue.string) ?? .null,
            ])))
        }
        let outputs = zip(result.outputs, locations).enumerated().map { index, pair -> JSONValue in
            let (output, location) = pair
            let m = output.metadata
            // By identity too: each format of a format set has its own, under one name.
            let planned = plan.outputs.first { $0.name == output.name && $0.identity == output.identity } ?? plan.outputs.first { $0.name == output.name }
            var members: [JSONMember] = [JSONMember(key: "name", value: .string(output.name))]
            if let width = output.breakpointWidth { members.append(JSONMember(key: "breakpointWidth", value: .int(width))) }
            if output.reused { members.append(JSONMember(key: "reused", value: .bool(true))) }
            members += [
                JSONMember(key: "location", value: .string(location)),
            ]
            if index < keys.count {
                members.append(JSONMember(key: "key", value: .string(keys[index])))
                if let info = infoLocations[keys[index]] { members.append(JSONMember(key: "info", value: .string(info))) }
            }
            members += [
                JSONMember(key: "format", value: .string(m.format.rawValue)),
                JSONMember(key: "width", value: .int(m.width)),
                JSONMember(key: "height", value: .int(m.height)),
                JSONMember(key: "bytes", value: .int(m.bytes)),
                JSONMember(key: "sha256", value: .string(m.sha256)),
                JSONMember(key: "frames", value: .int(m.frames)),
                JSONMember(key: "hasAlpha", value: .bool(m.hasAlpha)),
                JSONMember(key: "quality", value: m.quality.map(JSONValue.int) ?? .null),
                JSONMember(key: "choices", value: .array(m.choices.map(JSONValue.string))),
                JSONMember(key: "blurhash", value: .string(m.blurhash)),
                JSONMember(key: "dominantColor", value: .string(m.dominantColor)),
                JSONMember(key: "identity", value: .string(output.identity)),
                JSONMember(key: "crops", value: .array(m.crops.map(\.json))),
                JSONMember(key: "privacy", value: .array(m.faceCovers.map(\.json))),
                JSONMember(key: "transformation", value: (planned.flatMap { try? CloudinaryPrinter.string(for: $0.canonical) }).map(JSONValue.string) ?? .null),
                JSONMember(key: "timings", value: .object(["apply": .decimal(rounded(m.applyMilliseconds)), "encode": .decimal(rounded(m.encodeMilliseconds))])),
            ]
            if let notes = planned?.notes, !notes.isEmpty {
                members.append(JSONMember(key: "notes", value: .array(notes.map(JSONValue.string))))
            }
            return .object(members)
        }
        return .object([
            "source": .object(sourceMembers),
            "outputs": .array(outputs),
            "timings": .object([
                "fetch": .decimal(rounded(timings.fetch)), "header": .decimal(rounded(timings.header)), "plan": .decimal(rounded(timings.plan)),
                "decode": .decimal(rounded(result.timings.decode)), "metadata": .decimal(rounded(result.timings.metadata)),
                "faces": .decimal(rounded(result.timings.faces)),
                "store": .decimal(rounded(timings.store)), "total": .decimal(rounded(totalMilliseconds)),
            ]),
        ])
    }

    private func rounded(_ milliseconds: Double) -> Double { (milliseconds * 100).rounded() / 100 }
}
