@testable import DeriveLanguage
import DeriveTestSupport
import Testing

@Suite struct JSONChainDecoderTests {
    let transformsExample = """
    {
      "source": "https://example.com/cat.jpg",
      "outputs": [
        { "name": "thumb", "chain": [ { "resize": { "mode": "fill", "width": 200, "height": 200, "gravity": "auto" } },
                                      { "round": { "radius": "max" } } ],
          "format": "webp", "quality": 80 },
        { "name": "card",  "chain": "c_fill,w_600,h_315,g_auto/e_sharpen:80", "format": "avif", "quality": "auto" },
        { "name": "full",  "chain": [ { "resize": { "mode": "limit", "width": 2048, "height": 2048 } } ],
          "format": "jpeg", "quality": 85, "strip": true }
      ]
    }
    """

    @Test func decodesTheTransformsExample() throws {
        let job = try JSONChainDecoder().decodeJob(json: transformsExample)
        #expect(job.source == "https://example.com/cat.jpg")
        #expect(job.outputs.map(\.name) == ["thumb", "card", "full"])
        #expect(job.outputs[0].chain == [
            .resize(Resize(mode: .fill, width: .pixels(200), height: .pixels(200), gravity: .smart(.auto))),
            .round(RoundCorners(radius: .max)),
        ])
        #expect(job.outputs[0].settings == OutputSettings(format: .webp, quality: .value(80)))
        #expect(job.outputs[1].chain == [
            .resize(Resize(mode: .fill, width: .pixels(600), height: .pixels(315), gravity: .smart(.auto))),
            .effect(.named("sharpen", 80)),
        ])
        #expect(job.outputs[1].settings.quality == .auto(.good))
        #expect(job.outputs[2].settings.strip == true)
    }

    @Test func acceptsEveryStepAndItsShorthands() throws {
        let chain = """
        [
          {"resize": {"mode": "crop", "width": "50%", "height": 0.25, "gravity": {"x": 0.3, "y": 120}}},
          {"rotate": 90}, {"rotate": {"angle": 12.5, "flip": "both", "background": "#ff000080"}},
          {"round": 12}, {"round": [1, 2, 3]}, {"round": {"radius": "max", "background": "white"}},
          {"blur": 300}, {"pixelate": {"size": 8}}, {"sharpen": true}, {"grayscale": {}}, {"sepia": {"strength": 40}},
          {"negate": true}, {"brightness": -20}, {"contrast": {"level": 30}}, {"saturation": 10},
          {"tint": {"amount": 30, "color": "teal"}}, {"colorize": {"color": "rgb:102030"}}, {"vignette": 50},
          {"trim": {"tolerance": 5}}, {"background": "black"}, {"border": {"width": 3, "color": "#abc"}}, {"opacity": 70},
          {"overlay": {"image": "https://example.com/logo.png", "chain": [{"resize": {"width": 100}}], "gravity": "south_east", "x": 10, "y": -5}},
          {"overlay": {"text": {"text": "Hi", "font": "DejaVu Sans", "size": 20, "bold": true, "color": "yellow"}}},
          {"validate": {"minWidth": 100, "maxPixels": 50000000, "formats": ["jpg", "png"]}},
          {"preset": "watermark"}
        ]
        """
        let job = try TransformationInput.parse(chain)
        let steps = job.outputs[0].chain
        #expect(steps.count == 26)
        #expect(steps[0] == .resize(Resize(mode: .crop, width: .fraction(0.5), height: .fraction(0.25), gravity: .focus(x: .fraction(0.3), y: .pixels(120)))))
        #expect(steps[2] == .rotate(Rotate(angle: 12.5, horizontalFlip: true, verticalFlip: true, background: Color(red: 255, green: 0, blue: 0, alpha: 128))))
        #expect(steps[4] == .round(RoundCorners(radius: .corners([1, 2, 3]))))
        #expect(steps[8] == .effect(.named("sharpen", 100)))
        #expect(steps[16] == .effect(Effect.colorizeForTests(100, Color(red: 0x10, green: 0x20, blue: 0x30))))
        #expect(steps[20] == .border(Border(width: 3, color: Color(red: 0xAA, green: 0xBB, blue: 0xCC))))
        #expect(steps[24] == .validate(ImageConstraints(minWidth: 100, maxPixels: 50_000_000, formats: [.jpeg, .png])))
        #expect(steps[25] == .preset("watermark"))
    }

    /// Unknown keys, wrong types, out-of-range values, contradictions, unsupported gravities and
    /// empty output lists: each an error with a path and a reason, never ignored.
    @Test(arguments: [
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": []}, {"name": "b", "chain": [{"resize": {"width": 0}}]}]}"#,
         "outputs[1].chain[0].resize.width: must be between 1 and 16384, got 0"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"widht": 10}}]}]}"#,
         #"outputs[0].chain[0].resize.widht: unknown key; did you mean "width"?"#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"width": "wide"}}]}]}"#,
         #"outputs[0].chain[0].resize.width: expression "wide": unknown to Cloudinary (no value "wide"); a length takes pixels (200), a fraction (0.5) or an expression such as iw_div_2 or $name (values: iw, ih, iar, w, h, ar, cp, pc, fc, ils; operators: add, sub, mul, div, mod, pow)"#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"width": true}}]}]}"#,
         #"outputs[0].chain[0].resize.width: expected pixels (an integer), a fraction (0.5), a percentage ("50%") or an expression ("iw / 2"), got boolean true"#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"mode": "fill", "width": 10, "height": 10, "gravity": "body"}}]}]}"#,
         #"outputs[0].chain[0].resize.gravity: gravity "body": known to Cloudinary, not supported by Derive: object, text and body gravities: a Cloudinary add-on or AI feature that Derive does not have; supported: center, north, north_east, east, south_east, south, south_west, west, north_west, auto, entropy, face, faces, face:center, faces:center, face:auto, faces:auto and a focal point"#),
        (#"{"source": "https://x/a.jpg", "outputs": []}"#, "outputs: must list at least one output"),
        (#"{"source": "https://x/a.jpg"}"#, #"(top level): needs "outputs" (a non-empty list) or "preset" (a preset name)"#),
        (#"{"outputs": [{"name": "a", "chain": []}]}"#, "source: is required: the URL or path of the image to derive from"),
        (#"{"source": "ftp://x/a.jpg", "outputs": [{"name": "a", "chain": []}]}"#, #"source: unsupported scheme "ftp"; use one of http, https, s3, file, data"#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a/b", "chain": []}]}"#, #"outputs[0].name: output names are 1–64 characters of A-Z a-z 0-9 . _ - (not starting with .), got "a/b""#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a"}]}"#, "outputs[0].chain: is required: a list of steps or a transformation string (use [] to only re-encode)"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "format": "jpg", "lossless": true}]}"#,
         "outputs[0].lossless: jpeg has no lossless mode; lossless applies to webp, avif and jxl"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "format": "webp", "quality": 80, "lossless": true}]}"#,
         "outputs[0].quality: cannot be combined with lossless"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "quality": 0}]}"#, "outputs[0].quality: must be between 1 and 100, got 0"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "quality": "high"}]}"#,
         #"outputs[0].quality: expected an integer 1–100, "auto" or "auto:best|good|eco|low", got string "high""#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "strip": "yes"}]}"#, #"outputs[0].strip: expected true or false, got string "yes""#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": "f_webp", "format": "avif"}]}"#,
         "outputs[0].format: contradicts the chain string, which sets f differently"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": "q_0"}]}"#, "outputs[0].chain: q must be between 1 and 100, got 0"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": "f_jpg", "lossless": true}]}"#, "outputs[0].lossless: jpeg has no lossless mode; lossless applies to webp, avif and jxl"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": "e_sepai"}]}"#,
         #"outputs[0].chain component 0 ("e_sepai"): e_sepai: unknown to Cloudinary (no effect "sepai"); did you mean "sepia"?"#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"blurr": 10}]}]}"#, #"outputs[0].chain[0].blurr: unknown step; did you mean "blur"?"#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"blur": 10, "sepia": 5}]}]}"#,
         #"outputs[0].chain[0]: a step is an object with exactly one key naming it (resize, rotate, blur, ...), got "blur", "sepia""#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"mode": "fit", "width": 10, "x": 3}}]}]}"#,
         "outputs[0].chain[0].resize.x: does not apply to mode fit, which neither crops nor pads"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"mode": "fill", "width": 10, "background": "red"}}]}]}"#,
         "outputs[0].chain[0].resize.background: applies only to the pad modes (pad, lpad, mpad, fill_pad, auto_pad), not fill"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"mode": "fill", "width": 10, "height": 10, "gravity": {"x": 1.5, "y": 0}}}]}]}"#,
         "outputs[0].chain[0].resize.gravity.x: must be a fraction between 0 and 1, got 1.5"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"overlay": {"image": "a.png", "text": "b"}}]}]}"#,
         "outputs[0].chain[0].overlay.text: cannot be combined with image; an overlay is one or the other"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"validate": {}}]}]}"#,
         "outputs[0].chain[0].validate: needs at least one constraint (minWidth, maxWidth, minHeight, maxHeight, maxPixels, formats)"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "breakpoints": {"step": 10, "bytes": 100}}]}"#,
         "outputs[0].breakpoints.step: cannot be combined with bytes; space breakpoints by width or by file size"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "breakpoints": {"minWidth": 900, "maxWidth": 100}}]}"#,
         "outputs[0].breakpoints.minWidth: is larger than maxWidth (900 > 100)"),
        (#"{"version": 2, "source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": []}]}"#,
         "version: version 2 is newer than this Derive understands (1); upgrade Derive"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"blur": {"strength": 1.5}}]}]}"#,
         "outputs[0].chain[0].blur.strength: expected an integer, got number 1.5"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "colour": "red"}]}"#,
         "outputs[0].colour: unknown key; expected one of name, chain, format, quality, strip, stripProfile, density, pngType, lossy, loop, delay, tiffLZW, ignoreMaskChannels, colorSpace, keepAttribution, getInfo, defaultImage, progressive, lossless, effort, chromaSubsampling, autoOrient, frame, pages, breakpoints, densities, formats, clip, psd"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "format": "jpeg2000"}]}"#,
         "outputs[0].format: unknown format \"jpeg2000\"; expected one of jpeg, jpg, png, webp, avif, gif, jxl, tiff, tif, jp2, jpc, bmp, ico, heic, heif, svg, pdf, ai, auto, original"),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": []}, {"name": "a", "chain": []}]}"#,
         #"outputs[1].name: duplicate output name "a" (also outputs[0])"#),
        (#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "format": "png", "progressive": true, "effort": 12}]}"#,
         "outputs[0].effort: must be between 0 and 9, got 12"),
        ("{\"source\": 1,}", "invalid JSON at line 1, column 14: unexpected '}'; expected a quoted key"),
    ])
    func rejectsWithPathAndReason(json: String, message: String) {
        do {
            _ = try JSONChainDecoder().decodeJob(json: json)
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.issues.map(\.description).contains(message), "got: \(error.issues.map(\.description))")
        }
    }

    @Test func reportsEveryProblemAtOnce() {
        let json = #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"width": 0}}, {"blur": 9999}], "quality": 0}]}"#
        #expect(throws: ValidationError([
            ValidationIssue(location: "outputs[0].chain[0].resize.width", reason: "must be between 1 and 16384, got 0"),
            ValidationIssue(location: "outputs[0].chain[1].blur.strength", reason: "must be between 1 and 2000, got 9999"),
            ValidationIssue(location: "outputs[0].quality", reason: "must be between 1 and 100, got 0"),
        ])) { try JSONChainDecoder().decodeJob(json: json) }
    }

    @Test func limitsAreConfigurable() throws {
        let limits = ChainLimits(maxOutputDimension: 1000, maxOutputsPerJob: 1, maxChainLength: 2)
        let decoder = JSONChainDecoder(limits: limits)
        let wide = #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"resize": {"width": 1001}}]}]}"#
        #expect(throws: ValidationError(location: "outputs[0].chain[0].resize.width", reason: "must be between 1 and 1000, got 1001")) {
            try decoder.decodeJob(json: wide)
        }
        let two = #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": []}, {"name": "b", "chain": []}]}"#
        #expect(throws: ValidationError(location: "outputs", reason: "has 2 outputs; the limit is 1")) { try decoder.decodeJob(json: two) }
        let long = #"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [{"blur": 1}, {"blur": 2}, {"blur": 3}]}]}"#
        #expect(throws: ValidationError(location: "outputs[0].chain", reason: "has 3 steps; the limit is 2")) { try decoder.decodeJob(json: long) }
        // The defaults are the safe ones documented in the README.
        #expect(ChainLimits.default == ChainLimits(maxOutputDimension: 16384, maxOutputPixels: 100_000_000, maxOutputsPerJob: 50,
                                                   maxChainLength: 40, maxOverlayDepth: 3, maxBreakpoints: 30))
    }

    @Test func modelIsCodableThroughTheSameRules() throws {
        let job = try JSONChainDecoder().decodeJob(json: transformsExample)
        let encoded = JSONWriter.canonical(ChainEncoder.json(job))
        #expect(try JSONChainDecoder().decodeJob(json: encoded) == job)
    }
}

import Foundation

@Suite struct CodableTests {
    @Test func jobsRoundTripThroughFoundationCoders() throws {
        let text = #"{"source": "https://x/a.jpg", "outputs": [{"name": "t", "chain": [{"resize": {"mode": "fill", "width": 0.5, "height": 300}}, {"blur": 20}], "format": "webp"}]}"#
        let viaCodable = try JSONDecoder().decode(JobSpec.self, from: Data(text.utf8))
        #expect(viaCodable == (try JSONChainDecoder().decodeJob(json: text)))
        let reencoded = try JSONEncoder().encode(viaCodable)
        #expect(try JSONDecoder().decode(JobSpec.self, from: reencoded) == viaCodable)
    }

    @Test func codableDecodingReportsTheSameValidationErrors() {
        let text = #"{"source": "https://x/a.jpg", "outputs": [{"name": "t", "chain": [{"resize": {"width": 0}}]}]}"#
        #expect(throws: ValidationError(location: "outputs[0].chain[0].resize.width", reason: "must be between 1 and 16384, got 0")) {
            try JSONDecoder().decode(JobSpec.self, from: Data(text.utf8))
        }
    }
}
