@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// Variables that name a layer (issue 30): asset references (`$logo_ref:!brand:logo!`, used as
/// `l_$logo` or `u_$logo`) and a text layer's style from a variable in the long form
/// (`$style_!Arial_12!/l_text:$style:Hi/…/fl_layer_apply`).
@Suite struct LayerVariableTests {
    static let source = SourceFacts(format: .jpeg, width: 1200, height: 800)

    static func overlay(_ text: String) throws -> Overlay? {
        for operation in try plan([text], Self.source).outputs[0].operations {
            if case .overlay(let o) = operation { return o }
        }
        return nil
    }

    /// The reference's public id is the layer, `:` a folder as in `l_`, over or under the image.
    @Test(arguments: [
        ("$foo_ref:!path:to:image!/l_$foo/fl_layer_apply", "path/to/image", false),
        ("$bestpic_ref:!file.png!/l_$bestpic,g_north", "file.png", false),
        ("$foo_ref:!path:to:image!/u_$foo/c_scale,w_100/fl_layer_apply,g_north", "path/to/image", true),
    ])
    func aReferenceIsTheLayer(text: String, id: String, underlay: Bool) throws {
        let o = try #require(try Self.overlay(text))
        #expect(o.source == .image(id) && o.underlay == underlay)
        #expect(CloudinaryParser().parse(text).notes.isEmpty)
    }

    /// Printed back as Cloudinary writes it, read back from JSON's `reference`, and hashed apart
    /// from a text variable of the same letters (which names no asset for Cloudinary).
    @Test func referencesRoundTrip() throws {
        try expectRoundTrip("$foo_ref:!path:to:image!/l_$foo/fl_layer_apply", printed: "$foo_ref:!path:to:image!/l_$foo/fl_layer_apply")
        try expectRoundTrip("$var_ref:!asset!", printed: "$var_ref:!asset!")
        let json = #"[{"variable": {"name": "foo", "reference": "path/to/image"}}, {"overlay": {"image": "$foo"}}]"#
        #expect(try canonical(json: json).identity == canonical(string: "$foo_ref:!path:to:image!/l_$foo/fl_layer_apply").identity)
        #expect(try canonical(string: "$foo_ref:!a!/l_$foo/fl_layer_apply").identity != canonical(string: "$foo_!a!/l_$foo/fl_layer_apply").identity)
    }

    /// A reference nothing uses is read (Cloudinary's SDKs print it alone) and the notes say
    /// that it changes nothing; a use in a later component, or a named transformation that may
    /// use it, silences the note.
    @Test(arguments: [
        ("$var_ref:!asset!", true),
        ("$bestpic_ref:!file.png!/c_scale,w_100", true),
        ("$b_ref:!x!/l_$bb/fl_layer_apply", true),
        ("$b_ref:!x!/l_$b/fl_layer_apply", false),
        ("$b_ref:!x!/t_thumb", false),
    ])
    func anUnusedReferenceIsNoted(text: String, noted: Bool) {
        let parsed = CloudinaryParser().parse(text)
        let note = parsed.notes.contains { $0.contains("the reference changes nothing") }
        #expect(note == noted, "\(parsed.notes) \(parsed.issues)")
    }

