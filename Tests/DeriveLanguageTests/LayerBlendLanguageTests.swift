@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// What `fl_layer_apply`'s component may hold besides the placement (issue 16, item 3): a blend
/// mode (`e_multiply,fl_layer_apply`) and any other effect, which is the layer's last step
/// (`l_bike/e_sepia,fl_layer_apply` turns the bike sepia); string and JSON forms, round trips.
@Suite struct LayerBlendLanguageTests {
    @Test(arguments: [
        ("l_texture/e_multiply,fl_layer_apply", #"{"overlay": {"image": "texture", "blend": "multiply"}}"#,
         Overlay(source: .image("texture"), blend: .multiply)),
        ("l_light/fl_layer_apply,e_screen,g_north", #"{"overlay": {"image": "light", "blend": "screen", "gravity": "north"}}"#,
         Overlay(source: .image("light"), gravity: .compass(.north), blend: .screen)),
        ("l_grain/c_scale,w_1.0/e_overlay,fl_layer_apply", #"{"overlay": {"image": "grain", "chain": [{"resize": {"width": 1.0}}], "blend": "overlay"}}"#,
         Overlay(source: .image("grain"), chain: [.resize(Resize(width: .fraction(1)))], blend: .overlay)),
        ("l_shape/e_mask,fl_layer_apply", #"{"overlay": {"image": "shape", "blend": "mask"}}"#, Overlay(source: .image("shape"), blend: .mask)),
        ("l_shape/e_cut_out,fl_layer_apply", #"{"overlay": {"image": "shape", "blend": "cut_out"}}"#, Overlay(source: .image("shape"), blend: .cutOut)),
        ("l_logo/e_anti_removal,fl_layer_apply", #"{"overlay": {"image": "logo", "blend": "anti_removal"}}"#, Overlay(source: .image("logo"), blend: .antiRemoval)),
        ("l_logo/e_anti_removal:50,fl_layer_apply", #"{"overlay": {"image": "logo", "blend": "anti_removal", "blendLevel": 50}}"#, Overlay(source: .image("logo"), blend: .antiRemoval)),
        ("l_logo/e_anti_removal:80,fl_layer_apply,g_south_east", #"{"overlay": {"image": "logo", "blend": "anti_removal", "blendLevel": 80, "gravity": "south_east"}}"#,
         { var o = Overlay(source: .image("logo"), gravity: .compass(.southEast), blend: .antiRemoval); o.blendLevel = 80; return o }()),
        ("l_shape/fl_cutter,fl_layer_apply", #"{"overlay": {"image": "shape", "blend": "cutter"}}"#, Overlay(source: .image("shape"), blend: .cutter)),
        // As Cloudinary's Kotlin SDK writes it.
        ("l_sample/fl_cutter.layer_apply", #"{"overlay": {"image": "sample", "blend": "cutter"}}"#, Overlay(source: .image("sample"), blend: .cutter)),
        ("l_shape,fl_cutter,fl_layer_apply,g_north", #"{"overlay": {"image": "shape", "blend": "cutter", "gravity": "north"}}"#,
         Overlay(source: .image("shape"), gravity: .compass(.north), blend: .cutter)),
        ("c_limit,w_300,h_300,l_bike/e_sepia,fl_layer_apply",
         #"{"overlay": {"image": "bike", "chain": [{"resize": {"mode": "limit", "width": 300, "height": 300}}, {"sepia": 80}]}}"#,
         Overlay(source: .image("bike"), chain: [.resize(Resize(mode: .limit, width: .pixels(300), height: .pixels(300))), .effect(.named("sepia", 80))])),
        ("l_logo/e_colorize:50,co_red,fl_layer_apply,g_south",
         #"{"overlay": {"image": "logo", "chain": [{"colorize": {"amount": 50, "color": "red"}}], "gravity": "south"}}"#,
         Overlay(source: .image("logo"), chain: [.effect(Effect.colorizeForTests(50, Color(red: 255, green: 0, blue: 0)))], gravity: .compass(.south))),
    ])
    func stringAndJSONMeanTheSameLayer(text: String, json: String, overlay: Overlay) throws {
        #expect(try ToneEffectTests.step(text) == .overlay(overlay))
        #expect(try ToneEffectTests.step(json: json) == .overlay(overlay))
    }

    @Test(arguments: [
        ("l_texture/e_multiply,fl_layer_apply", "l_texture/fl_layer_apply,e_multiply"),
        ("l_light/fl_layer_apply,e_screen,g_north,x_10", "l_light/fl_layer_apply,g_north,x_10,e_screen"),
        ("l_shape/e_cut_out,fl_layer_apply", "l_shape/fl_layer_apply,e_cut_out"),
        ("l_logo/e_anti_removal:50,fl_layer_apply", "l_logo/fl_layer_apply,e_anti_removal"),
        ("l_logo/e_anti_removal:80,fl_layer_apply,g_south", "l_logo/fl_layer_apply,g_south,e_anti_removal:80"),
        ("l_sample/e_sepia/fl_cutter.layer_apply", "l_sample/e_sepia/fl_layer_apply,fl_cutter"),
        // Cloudinary's documentation's example of keeping a shape.
        ("l_text:Unkempt_250_bold:Water/fl_cutter,fl_layer_apply", "l_text:Unkempt_250_bold:Water/fl_layer_apply,fl_cutter"),
        ("l_bike/e_sepia,fl_layer_apply", "l_bike/e_sepia/fl_layer_apply"),
        ("l_bike/e_sepia,fl_layer_apply/l_sheep/e_blackwhite,fl_layer_apply/e_grayscale",
         "l_bike/e_sepia/fl_layer_apply/l_sheep/e_blackwhite/fl_layer_apply/e_grayscale"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// fl_cutter cuts the image to the layer's size, which only the engine knows: the plan
    /// leaves the output's size open and the steps after it wait, as after a trim.
    @Test func stepsAfterACutterWaitForTheLayersSize() throws {
        let p = try plan(["l_shape/fl_cutter,fl_layer_apply/c_scale,w_0.5"], SourceFacts(format: .jpeg, width: 400, height: 300))
        #expect(p.outputs[0].size == nil)
        guard case .deferred(let rest)? = p.outputs[0].operations.last, case .overlay(let o)? = p.outputs[0].operations.dropLast().last else {
            Issue.record("expected the cutter, then deferred steps: \(p.outputs[0].operations)")
            return
        }
        #expect(o.blend == .cutter)
        #expect(try Planner().operations(for: rest, input: Size(80, 40)).size == Size(40, 20))
    }

    /// On faces, a blend mode that works pixel by pixel combines the layers of every face with
    /// the image at once (Cloudinary's SDKs write `l_sample/e_screen,fl_layer_apply,g_face`).
    @Test(arguments: [
        ("l_sample/e_screen,fl_layer_apply,g_face", "l_sample/fl_layer_apply,g_face,e_screen", BlendMode.screen, Gravity.smart(.face)),
        ("l_sample/c_pad,w_100/e_screen,fl_layer_apply,g_face", "l_sample/c_fit,w_100/fl_layer_apply,g_face,e_screen", .screen, .smart(.face)),
        ("l_sample/e_mask,fl_layer_apply,g_face", "l_sample/fl_layer_apply,g_face,e_mask", .mask, .smart(.face)),
        ("l_a/e_multiply,fl_layer_apply,g_faces", "l_a/fl_layer_apply,g_faces,e_multiply", .multiply, .smart(.faces)),
        ("l_a/e_cut_out,fl_layer_apply,g_faces", "l_a/fl_layer_apply,g_faces,e_cut_out", .cutOut, .smart(.faces)),
    ])
    func blendsOnFaces(text: String, printed: String, blend: BlendMode, gravity: Gravity) throws {
        guard case .overlay(let o) = try ToneEffectTests.step(text) else {
            Issue.record("not an overlay")
            return
        }
        #expect(o.blend == blend && o.gravity == gravity)
        try expectRoundTrip(text, printed: printed)
    }

    /// `fl_replace_image`: the layer replaces the image, in either form; the size after it is the
    /// layer's, which the engine learns (the rest of the chain waits for it, as after fl_cutter).
    @Test func replaceImage() throws {
        guard case .overlay(let o) = try ToneEffectTests.step("l_sample,fl_replace_image,e_cartoonify") else {
            Issue.record("not an overlay")
            return
        }
        #expect(o.blend == .replaceImage && o.source == .image("sample") && o.chain.count == 1)
        try expectRoundTrip("l_sample,fl_replace_image,e_cartoonify", printed: "l_sample/e_cartoonify/fl_layer_apply,fl_replace_image")
        try expectRoundTrip("l_sample/e_sepia/fl_replace_image.layer_apply", printed: "l_sample/e_sepia/fl_layer_apply,fl_replace_image")
        #expect(try ToneEffectTests.step(json: #"{"overlay": {"image": "sample", "blend": "replace_image"}}"#) == .overlay(Overlay(source: .image("sample"), blend: .replaceImage)))
        let planned = try plan(["l_sample,fl_replace_image/c_scale,w_100"], SourceFacts(format: .jpeg, width: 400, height: 300)).outputs[0]
        #expect(planned.size == nil)
        guard case .deferred? = planned.operations.last else {
            Issue.record("\(planned.operations)")
            return
        }
        for (text, reason) in [
            ("u_sample,fl_replace_image", "fl_replace_image beside an underlay (u_): known to Cloudinary, not supported by Derive"),
            ("l_a/e_multiply,fl_replace_image.layer_apply", "e_multiply beside fl_replace_image: a layer combines with the image one way"),
            ("l_a/fl_replace_image.layer_apply,g_faces", "fl_replace_image with g_faces: known to Cloudinary, not supported by Derive"),
        ] {
            #expect(CloudinaryParser().parse(text).issues.contains { $0.reason.hasPrefix(reason) }, "\(text): \(CloudinaryParser().parse(text).issues)")
        }
        #expect(CloudinaryParser().parse("fl_replace_image").notes.first?.contains("fl_replace_image outside a layer") == true)
    }

    /// anti_removal changes the layer, so it is read on faces too.
    @Test func antiRemovalOnFaces() throws {
        #expect(try ToneEffectTests.step("l_mask/e_anti_removal:30,fl_layer_apply,g_faces") == .overlay({
            var o = Overlay(source: .image("mask"), gravity: .smart(.faces), blend: .antiRemoval)
            o.blendLevel = 30
            return o
        }()))
    }

    /// A blend mode is part of the identity: the same layer drawn over is another output.
    @Test func theBlendModeIsPartOfTheIdentity() throws {
        let over = try ToneEffectTests.step("l_t/fl_layer_apply"), multiplied = try ToneEffectTests.step("l_t/e_multiply,fl_layer_apply")
        #expect(ChainEncoder.json([over]) != ChainEncoder.json([multiplied]))
    }

    @Test(arguments: [
        ("u_bg/e_multiply,fl_layer_apply", "e_multiply beside fl_layer_apply of an underlay (u_): known to Cloudinary, not supported by Derive: Derive blends overlays (l_) only; an underlay is drawn beneath the image"),
        ("l_a/fl_layer_apply/e_screen", "e_screen: known to Cloudinary, not supported by Derive outside fl_layer_apply: a blend mode says how a layer combines with the image; write it beside the flag (l_<layer>/e_screen,fl_layer_apply)"),
        ("l_a/e_anti_removal:0,fl_layer_apply", "e_anti_removal:0: unknown to Cloudinary (e_anti_removal's level is a whole number from 1 to 100)"),
        ("l_a/e_anti_removal:strong,fl_layer_apply", "e_anti_removal:strong: unknown to Cloudinary (e_anti_removal's level is a whole number from 1 to 100)"),
        ("l_a/fl_layer_apply/e_anti_removal:20", "e_anti_removal:20: known to Cloudinary, not supported by Derive outside fl_layer_apply"),
        ("u_bg/fl_cutter,fl_layer_apply", "fl_cutter beside fl_layer_apply of an underlay (u_): known to Cloudinary, not supported by Derive: Derive blends overlays (l_) only; an underlay is drawn beneath the image"),
        ("l_a/e_multiply,fl_cutter.layer_apply", "e_multiply beside fl_cutter: a layer combines with the image one way"),
        ("l_a,fl_cutter,fl_layer_apply,g_face", "fl_cutter with g_face: known to Cloudinary, not supported by Derive: cutter takes one layer as a whole (cutter cuts the image to it, displace moves the image by it, replace_image makes it the image); a layer placed on faces (gravity face or faces) is one per face"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.contains { $0.hasPrefix(reason) }, "\(issues)")
    }

    @Test(arguments: [
        (#"{"overlay": {"image": "a", "blend": "darken"}}"#, #"[0].overlay.blend: expected one of "multiply", "screen", "overlay", "mask", "cut_out", "anti_removal", "cutter", "displace", "replace_image", got string "darken""#),
        (#"{"overlay": {"image": "a", "blend": "cutter", "gravity": "faces"}}"#, "[0].overlay.blend: cutter takes one layer as a whole (cutter cuts the image to it, displace moves the image by it, replace_image makes it the image); a layer placed on faces (gravity face or faces) is one per face"),
        (#"{"overlay": {"image": "a", "blend": "multiply", "blendLevel": 20}}"#, #"[0].overlay.blendLevel: is anti_removal's level; give it with "blend": "anti_removal""#),
        (#"{"overlay": {"image": "a", "blend": "anti_removal", "blendLevel": 101}}"#, "[0].overlay.blendLevel: must be between 1 and 100, got 101"),
        (#"{"overlay": {"image": "a", "underlay": true, "blend": "mask"}}"#, "[0].overlay.blend: applies to overlays; an underlay is drawn beneath the image"),
    ])
    func jsonRefusals(json: String, message: String) {
        #expect(throws: ValidationError.self) { try TransformationInput.parse(#"[\#(json)]"#) }
        do { _ = try TransformationInput.parse(#"[\#(json)]"#) } catch {
            #expect(error.issues.map(\.description).contains(message), "\(error.issues.map(\.description))")
        }
    }
}

/// `fl_tiled` and `fl_no_overflow` beside a layer (issue 16, item 3).
@Suite struct LayerFlagLanguageTests {
    @Test func tiledInStringsAndJSON() throws {
        var tiled = Overlay(source: .image("logo"), gravity: .compass(.northWest))
        tiled.tiled = true
        #expect(try ToneEffectTests.step("l_logo/fl_layer_apply,fl_tiled,g_north_west") == .overlay(tiled))
        #expect(try ToneEffectTests.step("l_logo,fl_tiled,g_north_west") == .overlay(tiled))
        #expect(try ToneEffectTests.step(json: #"{"overlay": {"image": "logo", "gravity": "north_west", "tiled": true}}"#) == .overlay(tiled))
        try expectRoundTrip("l_logo/c_scale,w_30/fl_layer_apply,fl_tiled", printed: "l_logo/c_scale,w_30/fl_layer_apply,fl_tiled")
        #expect(try canonical(string: "l_logo/fl_layer_apply,fl_tiled").identity != (try canonical(string: "l_logo/fl_layer_apply").identity))
    }

    /// A Derive layer never grows the canvas, so fl_no_overflow changes nothing: the same
    /// identity, and a note says so.
    @Test func noOverflowChangesNothingAndSaysSo() throws {
        let result = CloudinaryParser().parse("l_logo/fl_layer_apply,fl_no_overflow,g_south")
        #expect(result.issues.isEmpty)
        #expect(result.notes.contains { $0.contains("fl_no_overflow: a layer never extends the canvas in Derive") })
        #expect(try canonical(string: "l_logo/fl_layer_apply,fl_no_overflow,g_south").identity == (try canonical(string: "l_logo/fl_layer_apply,g_south").identity))
    }

    /// Outside a layer they have nothing to act on: ignored, as Cloudinary's SDKs write them
    /// on the base image, and the notes say so.
    @Test(arguments: ["fl_tiled", "c_scale,w_10,fl_no_overflow"])
    func outsideALayerTheyAreIgnored(text: String) {
        let parsed = CloudinaryParser().parse(text)
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        #expect(parsed.notes.count == 1 && parsed.notes[0].contains("outside a layer: it places or combines a layer"), "\(parsed.notes)")
    }
}

/// `l_` and `fl_layer_apply` in one component (issue 16, item 3), as Cloudinary accepts:
/// the same layer as the two-component form, which is how it prints.
@Suite struct OneComponentLayerApplyTests {
    @Test(arguments: [
        ("l_badge,fl_layer_apply,g_north_east", "l_badge/fl_layer_apply,g_north_east"),
        ("l_badge,fl_layer_apply,g_south,x_10,y_20", "l_badge/fl_layer_apply,g_south,x_10,y_20"),
        ("l_texture,e_multiply,fl_layer_apply", "l_texture/e_multiply,fl_layer_apply"),
        ("l_logo,c_scale,w_100,fl_layer_apply,g_north_west", "l_logo/c_scale,w_100/fl_layer_apply,g_north_west"),
        ("l_logo,e_sepia,fl_layer_apply", "l_logo/e_sepia,fl_layer_apply"),
        ("u_site_bg,fl_layer_apply", "u_site_bg/fl_layer_apply"),
        ("l_logo,fl_layer_apply.tiled,g_north_west", "l_logo/fl_layer_apply,fl_tiled,g_north_west"),
        ("l_text:Arial_40:Hi,co_white,fl_layer_apply,g_south", "l_text:Arial_40:Hi,co_white/fl_layer_apply,g_south"),
    ])
    func meansTheSameAsTwoComponents(one: String, two: String) throws {
        let parsed = CloudinaryParser().parse(one)
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        #expect(try ToneEffectTests.step(one) == (try ToneEffectTests.step(two)))
        #expect(try canonical(string: one).identity == (try canonical(string: two).identity))
    }

    @Test func roundTripsAsTwoComponents() throws {
        try expectRoundTrip("l_badge,fl_layer_apply,g_north_east", printed: "l_badge/fl_layer_apply,g_north_east")
        try expectRoundTrip("l_texture,e_screen,fl_layer_apply,x_5", printed: "l_texture/fl_layer_apply,x_5,e_screen")
    }

    /// Inside another layer, the one-component layer is closed at once: the outer fl_layer_apply
    /// still closes the outer layer.
    @Test func nestsInsideALayer() throws {
        let outer = try ToneEffectTests.step("l_card/l_badge,fl_layer_apply,g_north_east/fl_layer_apply,g_south")
        let expected = Overlay(source: .image("card"), chain: [.overlay(Overlay(source: .image("badge"), gravity: .compass(.northEast)))],
                               gravity: .compass(.south))
        #expect(outer == .overlay(expected))
    }

    @Test func anUnderlayTakesNoBlendMode() {
        let issues = CloudinaryParser().parse("u_bg,e_multiply,fl_layer_apply").issues.map(\.reason)
        #expect(issues == ["e_multiply beside fl_layer_apply of an underlay (u_): known to Cloudinary, not supported by Derive: Derive blends overlays (l_) only; an underlay is drawn beneath the image"], "\(issues)")
    }
}


/// `e_displace` beside `fl_layer_apply` (issue 30): a blend mode whose x_ and y_ are the
/// displacement's amounts; printed back as Cloudinary writes it.
@Suite struct DisplaceLanguageTests {
    @Test(arguments: ["l_radialize/e_displace,fl_layer_apply,x_100,y_50", "l_pattern/e_displace,fl_layer_apply,y_75"])
    func readAndPrintedBack(text: String) throws {
        let parsed = CloudinaryParser().parse(text)
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        guard case .overlay(let o)? = parsed.steps.first else {
            Issue.record("\(parsed.steps)")
            return
        }
        #expect(o.blend == .displace)
        #expect(o.y == .pixels(text.hasSuffix("y_50") ? 50 : 75))
        let model = try canonical(string: text)
        let printed = try CloudinaryPrinter.string(for: model)
        #expect(try canonical(string: printed).identity == model.identity)
        let apply = printed.split(separator: "/").last.map(String.init) ?? ""
        #expect(apply.contains("e_displace") && apply.contains("fl_layer_apply"), "\(printed)")
    }

    /// On faces a displacement has one map for one image: refused, naming it.
    @Test func onFacesItIsRefused() {
        let parsed = CloudinaryParser().parse("l_pattern/e_displace,fl_layer_apply,g_face,y_75")
        #expect(parsed.issues.first?.description.contains("displace") == true, "\(parsed.issues)")
    }

    /// Under an underlay it is refused as the other blend modes are.
    @Test func underAnUnderlayItIsRefused() {
        let parsed = CloudinaryParser().parse("u_pattern/e_displace,fl_layer_apply,y_75")
        #expect(parsed.issues.first?.description.contains("e_displace") == true, "\(parsed.issues)")
    }
}
