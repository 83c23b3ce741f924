@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// Inputs are either Cloudinary strings or JSON outputs/chains (anything starting with { or [).
func identity(_ input: String) throws -> String {
    let first = input.drop(while: \.isWhitespace).first
    return try (first == "{" || first == "[" ? canonical(json: input) : canonical(string: input)).identity
}

@Suite struct CanonicalIdentityTests {
    /// Spellings that mean the same thing must hash the same.
    @Test(arguments: [
        ["c_fill,w_200,h_200", #"[{"resize": {"mode": "fill", "width": 200, "height": 200, "gravity": "center"}}]"#,
         #"[{"resize": {"height": 200, "gravity": "center", "width": 200, "mode": "fill", "dpr": 1}}]"#, "h_200,w_200,c_fill,g_center,x_0"],
        ["w_200", "c_scale,w_200", "c_fill,w_200", "c_thumb,w_200", #"[{"resize": {"width": 200}}]"#],
        ["c_pad,w_200", "c_fit,w_200"],
        ["c_lpad,h_50", "c_lfill,h_50", "c_limit,h_50"],
        ["a_-90", "a_270", "a_630", #"[{"rotate": 270}]"#],
        ["a_hflip.vflip", "a_180", #"[{"rotate": {"flip": "both"}}]"#],
        ["a_hflip.vflip.90", "a_270"],
        ["r_10", "r_10:10:10:10", "r_10:10", #"[{"round": [10, 10, 10, 10]}]"#, #"[{"round": {"radius": 10, "background": "transparent"}}]"#],
        ["r_1:2:3", "r_1:2:3:2"],
        ["e_blur", "e_blur:100", #"[{"blur": true}]"#, #"[{"blur": {}}]"#, #"[{"blur": {"strength": 100}}]"#, #"[{"blur": 100}]"#],
        ["b_red", "b_rgb:ff0000", "b_#f00", "b_RGB:FF0000FF", ##"[{"background": "#ff0000"}]"##],
        ["c_fill,w_1600,ar_16:9", "c_fill,w_1600,ar_1.777778", #"[{"resize": {"mode": "fill", "width": 1600, "aspectRatio": "16:9"}}]"#],
        ["w_0.5", #"[{"resize": {"width": 0.5}}]"#, #"[{"resize": {"width": "50%"}}]"#],
        ["w_2.0", #"[{"resize": {"width": "200%"}}]"#, #"[{"resize": {"width": 2.0}}]"#],
        ["c_crop,w_100,h_100,x_10,y_20", "c_crop,w_100,h_100,g_north_west,x_10,y_20"],
        ["c_crop,w_100,h_100,g_north,x_0", "c_crop,w_100,h_100,g_north,x_0.0"],
        ["c_pad,w_200,h_100", "c_pad,w_200,h_100,b_transparent", "c_pad,w_200,h_100,b_rgb:ffffff00"],
        ["e_grayscale/o_100", "e_grayscale/e_brightness:0", "e_grayscale/a_0", "e_grayscale/r_0", "e_grayscale/e_tint:0:red"],
        ["f_webp,q_auto", "f_webp,q_auto:good", #"{"chain": [], "format": "webp", "quality": "auto"}"#],
        ["f_jpg", "f_jpeg,q_80", #"{"chain": [], "format": "jpeg", "quality": 80, "strip": true, "progressive": false, "effort": 4}"#],
        ["f_jpg,q_90:444", #"{"chain": [], "format": "jpeg", "quality": 90, "chromaSubsampling": "4:4:4"}"#],
        ["e_colorize,co_gray", "e_colorize:100", ##"[{"colorize": {"amount": 100, "color": "#808080"}}]"##],
        ["l_brand:logo,g_north,x_5", "l_brand:logo/fl_layer_apply,g_north,x_5",
         #"[{"overlay": {"image": "brand/logo", "gravity": "north", "x": 5, "y": 0}}]"#],
    ])
    func equalMeaningHashesEqual(spellings: [String]) throws {
        let hashes = try spellings.map(identity)
        #expect(Set(hashes).count == 1, "\(zip(spellings, hashes).map { "\($0) → \($1.prefix(12))" })")
    }

    /// Any change of meaning must change the hash.
    @Test(arguments: [
        ("w_200", "w_201"), ("c_fill,w_100,h_100", "c_lfill,w_100,h_100"), ("c_fill,w_100,h_100,g_north", "c_fill,w_100,h_100,g_south"),
        ("c_fill,w_100,h_100", "c_fill,w_100,h_100,g_auto"), ("c_fill,w_100,h_100,g_auto", "c_fill,w_100,h_100,g_entropy"),
        ("f_webp,q_80", "f_webp,q_81"), ("f_webp", "f_avif"), ("f_jpg", "f_jpg,fl_keep_iptc"), ("f_jpg", "f_jpg,fl_progressive"),
        ("e_blur:100", "e_blur:101"), ("e_sepia/e_blur", "e_blur/e_sepia"), ("b_red", "b_blue"), ("w_100,dpr_2", "w_100"),
        ("w_1", "w_1.0"), ("c_crop,w_10,h_10,x_5", "c_crop,w_10,h_10,x_6"), ("a_90", "a_hflip"), ("r_10", "r_10:10:10:11"),
        ("e_trim", "e_trim:11"), ("o_50", "o_51"), ("l_a/fl_layer_apply", "l_b/fl_layer_apply"), ("f_png", "f_png,pg_2"),
        ("f_png", "f_png,a_ignore"), ("c_fill,w_10,h_10,g_xy_center,x_0.5,y_0.5", "c_fill,w_10,h_10,g_xy_center,x_0.5,y_0.6"),
        ("f_webp,fl_lossless", "f_webp"), ("w_0.5", "w_0.500001"),
    ])
    func differentMeaningHashesDiffer(a: String, b: String) throws {
        #expect(try identity(a) != identity(b))
    }

    @Test func theIdentityIsAStableFunctionOfTheCanonicalText() throws {
        let output = try canonical(string: "c_fill,w_250,h_250,g_auto/r_max/e_sepia/f_webp")
        #expect(output.identityText == ##"{"derive":1,"output":{"autoOrient":true,"chain":[{"resize":{"dpr":1,"gravity":"auto","height":250,"mode":"fill","width":250}},{"round":{"background":"#ffffff00","radius":"max"}},{"sepia":{"strength":80}}],"chromaSubsampling":"auto","effort":4,"format":"webp","lossless":false,"progressive":false,"quality":80,"strip":true}}"##)
        // Pinned: changing this hash orphans every stored output, so it must be deliberate.
        #expect(output.identity == SHA256.hex(output.identityText))
        #expect(output.identity == "d0acf1f8edecaed0dce77e3a5c5811076b4f100c0afb00ce6945b9defd6ab13a")
        // The name is a label, not part of the meaning.
        var renamed = try canonical([TransformationInput.output(named: "other", transformation: "c_fill,w_250,h_250,g_auto/r_max/e_sepia/f_webp")])[0]
        #expect(renamed.identity == output.identity)
        renamed.encoding.quality = .value(81)
        #expect(renamed.identity != output.identity)
    }
}

@Suite struct RoundTripTests {
    /// JSON → model → Cloudinary string → model is the identity, over thousands of random chains.
    @Test func jsonToStringToModelIsTheIdentity() throws {
        var generator = ChainGenerator(random: SeededRandom(seed: 2026), jsonOnly: false)
        for _ in 0..<3000 {
            let output = generator.output()
            let json = JSONWriter.canonical(ChainEncoder.json(output))
            let model = try canonical(json: json)
            let string = try CloudinaryPrinter.string(for: model)
            let reparsed = try canonical([TransformationInput.output(named: "o", transformation: string)])[0]
            #expect(reparsed == model, "\(json)\n→ \(string)")
            #expect(reparsed.identity == model.identity)
        }
    }

    /// The canonical JSON reads back to the same canonical output, including what only JSON can say.
    @Test func canonicalJSONReadsBackToItself() throws {
        var generator = ChainGenerator(random: SeededRandom(seed: 7), jsonOnly: true)
        for _ in 0..<3000 {
            let model = try canonical([generator.output()])[0]
            let text = JSONWriter.canonical(model.json)
            let again = try canonical(json: text)
            #expect(again == model, "\(text)")
        }
    }

    @Test func jsonOnlyThingsAreRefusedByThePrinterNotDropped() throws {
        for json in [#"[{"validate": {"minWidth": 10}}]"#, #"{"chain": [], "format": "webp", "effort": 6}"#,
                     #"{"chain": [], "breakpoints": {"step": 100}}"#] {
            let model = try canonical(json: json)
            #expect(throws: CloudinaryPrinter.Unprintable.self) { try CloudinaryPrinter.string(for: model) }
        }
    }
}

@Suite struct PresetTests {
    let presets = [
        Preset(name: "square", version: 3, outputs: [OutputSpec(name: "square", chain: [.resize(Resize(mode: .fill, width: .pixels(100), height: .pixels(100)))],
                                                                settings: OutputSettings(format: .webp))]),
        Preset(name: "web", version: 1, outputs: [OutputSpec(name: "thumb", chain: [.preset("square")]),
                                                  OutputSpec(name: "full", chain: [.resize(Resize(mode: .limit, width: .pixels(2048)))])]),
        Preset(name: "loop-a", version: 1, outputs: [OutputSpec(name: "a", chain: [.preset("loop-b")])]),
        Preset(name: "loop-b", version: 1, outputs: [OutputSpec(name: "b", chain: [.preset("loop-a")])]),
    ]

    @Test func aPresetStepInlinesItsChainAndSettings() throws {
        let viaPreset = try canonical([TransformationInput.output(named: "x", transformation: "t_square/e_grayscale")], presets: presets)[0]
        let spelledOut = try canonical(string: "c_fill,w_100,h_100/e_grayscale/f_webp")
        #expect(viaPreset.chain == spelledOut.chain && viaPreset.encoding == spelledOut.encoding)
        #expect(viaPreset.identity == spelledOut.identity)
        #expect(viaPreset.presets == [PresetReference(name: "square", version: 3)])
    }

    /// `t_a.b` applies the named transformations a and b in turn (Cloudinary's SDKs write a
    /// list of them so): the same output as `t_a/t_b` and as their chains spelled out.
    @Test func namedTransformationsChainWithADot() throws {
        let gray = Preset(name: "gray", version: 2, outputs: [OutputSpec(name: "gray", chain: [.effect(.named("grayscale"))])])
        func resolved(_ text: String) throws -> CanonicalOutput {
            try canonical([TransformationInput.output(named: "x", transformation: text)], presets: presets + [gray])[0]
        }
        #expect(CloudinaryParser().parse("t_square.gray").steps == [.preset("square"), .preset("gray")])
        let dotted = try resolved("t_square.gray")
        #expect(dotted.identity == (try resolved("t_square/t_gray")).identity)
        #expect(dotted.identity == (try canonical(string: "c_fill,w_100,h_100/e_grayscale/f_webp")).identity)
        #expect(dotted.presets == [PresetReference(name: "square", version: 3), PresetReference(name: "gray", version: 2)])
        // The unresolved chain prints as one component per named transformation and reads back the same.
        let printed = try CloudinaryPrinter.string(for: CloudinaryParser().parse("t_square.gray").steps)
        #expect(printed == "t_square/t_gray")
        #expect(CloudinaryParser().parse(printed).steps == [.preset("square"), .preset("gray")])
        // A Derive preset whose name has a dot is named in JSON; a string cannot say it.
        #expect(throws: CloudinaryPrinter.Unprintable.self) { try CloudinaryPrinter.string(for: [Step.preset("v1.2")]) }
        #expect(CloudinaryParser().parse("t_square..gray").issues.map(\.description)
            == [#"chain component 0 ("t_square..gray"): t_square..gray: unknown to Cloudinary (t preset names are 1–64 characters of A-Z a-z 0-9 . _ - and inner spaces, got "")"#])
    }

    /// `t_` beside other parameters: the named transformation, then the other parameters as a
    /// component after it, with a note saying so.
    @Test(arguments: [
        ("t_square,e_sepia", "t_square/e_sepia"),
        ("c_scale,t_square,w_50", "t_square/c_scale,w_50"),
        ("$v_3,t_square,r_$v", "$v_3/t_square/r_$v"),
        ("t_square,w_50,f_webp", "t_square/w_50/f_webp"),
    ])
    func aNamedTransformationBesideOtherParametersAppliesFirst(text: String, same: String) throws {
        let together = try canonical([TransformationInput.output(named: "x", transformation: text)], presets: presets)[0]
        let apart = try canonical([TransformationInput.output(named: "x", transformation: same)], presets: presets)[0]
        #expect(together.identity == apart.identity)
        #expect(together.notes.count == 1 && together.notes.allSatisfy { $0.contains("the named transformation applies first") }, "\(together.notes)")
    }

    @Test func aJobMayNameAPresetForItsOutputs() throws {
        let job = try JSONChainDecoder().decodeJob(json: #"{"source": "https://x/a.jpg", "preset": "web"}"#)
        let resolved = try JobResolver(catalog: InMemoryPresetCatalog(presets)).resolve(job)
        #expect(resolved.outputs.map(\.name) == ["thumb", "full"])
        #expect(resolved.preset == PresetReference(name: "web", version: 1))
        #expect(resolved.outputs[0].presets == [PresetReference(name: "web", version: 1), PresetReference(name: "square", version: 3)])
    }

    @Test(arguments: [
        ("t_nope", #"outputs[0].chain: unknown preset "nope""#),
        ("t_squar", #"outputs[0].chain: unknown preset "squar"; did you mean "square"?"#),
        ("t_web", #"outputs[0].chain: preset "web" has 2 outputs; only a single-output preset can be used as a step"#),
        ("t_loop-a", #"outputs[0].chain: preset "loop-a" includes itself (loop-a → loop-b → loop-a)"#),
        ("t_square/f_avif", #"outputs[0].format: contradicts preset "square", which sets format differently"#),
    ])
    func presetProblemsAreValidationErrors(text: String, message: String) {
        do {
            _ = try canonical([TransformationInput.output(named: "x", transformation: text)], presets: presets)
            Issue.record("accepted \(text)")
        } catch let error as ValidationError {
            #expect(error.issues.map(\.description).contains(message), "got \(error.issues.map(\.description))")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func presetFilesAcceptStringsChainsOutputsAndOutputLists() throws {
        let file = """
        {"thumb": "c_thumb,w_64,h_64/f_webp",
         "sepia": [{"sepia": 50}],
         "card": {"chain": "c_fill,w_600,h_315", "format": "avif"},
         "set": {"outputs": [{"name": "s", "chain": []}, {"name": "l", "chain": [{"resize": {"width": 1000}}]}]}}
        """
        let presets = try PresetFile.parse(file)
        #expect(presets.map(\.name) == ["thumb", "sepia", "card", "set"])
        #expect(presets[0].outputs[0].settings.format == .webp)
        #expect(presets[2].outputs[0].name == "card" && presets[2].outputs[0].settings.format == .avif)
        #expect(presets[3].outputs.map(\.name) == ["s", "l"])
        #expect(throws: ValidationError.self) { try PresetFile.parse(#"{"bad name!": "w_1"}"#) }
        #expect(throws: ValidationError(location: #"preset "set" source"#,
                                        reason: "a preset holds outputs only; the job names its source and preset")) {
            try PresetFile.parse(#"{"set": {"source": "/a.jpg", "outputs": [{"name": "s", "chain": []}]}}"#)
        }
    }
}
