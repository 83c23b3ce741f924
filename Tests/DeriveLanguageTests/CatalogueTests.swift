@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// The catalogue and what is generated from it: every effect declared once, the committed JSON
/// Schema's effect entries and Docs/language.md's effects table equal to what the catalogue
/// writes. `DERIVE_WRITE_CATALOGUE=1 swift test --filter CatalogueTests/write` writes both again.
@Suite struct CatalogueTests {
    static let schemaURL = Paths.repository.appendingPathComponent("Sources/DeriveLanguage/Schema/job-v1.schema.json")
    static let languageURL = Paths.repository.appendingPathComponent("Docs/language.md")
    static let (begin, end) = ("<!-- catalogue:effects (generated from the step catalogue: CatalogueTests/write) -->", "<!-- /catalogue:effects -->")

    /// Every effect of the model is declared, once, in the model's order.
    @Test func everyEffectIsDeclaredOnce() {
        let model = Effect.Kind.allCases.filter { $0 != .declared }.map(\.rawValue)
        let declared = StepCatalogue.effects.filter { $0.form != .declared }.map(\.name)
        #expect(declared == model)
        #expect(Set(StepCatalogue.effectNames).count == StepCatalogue.effects.count)
        for d in StepCatalogue.effects {
            #expect(!d.documentation.isEmpty && d.documentation.hasSuffix("."), "\(d.name)")
            for p in d.parameters {
                if let range = p.range, case .number(.value(let n))? = p.defaultValue { #expect(range.contains(n), "\(d.name).\(p.key)") }
            }
        }
    }

    /// The rules tables read the catalogue: the amount's range, default and JSON key.
    @Test(arguments: Effect.Kind.allCases.filter { $0 != .declared })
    func rulesComeFromTheDeclaration(_ kind: Effect.Kind) {
        let amount = StepCatalogue.effect(kind).amount
        #expect(EffectRules.range(of: kind) == amount?.range)
        #expect(EffectRules.amountField(of: kind) == amount?.key)
    }

    /// The committed schema holds, for every effect whose JSON the catalogue defines, exactly
    /// what the catalogue generates.
    @Test func committedSchemaEqualsTheGenerated() throws {
        let schema = try JSONParser().parse([UInt8](try Data(contentsOf: Self.schemaURL)))
        guard case .array(let steps)? = schema["$defs"]?["step"]?["oneOf"] else {
            Issue.record("no step list in the schema")
            return
        }
        for d in StepCatalogue.schemaEffects {
            let committed = steps.first { $0["properties"]?[d.name] != nil }?["properties"]?[d.name]
            #expect(committed.map(JSONWriter.canonical) == JSONWriter.canonical(StepCatalogue.schema(of: d)),
                    "\(d.name): the schema is stale; DERIVE_WRITE_CATALOGUE=1 swift test --filter CatalogueTests/write")
        }
    }

    @Test func docsTableEqualsTheGenerated() throws {
        let text = try String(contentsOf: Self.languageURL, encoding: .utf8)
        let parts = text.components(separatedBy: Self.begin)
        #expect(parts.count == 2, "Docs/language.md has no effects table markers")
        let table = parts.last?.components(separatedBy: Self.end).first ?? ""
        #expect(table == "\n\n" + StepCatalogue.effectsTable + "\n", "Docs/language.md's effects table is stale; DERIVE_WRITE_CATALOGUE=1 swift test --filter CatalogueTests/write")
    }

    /// Writes the schema's effect entries and the docs' table from the catalogue: in place with
    /// `DERIVE_WRITE_CATALOGUE=1`, otherwise into copies, which must come out equal to the
    /// committed files (the writer, run on an up-to-date tree, changes nothing).
    @Test func write() throws {
        let inPlace = ProcessInfo.processInfo.environment["DERIVE_WRITE_CATALOGUE"] == "1"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-catalogue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let languageURL = inPlace ? Self.languageURL : folder.appendingPathComponent("language.md")
        let schemaURL = inPlace ? Self.schemaURL : folder.appendingPathComponent("job-v1.schema.json")
        if !inPlace {
            try FileManager.default.copyItem(at: Self.languageURL, to: languageURL)
            try FileManager.default.copyItem(at: Self.schemaURL, to: schemaURL)
        }
        var text = try String(contentsOf: languageURL, encoding: .utf8)
        if let start = text.range(of: Self.begin), let stop = text.range(of: Self.end) {
            text.replaceSubrange(start.upperBound..<stop.lowerBound, with: "\n\n" + StepCatalogue.effectsTable + "\n")
            try text.write(to: languageURL, atomically: true, encoding: .utf8)
        }
        // The schema: each generated entry replaces the committed one in place (a new effect goes
        // before `trim`), keeping the file's own layout (Python's json.dumps, indent 2).
        let entries = StepCatalogue.schemaEffects.map { "\(Quoted($0.name).description)\t\(JSONWriter.canonical(StepCatalogue.schema(of: $0)))" }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("derive-catalogue-schema.tsv")
        try (entries.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let script = """
        import json, sys
        path, entries = sys.argv[1], sys.argv[2]
        schema = json.load(open(path))
        steps = schema["$defs"]["step"]["oneOf"]
        for line in open(entries):
            name, body = line.rstrip("\\n").split("\\t", 1)
            name = json.loads(name)
            entry = {"type": "object", "additionalProperties": False, "minProperties": 1, "maxProperties": 1,
                     "properties": {name: json.loads(body)}, "required": [name]}
            at = [i for i, s in enumerate(steps) if name in s.get("properties", {})]
            if at: steps[at[0]] = entry
            else: steps.insert([i for i, s in enumerate(steps) if "trim" in s.get("properties", {})][0], entry)
        open(path, "w").write(json.dumps(schema, indent=2, ensure_ascii=False) + "\\n")
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, schemaURL.path, input.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        if !inPlace {
            #expect(try Data(contentsOf: languageURL) == Data(contentsOf: Self.languageURL), "Docs/language.md is stale")
            #expect(try Data(contentsOf: schemaURL) == Data(contentsOf: Self.schemaURL), "the schema is stale")
        }
    }
}
