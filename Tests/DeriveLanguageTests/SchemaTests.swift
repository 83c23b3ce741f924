@testable import DeriveLanguage
import Foundation
import DeriveTestSupport
import Testing

/// The checked-in JSON Schema and the decoder must describe the same language.
@Suite struct SchemaTests {
    static let schemaURL = Paths.repository.appendingPathComponent("Sources/DeriveLanguage/Schema/job-v1.schema.json")

    static func schema() throws -> JSONValue {
        try JSONParser().parse([UInt8](try Data(contentsOf: schemaURL)))
    }

    static func keys(_ value: JSONValue?) -> Set<String> {
        guard case .object(let members)? = value?["properties"] else { return [] }
        return Set(members.map(\.key))
    }

    @Test func schemaKeysMatchTheDecoder() throws {
        let schema = try Self.schema()
        let defs = schema["$defs"]
        #expect(Self.keys(schema) == Set(JSONChainDecoder.jobKeys))
        #expect(Self.keys(defs?["output"]) == Set(JSONChainDecoder.outputKeys))
        guard case .array(let stepSchemas)? = defs?["step"]?["oneOf"] else {
            Issue.record("no step list in the schema")
            return
        }
        let stepNames = stepSchemas.flatMap { Self.keys($0) }
        #expect(Set(stepNames) == Set(JSONChainDecoder.stepKeys))
        #expect(stepNames.count == JSONChainDecoder.stepKeys.count)
        let steps = Dictionary(uniqueKeysWithValues: stepSchemas.compactMap { step -> (String, JSONValue)? in
            guard case .object(let members)? = step["properties"], let member = members.first else { return nil }
            return (member.key, member.value)
        })
        #expect(Self.keys(steps["resize"]) == Set(JSONChainDecoder.resizeKeys))
        #expect(Self.keys(steps["validate"]) == Set(JSONChainDecoder.constraintKeys))
        guard case .array(let overlayParts)? = steps["overlay"]?["allOf"] else {
            Issue.record("no overlay schema")
            return
        }
        #expect(Self.keys(overlayParts.first) == Set(JSONChainDecoder.overlayKeys))
        guard case .array(let breakpointParts)? = defs?["output"]?["properties"]?["breakpoints"]?["allOf"] else {
            Issue.record("no breakpoints schema")
            return
        }
        #expect(Self.keys(breakpointParts.first) == Set(JSONChainDecoder.breakpointKeys))
    }

