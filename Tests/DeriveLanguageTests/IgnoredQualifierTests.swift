@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Crop modes and gravities Cloudinary accepts and ignores (issue 15, item 5): read as
/// Cloudinary does, and said in the plan's notes.
@Suite struct IgnoredQualifierTests {
    static let source = SourceFacts(format: .jpeg, width: 4000, height: 3000)

    /// Each string means what the second says, and the note names what was left out.
    @Test(arguments: [
        ("c_fill,e_grayscale,q_auto", "e_grayscale/q_auto:good",
         #"chain component 0 ("c_fill,e_grayscale,q_auto"): c_fill: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#),
        ("g_north_west", "",
         #"chain component 0 ("g_north_west"): g_north_west: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#),
        ("c_fill,x_100,y_100/c_crop,w_100", "c_crop,w_100",
         #"chain component 0 ("c_fill,x_100,y_100"): c_fill,x_100,y_100: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#),
        ("c_fit,g_north/e_sepia", "e_sepia:80",
         #"chain component 0 ("c_fit,g_north"): c_fit,g_north: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#),
        ("w_100,g_north_west", "w_100",
         #"chain component 0 ("w_100,g_north_west"): g_north_west: Cloudinary ignores a gravity with mode scale, which neither crops nor pads"#),
        ("c_limit,w_300,g_south", "c_limit,w_300",
         #"chain component 0 ("c_limit,w_300,g_south"): g_south: Cloudinary ignores a gravity with mode limit, which neither crops nor pads"#),
        ("c_scale", "",
         #"chain component 0 ("c_scale"): c_scale: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#),
        ("c_fit,w_10,g_north", "c_fit,w_10",
         #"chain component 0 ("c_fit,w_10,g_north"): g_north: Cloudinary ignores a gravity with mode fit, which neither crops nor pads"#),
        ("c_scale,l_text:Arial_18:Hi", "l_text:Arial_18:Hi/fl_layer_apply",
         #"chain component 0 ("c_scale,l_text:Arial_18:Hi"): c_scale: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#),
        // A zoom with c_crop or c_thumb and a compass gravity (or none): Cloudinary zooms only
        // around faces or custom coordinates.
        ("c_thumb,g_west,h_250,w_250,z_2.5", "c_thumb,g_west,h_250,w_250",
         #"chain component 0 ("c_thumb,g_west,h_250,w_250,z_2.5"): z_2.5 with c_thumb and g_west: Cloudinary zooms only around detected faces or custom coordinates; with a compass gravity it ignores the zoom, and so does Derive"#),
        ("c_crop,h_70,w_50,z_0.5", "c_crop,h_70,w_50",
         #"chain component 0 ("c_crop,h_70,w_50,z_0.5"): z_0.5 with c_crop and no gravity (center): Cloudinary zooms only around detected faces or custom coordinates; with a compass gravity it ignores the zoom, and so does Derive"#),
        ("ar_1.5,c_thumb,g_north,h_100,z_1.5", "ar_1.5,c_thumb,g_north,h_100",
         #"chain component 0 ("ar_1.5,c_thumb,g_north,h_100,z_1.5"): z_1.5 with c_thumb and g_north: Cloudinary zooms only around detected faces or custom coordinates; with a compass gravity it ignores the zoom, and so does Derive"#),
    ])
    func readAsCloudinaryDoes(text: String, meaning: String, note: String) throws {
        let parsed = CloudinaryParser().parse(text)
        #expect(parsed.issues.isEmpty, "\(parsed.issues)")
        #expect(parsed.notes == [note])
        let model = try canonical(string: text)
        let plain = try canonical(string: meaning)
        #expect(model == plain)
        #expect(model.identity == plain.identity)
        // string → model → string → model: the printed form is the plain one, same identity.
        let printed = try CloudinaryPrinter.string(for: model)
        #expect(try canonical(string: printed).identity == model.identity)
    }

    /// `explain` (the plan's JSON) and the planned output carry the note.
    @Test func thePlanSaysSo() throws {
        let planned = try plan(["c_fill,e_grayscale"], Self.source)
        #expect(planned.outputs[0].notes.count == 1)
        #expect(planned.outputs[0].size == Size(4000, 3000))
        guard case .array(let outputs)? = planned.json["outputs"], case .array(let notes)? = outputs[0]["notes"] else {
            Issue.record("no notes in \(JSONWriter.pretty(planned.json))")
            return
        }
        #expect(notes == [.string(#"chain component 0 ("c_fill,e_grayscale"): c_fill: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#)])
        // A string read whole has no notes, and the plan says nothing.
        let plain = try plan(["c_fill,w_100,h_100"], Self.source)
        guard case .array(let plainOutputs)? = plain.json["outputs"], let first = plainOutputs.first else {
            Issue.record("no outputs in \(JSONWriter.pretty(plain.json))")
            return
        }
        #expect(first["notes"] == nil)
    }

    /// A zoom ignored beside a compass gravity: the plan's crop is the one without it, from
    /// the gravity's edge (c_crop,g_west,w_1000,h_500 on 4000x3000 keeps x 0...1000,
    /// y 1250...1750 at 1000x500), and a face gravity still zooms (its refusal elsewhere is
    /// unchanged: z_ with c_fill is refused).
    @Test func aZoomBesideACompassGravityLeavesTheCropAsItIs() throws {
        let zoomed = try plan(["c_crop,g_west,w_1000,h_500,z_3"], Self.source)
        let plain = try plan(["c_crop,g_west,w_1000,h_500"], Self.source)
        #expect(zoomed.outputs[0].size == Size(1000, 500))
        #expect(zoomed.outputs[0].size == plain.outputs[0].size)
        #expect("\(zoomed.outputs[0].operations)" == "\(plain.outputs[0].operations)")
        guard case .crop(let region)? = zoomed.outputs[0].operations.first(where: { if case .crop = $0 { true } else { false } }) else {
            Issue.record("no crop in \(zoomed.outputs[0].operations)")
            return
        }
        #expect(region == Rect(x: 0, y: 1250, width: 1000, height: 500))
        guard case .array(let outputs)? = zoomed.json["outputs"], case .array(let notes)? = outputs[0]["notes"] else {
            Issue.record("no notes in \(JSONWriter.pretty(zoomed.json))")
            return
        }
        #expect(notes.count == 1)
        let parsed = CloudinaryParser().parse("c_fill,w_100,h_100,g_north,z_2")
        #expect(parsed.issues.first?.description.contains("z_2") == true, "\(parsed.issues)")
    }

    /// What is not known to be ignored is still refused, naming the parameter.
    @Test(arguments: [
        // A zoom with g_auto: Cloudinary zooms around what it detects; Derive does not.
        ("c_thumb,g_auto,h_200,w_100,z_0.5", #"chain component 0 ("c_thumb,g_auto,h_200,w_100,z_0.5"): z_0.5: unknown to Cloudinary (z applies to modes thumb and crop with a face gravity (face, faces and their :center and :auto forms))"#),
        // Offsets with a mode that neither crops nor pads are not only a gravity.
        ("w_100,g_north,x_10", #"chain component 0 ("w_100,g_north,x_10"): g_north: unknown to Cloudinary (g does not apply to mode scale, which neither crops nor pads)"#),
    ])
    func stillRefused(text: String, message: String) {
        let parsed = CloudinaryParser().parse(text)
        #expect(parsed.issues.first?.description == message)
        #expect(parsed.notes.isEmpty)
    }

    /// JSON is Derive's own language: a contradiction there is still an error.
    @Test func jsonStillRefusesTheContradiction() {
        #expect(throws: ValidationError.self) { try TransformationInput.parse(#"[{"resize": {"mode": "fill"}}]"#) }
        #expect(throws: ValidationError.self) { try TransformationInput.parse(#"[{"resize": {"width": 100, "gravity": "north"}}]"#) }
    }

    /// fl_ignore_aspect_ratio with c_scale: the side not given stays as it is.
    @Test(arguments: [
        ("c_scale,w_200,fl_ignore_aspect_ratio", "c_scale,w_200,h_1.0", Size(200, 3000)),
        ("h_100,fl_ignore_aspect_ratio", "w_1.0,h_100", Size(4000, 100)),
        ("w_200,h_100,fl_ignore_aspect_ratio", "w_200,h_100", Size(200, 100)),
        ("l_logo,w_50,fl_ignore_aspect_ratio/fl_layer_apply", "l_logo/w_50,h_1.0/fl_layer_apply", nil),
    ])
    func ignoreAspectRatio(text: String, meaning: String, size: Size?) throws {
        let model = try canonical(string: text)
        #expect(model == (try canonical(string: meaning)))
        #expect(try canonical(string: CloudinaryPrinter.string(for: model)).identity == model.identity)
        if let size { #expect(try plan([text], Self.source).outputs[0].size == size) }
    }

    @Test(arguments: [
        ("c_fill,w_200,fl_ignore_aspect_ratio", #"chain component 0 ("c_fill,w_200,fl_ignore_aspect_ratio"): fl_ignore_aspect_ratio with c_fill: known to Cloudinary, not supported by Derive; Derive reads the flag with c_scale and w_ or h_ (the other side stays as it is)"#),
        ("w_200,ar_1.0,fl_ignore_aspect_ratio", #"chain component 0 ("w_200,ar_1.0,fl_ignore_aspect_ratio"): fl_ignore_aspect_ratio with ar_: known to Cloudinary, not supported by Derive; Derive reads the flag with c_scale and w_ or h_ (the other side stays as it is)"#),
    ])
    func ignoreAspectRatioRefused(text: String, message: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.description) == [message])
    }

    /// A ratio alone with a mode that neither crops nor pads is refused naming it; with a crop
    /// mode it picks the largest box of that shape, as before.
    @Test func aRatioAloneNeedsACropOrPadMode() throws {
        #expect(CloudinaryParser().parse("ar_3:2").issues.map(\.description) == [
            #"chain component 0 ("ar_3:2"): ar_3:2 without w_ or h_: known to Cloudinary, not supported by Derive with c_scale (the default): Cloudinary does not document what a mode that neither crops nor pads makes of a ratio alone; give w_ or h_, or a crop or pad mode (c_fill,ar_3:2 keeps the largest box of that shape)"#,
        ])
        #expect(CloudinaryParser().parse("c_fit,ar_1.0").issues.first?.description.contains("not supported by Derive with c_fit:") == true)
        #expect(try plan(["c_fill,ar_1.0"], Self.source).outputs[0].size == Size(3000, 3000))
    }
}