    /// Refusals name the parameter: a reference is not a number, and needs a public id.
    @Test(arguments: [
        ("$myexp_ref:!my_file!_to_i", "$myexp_ref:!my_file!_to_i: unknown to Cloudinary (an asset reference is ref:!<public id>!, folders separated by ':' (ref:!brand:logo!), and names an asset: it is not converted to a number)"),
        ("$r_ref:!a::b!", "$r_ref:!a::b!: unknown to Cloudinary (an asset reference is ref:!<public id>!, folders separated by ':' (ref:!brand:logo!), and names an asset: it is not converted to a number)"),
    ])
    func malformedReferences(text: String, reason: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.reason) == [reason])
    }

    @Test func aReferenceIsNotANumber() {
        #expect(planRefusal("$r_ref:!logo!/c_scale,w_$r", Self.source).map(\.reason) == ["w_$r: unknown to Cloudinary ($r holds a text where a number goes)"])
        let bad = #"[{"variable": {"name": "r", "reference": "a//b"}}]"#
        #expect(throws: ValidationError.self) { try canonical(json: bad) }
    }

    /// The long form of a text layer with its style from a variable: the layer's own chain and
    /// placement are read, with the variable's text written in when planning.
    @Test func aTextStyleFromAVariableInTheLongForm() throws {
        let o = try #require(try Self.overlay("$s_!Arial_12_bold!/l_text:$s:Hi/c_scale,w_10/fl_layer_apply,g_north"))
        guard case .text(let layer) = o.source else {
            Issue.record("not a text layer: \(o.source)")
            return
        }
        #expect(layer.font == "Arial" && layer.size == 12 && layer.bold && layer.text == "Hi")
        #expect(o.gravity == .compass(.north))
        #expect(o.chain.contains { if case .resize(let r) = $0 { r.width == .pixels(10) } else { false } })
        let bare = try #require(try Self.overlay("$style_!Arial_12!/l_text:$style:hello-world/fl_layer_apply"))
        #expect(bare.gravity == nil || bare.gravity == .compass(.center))
        try expectRoundTrip("$s_!Arial_12!/l_text:$s:Hi/c_scale,w_10/fl_layer_apply,g_north",
                            printed: "$s_!Arial_12!/l_text:$s:Hi/c_scale,w_10/fl_layer_apply,g_north")
    }

    /// What the style's text cannot make: another parameter, or a style Cloudinary lacks.
    @Test func aStyleVariableHoldsAStyle() {
        #expect(planRefusal(#"[{"variable": {"name": "s", "text": "Arial_12/e_sepia"}}, {"template": "l_text:$s:Hi/fl_layer_apply"}]"#, Self.source).first?.reason.contains("cannot hold ',' or '/'") == true)
        #expect(planRefusal("$s_!Arial!/l_text:$s:Hi/fl_layer_apply", Self.source).first?.reason.hasPrefix("l_text:Arial: known to Cloudinary, not supported by Derive") == true)
    }

    /// `$img_current`: the plan keeps the image where it is assigned and draws it where it is
    /// named, through the layer's own chain; printed back and read from JSON alike.
    @Test func theCurrentImageIsKeptAndDrawn() throws {
        let text = "$img_current/e_grayscale/l_$img,w_0.3,bo_10px_solid_white/fl_layer_apply,g_north_west/q_auto,f_auto,dpr_2.0,w_900"
        let planned = try plan([text], Self.source).outputs[0]
        guard planned.operations.count == 4, case .snapshot("img") = planned.operations[0], case .effect(.declared(let gray)) = planned.operations[1], gray.name == "grayscale",
              case .overlay(let o) = planned.operations[2] else {
            Issue.record("\(planned.operations)")
            return
        }
        #expect(o.source == .snapshot("img") && o.gravity == .compass(.northWest))
        #expect(o.chain.contains { if case .border(let b) = $0 { b.width == 10 } else { false } })
        #expect(planned.size == Size(1800, 1200))
        try expectRoundTrip("$img_current/e_grayscale/l_$img/fl_layer_apply", printed: "$img_current/e_grayscale/l_$img/fl_layer_apply")
        let json = #"[{"variable": {"name": "img", "image": "current"}}, {"grayscale": {}}, {"overlay": {"image": "$img"}}]"#
        #expect(try canonical(json: json).identity == canonical(string: "$img_current/e_grayscale/l_$img/fl_layer_apply").identity)
    }

    /// The documented underlay: kept in an assignment beside a number, drawn inside an if_ block.
    @Test func theCurrentImageAsAnUnderlayInABlock() throws {
        let text = "$img_current,$height_ih/if_w_lt_800/c_scale,e_blur:800,u_$img,w_800,h_$height/e_brightness:40,fl_layer_apply/if_end"
        let narrow = try plan([text], SourceFacts(format: .jpeg, width: 600, height: 400)).outputs[0].operations
        guard case .snapshot("img")? = narrow.first, case .overlay(let o)? = narrow.last else {
            Issue.record("\(narrow)")
            return
        }
        #expect(o.underlay && o.source == .snapshot("img"))
        // Wide enough: the block is skipped; the image is kept for nothing (the engine keeps none).
        #expect(try plan([text], Self.source).outputs[0].operations == [.snapshot("img")])
    }

    /// Refused: a layer named from an image variable that is not set, another value than
    /// `current` in JSON, and an image variable where a number goes.
    @Test func imageVariablesRefused() {
        #expect(planRefusal("l_$img/fl_layer_apply", Self.source).first?.reason.contains("no text variable $img is set") == true)
        #expect(throws: ValidationError.self) { try canonical(json: #"[{"variable": {"name": "img", "image": "previous"}}]"#) }
        #expect(planRefusal("$img_current/e_trim/l_$img/fl_layer_apply", Self.source).first?.reason.hasPrefix("l_$img after a step whose size or branch the engine decides") == true)
        #expect(planRefusal("$img_current/if_fc_gt_0/l_$img/fl_layer_apply/if_end", Self.source).first?.reason.hasPrefix("l_$img after a step whose size or branch the engine decides") == true)
        #expect(planRefusal("$img_current/c_scale,w_$img", Self.source).map(\.reason) == ["w_$img: unknown to Cloudinary ($img holds an image, $img_current, which only a layer draws: l_$img)"])
    }
}