    /// The lists the schema repeats from the model (formats, resize modes, art filters,
    /// compass points) hold exactly what the decoder reads: a case added to Swift and not to
    /// the schema, or the other way round, fails here.
    @Test func schemaListsMatchTheModel() throws {
        let schema = try Self.schema()
        let defs = schema["$defs"]
        func strings(_ value: JSONValue?) -> [String] {
            guard case .array(let items)? = value else { return [] }
            return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
        }
        guard case .array(let stepSchemas)? = defs?["step"]?["oneOf"] else {
            Issue.record("no step list in the schema")
            return
        }
        func step(_ name: String) -> JSONValue? { stepSchemas.first { Self.keys($0).contains(name) }?["properties"]?[name] }

        let outputFormats = strings(defs?["output"]?["properties"]?["format"]?["enum"])
        #expect(outputFormats == OutputFormat.spellings)
        #expect(Set(OutputFormat.allCases.map(\.rawValue)).isSubset(of: outputFormats), "an output format missing from the schema")
        for spelling in outputFormats where !["auto", "original"].contains(spelling) {
            #expect(OutputFormat.parse(spelling) != nil, "the schema's format \(spelling) is not read")
        }
        let setFormats = strings(defs?["output"]?["properties"]?["formats"]?["items"]?["enum"])
        #expect(setFormats == OutputFormat.spellings.filter { !["auto", "original"].contains($0) })

        #expect(strings(step("resize")?["properties"]?["mode"]?["enum"]) == ResizeMode.allCases.map(\.rawValue))
        guard case .array(let artForms)? = step("art")?["oneOf"] else {
            Issue.record("no art schema")
            return
        }
        #expect(strings(artForms.first?["enum"]) == ArtFilter.allCases.map(\.rawValue))
        guard case .array(let gravityForms)? = defs?["gravity"]?["oneOf"] else {
            Issue.record("no gravity schema")
            return
        }
        let gravities = strings(gravityForms.first?["enum"])
        #expect(Array(gravities.prefix(Compass.allCases.count)) == Compass.allCases.map(\.rawValue))
        for name in gravities { #expect(Gravity.parseToken(name) != nil, "the schema's gravity \(name) is not read") }

        let sourceFormats = strings(step("validate")?["properties"]?["formats"]?["items"]?["enum"])
        for spelling in sourceFormats { #expect(ImageFormat.parse(spelling) != nil, "the schema's source format \(spelling) is not read") }
        #expect(Set(sourceFormats.compactMap(ImageFormat.parse)) == Set(ImageFormat.allCases), "a source format missing from the schema")
    }

    /// With Python's `jsonschema` (the test script installs it), the schema must accept what
    /// Derive accepts and reject a document Derive rejects.
    @Test func schemaValidatesDocumentsLikeTheDecoder() throws {
        let accepted = [
            #"{"source": "https://example.com/cat.jpg", "outputs": [{"name": "thumb", "chain": [{"resize": {"mode": "fill", "width": 200, "height": 200, "gravity": "auto"}}, {"round": {"radius": "max"}}], "format": "webp", "quality": 80}, {"name": "card", "chain": "c_fill,w_600,h_315,g_auto/e_sharpen:80", "format": "avif", "quality": "auto"}]}"#,
            #"{"version": 1, "source": "s3://b/k.png", "preset": "web"}"#,
            #"{"source": "/data/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"width": 0.5, "gravity": {"x": 0.3, "y": 0.2}, "mode": "crop"}}, {"blur": 300}, {"overlay": {"text": "hi", "gravity": "south"}}], "breakpoints": {"step": 100}}]}"#,
            #"{"source": "/data/c.exr", "outputs": [{"name": "c", "chain": [], "format": "heic"}, {"name": "d", "chain": [], "formats": ["jp2", "bmp", "ico"]}]}"#,
            #"{"source": "/data/b.png", "outputs": [{"name": "b", "chain": [{"resize": {"width": "iw / 2"}}, {"round": {"radius": ["h / 2", 0]}}, {"round": "h_div_4"}, {"opacity": "w / 10"}, {"opacity": {"percent": 50}}]}]}"#,
            #"{"source": "/data/e.jpg", "outputs": [{"name": "e", "chain": [{"distort": {"corners": [40, 25, "90%", 0.2, 260, 155, 35, 165]}}, {"distort": {"arc": -120}}, {"outline": {"mode": "inner_fill", "width": 1, "color": "white"}}, {"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": {"gradient": {"from": "predominant", "contrast": true, "colors": 4, "direction": "diagonal_asc"}}}}, {"resize": {"mode": "pad", "width": 400, "height": 100, "padFill": {"auto": "border_gradient"}}}, {"gradient_fade": {"type": "symmetric_pad", "x": 0.3}}]}]}"#,
            #"{"source": "/data/f.png", "outputs": [{"name": "f", "chain": [{"dropshadow": true}, {"dropshadow": {"azimuth": 220, "elevation": 60, "spread": 20}}]}]}"#,
            #"{"source": "/data/g.jpg", "tags": ["sale", "in stock"], "context": {"productType": "shoes", "x_pos": "0.25"}, "outputs": [{"name": "g", "chain": [{"variable": {"name": "x", "asset": "ctx:!x_pos!_to_f"}}, {"if": {"condition": "!sale! in tags", "then": [{"sepia": true}]}}]}]}"#,
        ]
        let rejected = [
            #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"dropshadow": {"elevation": 91}}]}]}"#,
            #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"widht": 10}}]}]}"#,
            #"{"source": "https://x/a.jpg", "outputs": []}"#,
            #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"blur": 10, "sepia": 5}]}]}"#,
            #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"distort": {"corners": [0, 0, 10, 0, 10, 10]}}]}]}"#,
            #"{"source": "https://x/a.jpg", "tags": ["a,b"], "outputs": [{"name": "a", "chain": []}]}"#,
            #"{"source": "https://x/a.jpg", "tags": "sale", "outputs": [{"name": "a", "chain": []}]}"#,
            #"{"source": "https://x/a.jpg", "context": {"a|b": "c"}, "outputs": [{"name": "a", "chain": []}]}"#,
            #"{"source": "https://x/a.jpg", "context": {"a": 1}, "outputs": [{"name": "a", "chain": []}]}"#,
            #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"variable": {"name": "x", "asset": "ctx:x"}}]}]}"#,
        ]
        for text in accepted { #expect(throws: Never.self) { try JSONChainDecoder().decodeJob(json: text) } }
        for text in rejected { #expect(throws: ValidationError.self) { try JSONChainDecoder().decodeJob(json: text) } }

        guard Python.has("jsonschema") else {
            #expect(!Python.required, "the test script installs python3 jsonschema; without it this check cannot run")
            return
        }
        let script = """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1]))
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(sys.stdin)))
        sys.exit(1 if errors else 0)
        """
        for text in accepted { #expect(try Python.run(script, arguments: [Self.schemaURL.path], input: text).status == 0, "\(text)") }
        for text in rejected { #expect(try Python.run(script, arguments: [Self.schemaURL.path], input: text).status == 1, "\(text)") }
    }
}
