@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// The pure decisions behind face crops, with faces given: no detector, no pixels.
@Suite struct FaceGeometryTests {
    let image = Size(1000, 600)
    let left = Rect(x: 100, y: 200, width: 100, height: 100)
    let right = Rect(x: 700, y: 250, width: 140, height: 140)

    @Test func facesGravityCentresTheWindowOnEveryFaceWhenTheyFit() {
        let d = FaceGeometry.window(Size(900, 400), in: image, faces: [left, right], gravity: .faces, attention: nil)
        #expect(d.basis == .faces && d.facesKept == 2 && d.facesSeen == 2)
        #expect(d.rect.width == 900 && d.rect.height == 400)
    }

    @Test func faceGravityTakesTheLargestFaceWithItsHead() {
        let d = FaceGeometry.window(Size(300, 300), in: image, faces: [left, right], gravity: .face, attention: nil)
        #expect(d.basis == .face && d.facesKept == 1)
        let head = FaceGeometry.head(right)
        #expect(FaceGeometry.contains(d.rect, head))
        #expect(abs((d.rect.x + 150) - (right.x + 70)) <= 1)
    }

    @Test func theLargestFaceWinsWhateverItsScore() {
        // Best first, as the detector reports them: g_face takes the largest face, not the most
        // confident (issue 28: a three-quarter subject scores below a frontal bystander).
        let confident = Rect(x: 0, y: 0, width: 117, height: 117)
        let larger = Rect(x: 500, y: 0, width: 121, height: 130)
        #expect(FaceGeometry.largest([confident, larger]) == larger)
        // Of areas within 5% (rounding when boxes are scaled), the first (the most confident).
        let rounded = Rect(x: 800, y: 0, width: 118, height: 118)
        #expect(FaceGeometry.largest([confident, rounded]) == confident)
        #expect(FaceGeometry.largest([]) == nil)
    }

    @Test func autoKeepsTheFacesAndLetsAttentionChooseWithinThem() {
        // Attention would cut at the far left; the window must still hold the right face.
        let attention = Rect(x: 0, y: 0, width: 400, height: 400)
        let d = FaceGeometry.window(Size(400, 400), in: image, faces: [right], gravity: .auto, attention: attention)
        #expect(d.basis == .faces && d.facesKept == 1)
        #expect(FaceGeometry.contains(d.rect, right))
        // Without faces, attention's window stands.
        let plain = FaceGeometry.window(Size(400, 400), in: image, faces: [], gravity: .auto, attention: attention)
        #expect(plain.basis == .attention && plain.rect == attention)
    }

    @Test func autoKeepsTheLargestFacesWhenNotAllFit() {
        let d = FaceGeometry.window(Size(300, 400), in: image, faces: [left, right], gravity: .auto, attention: nil)
        #expect(d.facesKept == 1 && FaceGeometry.contains(d.rect, right))
    }

    @Test(arguments: [(SmartCrop.face, CropDecision.Basis.center), (.faces, .center), (.faceCenter, .center),
                      (.facesCenter, .center), (.faceAuto, .attention), (.facesAuto, .attention)])
    func faceGravitiesFallBackWithoutFaces(gravity: SmartCrop, fallback: CropDecision.Basis) {
        let attention = Rect(x: 600, y: 200, width: 400, height: 400)
        let d = FaceGeometry.window(Size(400, 400), in: image, faces: [], gravity: gravity, attention: attention)
        #expect(d.fallback == fallback)
        #expect(d.rect == (fallback == .center ? Rect(x: 300, y: 100, width: 400, height: 400) : attention))
    }

    @Test func thumbRegionNeverEnlargesAndZoomsIn() throws {
        var r = Resize(mode: .thumb, width: .pixels(150), height: .pixels(150), gravity: .smart(.face))
        let plain = try #require(FaceGeometry.region(for: r, in: image, faces: [left]))
        #expect(plain.output == Size(150, 150))
        #expect(plain.region.width == plain.region.height && plain.region.width >= 150)
        #expect(FaceGeometry.contains(plain.region, left))
        r.zoom = 2
        let zoomed = try #require(FaceGeometry.region(for: r, in: image, faces: [left]))
        #expect(zoomed.region.width < plain.region.width && zoomed.region.width >= 150)
        // No face: no region, and the step falls back.
        #expect(FaceGeometry.region(for: r, in: image, faces: []) == nil)
    }

    @Test func cropRegionIsTheRequestedSizeAroundTheFaceMovedByOffsets() throws {
        let r = Resize(mode: .crop, width: .pixels(200), height: .pixels(200), gravity: .smart(.face), x: .pixels(20), y: .fraction(-0.5))
        let (region, output) = try #require(FaceGeometry.region(for: r, in: image, faces: [left]))
        #expect(output == Size(200, 200) && region.size == Size(200, 200))
        // The face's centre (150, 250), 20 px right and half a face (50 px) up.
        #expect(region.x == 170 - 100 && region.y == 200 - 100)
        #expect(FaceGeometry.plannedSize(for: r, input: image) == Size(200, 200))
        #expect(FaceGeometry.plannedSize(for: Resize(mode: .crop, gravity: .smart(.face)), input: image) == nil)
    }

    @Test func boxesFollowEveryGeometricOperation() {
        let box = [Rect(x: 100, y: 50, width: 40, height: 20)]
        let size = Size(400, 300)
        #expect(FaceGeometry.map(box, through: .resize(Size(200, 150)), input: size, output: Size(200, 150)) == [Rect(x: 50, y: 25, width: 20, height: 10)])
        #expect(FaceGeometry.map(box, through: .crop(Rect(x: 90, y: 0, width: 100, height: 100)), input: size, output: Size(100, 100))
            == [Rect(x: 10, y: 50, width: 40, height: 20)])
        #expect(FaceGeometry.map(box, through: .crop(Rect(x: 300, y: 0, width: 100, height: 100)), input: size, output: Size(100, 100)).isEmpty)
        #expect(FaceGeometry.map(box, through: .flip(horizontal: true), input: size, output: size) == [Rect(x: 260, y: 50, width: 40, height: 20)])
        // A quarter turn clockwise: the box's top-left corner goes to the top-right.
        #expect(FaceGeometry.map(box, through: .rotate(degrees: 90, canvas: Size(300, 400), background: nil), input: size, output: Size(300, 400))
            == [Rect(x: 230, y: 100, width: 20, height: 40)])
        #expect(FaceGeometry.map(box, through: .border(Border(width: 5, color: .black)), input: size, output: Size(410, 310))
            == [Rect(x: 105, y: 55, width: 40, height: 20)])
        // Orientation 6 turned the stored image clockwise; a_ignore turns it back.
        let upright = Size(300, 400)
        let stored = FaceGeometry.map([Rect(x: 230, y: 100, width: 20, height: 40)], through: .unorient(orientation: 6), input: upright, output: size)
        #expect(stored == box)
    }

    @Test func privacyCoversTheWholeHeadWithAMargin() throws {
        let face = Rect(x: 200, y: 200, width: 100, height: 120)
        let region = try #require(FaceGeometry.privacyRegion(face, in: image))
        // Ears and a turned head's hair beside it, the hair above, the chin and a margin below,
        // and everything a crop keeps as the head.
        #expect(region == Rect(x: 170, y: 140, width: 160, height: 210))
        #expect(FaceGeometry.contains(region, FaceGeometry.head(face)))
    }

    @Test func partsKeptFollowTheFacesLines() {
        let face = Rect(x: 100, y: 100, width: 90, height: 120)  // eyes at 140, mouth at 190, chin at 220
        #expect(FaceGeometry.partsKept(of: face, in: Rect(x: 0, y: 0, width: 400, height: 400)) == [.eyes, .mouth, .chin])
        #expect(FaceGeometry.partsKept(of: face, in: Rect(x: 0, y: 130, width: 400, height: 90)) == [.eyes, .mouth, .chin])
        #expect(FaceGeometry.partsKept(of: face, in: Rect(x: 0, y: 130, width: 400, height: 70)) == [.eyes, .mouth])
        #expect(FaceGeometry.partsKept(of: face, in: Rect(x: 0, y: 120, width: 400, height: 40)) == [.eyes])
        #expect(FaceGeometry.partsKept(of: face, in: Rect(x: 0, y: 180, width: 400, height: 100)) == [.mouth, .chin])
        // The middle of the face across must be inside too.
        #expect(FaceGeometry.partsKept(of: face, in: Rect(x: 150, y: 0, width: 400, height: 400)) == [])
    }

    @Test func aDecisionThatCutsTheLargestFaceSaysWhatItKept() {
        let face = Rect(x: 100, y: 100, width: 90, height: 120)
        let whole = CropDecision(rect: Rect(x: 0, y: 0, width: 300, height: 300), input: image, basis: .face).notingCut(of: [face])
        #expect(whole.faceParts == nil && whole.sentence == nil && whole.json["faceCut"] == nil)
        let cut = CropDecision(rect: Rect(x: 0, y: 120, width: 300, height: 80), input: image, basis: .faces).notingCut(of: [face])
        #expect(cut.faceParts == [.eyes, .mouth])
        #expect(cut.json["faceCut"] == .object(["kept": .array([.string("eyes"), .string("mouth")]), "lost": .array([.string("chin")])]))
        #expect(cut.sentence == "g_faces could not keep the whole face in 300x80: kept its eyes and mouth, cut its chin")
        // Attention and fallbacks are not about faces.
        let attention = CropDecision(rect: Rect(x: 0, y: 120, width: 300, height: 80), input: image, basis: .attention).notingCut(of: [face])
        #expect(attention.faceParts == nil)
    }

    @Test func faceFindingsCountTheSurerFacesAndKeepTheRest() throws {
        let findings = FaceFindings(faces: [DetectedFace(box: Rect(x: 1, y: 2, width: 30, height: 40), score: 0.9),
                                            DetectedFace(box: Rect(x: 50, y: 2, width: 30, height: 40), score: 0.35)],
                                    detector: "centerface", milliseconds: 3, cropThreshold: 0.5)
        #expect(findings.cropFaces.count == 1)
        #expect(findings.json["count"] == .int(1) && findings.json["belowCropThreshold"] == .int(1))
        let read = try FaceFindings(json: findings.json)
        #expect(read.faces == findings.faces && read.cropThreshold == 0.5 && read.cropFaces.count == 1)
        // A row written before the two thresholds: every face counts for crops.
        let old = try FaceFindings(json: .object(["count": .int(2), "detector": .string("centerface"), "boxes": findings.json["boxes"]!]))
        #expect(old.cropThreshold == nil && old.cropFaces.count == 2)
        #expect(FaceCover(effect: "blur_faces", covered: 3, belowCropThreshold: 1).sentence == "e_blur_faces covered 3 faces (1 below the crops' threshold)")
    }

    @Test func privacyCoversTheHeadInsideTheImage() throws {
        let region = try #require(FaceGeometry.privacyRegion(Rect(x: 0, y: 10, width: 100, height: 100), in: image))
        #expect(region.x == 0 && region.y == 0 && region.width == 130 && region.height > 100)
    }
}

/// The face vocabulary in strings and JSON, and its canonical round trip.
@Suite struct FaceLanguageTests {
    @Test(arguments: [
        ("c_fill,w_100,h_100,g_faces", Step.resize(Resize(mode: .fill, width: .pixels(100), height: .pixels(100), gravity: .smart(.faces)))),
        ("c_fill,w_100,h_100,g_face:center", .resize(Resize(mode: .fill, width: .pixels(100), height: .pixels(100), gravity: .smart(.faceCenter)))),
        ("c_lfill,w_100,h_100,g_auto:faces", .resize(Resize(mode: .lfill, width: .pixels(100), height: .pixels(100), gravity: .smart(.facesAuto)))),
        ("c_thumb,w_150,h_150,g_face,z_1.5", .resize(Resize(mode: .thumb, width: .pixels(150), height: .pixels(150), gravity: .smart(.face), zoom: 1.5))),
        ("c_crop,g_face", .resize(Resize(mode: .crop, gravity: .smart(.face)))),
        ("c_crop,w_200,h_200,g_faces:auto,x_10,y_-0.2", .resize(Resize(mode: .crop, width: .pixels(200), height: .pixels(200), gravity: .smart(.facesAuto), x: .pixels(10), y: .fraction(-0.2)))),
        ("e_blur_faces", .effect(.named("blur_faces", 500))),
        ("e_pixelate_faces:20", .effect(.named("pixelate_faces", 20))),
        ("e_blur_region:300,x_10,y_0.5,w_100,h_0.25", .effect(.blurRegion(300, Region(x: .pixels(10), y: .fraction(0.5), width: .pixels(100), height: .fraction(0.25))))),
        ("e_pixelate_region", .effect(.pixelateRegion(10, nil))),
        ("l_mask,fl_region_relative,w_1.1,g_faces/fl_layer_apply",
         .overlay(Overlay(source: .image("mask"), chain: [.resize(Resize(width: .fraction(1.1)))], gravity: .smart(.faces), regionRelative: true))),
        ("l_mask/c_scale,w_1.1/fl_layer_apply,fl_region_relative,g_face",
         .overlay(Overlay(source: .image("mask"), chain: [.resize(Resize(mode: .scale, width: .fraction(1.1)))], gravity: .smart(.face), regionRelative: true))),
    ])
    func parses(text: String, step: Step) throws {
        let result = CloudinaryParser().parse(text)
        #expect(result.issues.isEmpty, "\(result.issues)")
        #expect(result.steps == [step])
    }

    @Test(arguments: ["c_thumb,w_150,h_150,g_face,z_1.5", "c_crop,g_faces:auto,z_0.8", "c_fill,w_300,h_200,g_faces/e_pixelate_faces:12",
                      "c_crop,w_200,h_200,g_face,x_10,y_-0.2/e_blur_faces:300", "l_mask,fl_region_relative,w_1.1,g_faces/fl_layer_apply",
                      "c_thumb,w_100,g_face", "c_fill,w_400,h_300/e_blur_region:300,x_10,y_0.5,w_100,h_0.25",
                      "e_pixelate_region:20,w_50,h_50", "e_blur_region"])
    func roundTripsToTheSameIdentity(text: String) throws {
        let first = try JobResolver().resolve(TransformationInput.parse(text)).outputs[0]
        let printed = try CloudinaryPrinter.string(for: first)
        let again = try JobResolver().resolve(TransformationInput.parse(printed)).outputs[0]
        #expect(again == first, "\(text) → \(printed)")
        #expect(again.identity == first.identity)
        let json = JSONWriter.canonical(first.json)
        let fromJSON = try JobResolver().resolve(TransformationInput.parse(json)).outputs[0]
        #expect(fromJSON.identity == first.identity, "\(json)")
    }

    @Test(arguments: [
        ("e_pixelate_faces", true, false),
        ("c_fill,w_100,h_100,g_face", false, true),
        ("c_crop,g_face/e_blur_faces", true, true),
        ("c_scale,w_100/e_sepia", false, false),
    ])
    func explainSaysWhatAnOutputWillDoWithFaces(text: String, hides: Bool, steers: Bool) throws {
        let plan = try Planner().plan(JobResolver().resolve(TransformationInput.parse(text)), source: SourceFacts(format: .jpeg, width: 4000, height: 3000))
        let notes = plan.outputs[0].faceNotes
        #expect(notes.contains { $0.hasPrefix("privacy effects cover every face") } == hides)
        #expect(notes.contains { $0.hasPrefix("face gravities use the surer faces") } == steers)
        #expect((plan.outputs[0].json["faces"] != nil) == (hides || steers))
    }

    @Test func plansFaceCropsAndDefersWhatFollowsAnUnknownSize() throws {
        let facts = SourceFacts(format: .jpeg, width: 4000, height: 3000)
        let job = try JobResolver().resolve(TransformationInput.parse("c_crop,g_face/e_sepia"))
        let plan = try Planner().plan(job, source: facts)
        #expect(plan.needsFaces)
        #expect(plan.outputs[0].size == nil)
        guard case .faceCrop = plan.outputs[0].operations.first, case .deferred(let rest) = plan.outputs[0].operations.last else {
            Issue.record("\(plan.outputs[0].operations)")
            return
        }
        #expect(rest == [.effect(.named("sepia", 80))])
        // A face crop needs every pixel: the decode is full size.
        #expect(plan.decode.size == Size(4000, 3000))
        // A face fill decodes only as large as the detector needs: a shorter side of 650.
        let fill = try Planner().plan(JobResolver().resolve(TransformationInput.parse("c_fill,w_100,h_100,g_faces")), source: facts)
        #expect(fill.decode.size == Size(867, 650))
        let plain = try Planner().plan(JobResolver().resolve(TransformationInput.parse("c_fill,w_100,h_100,g_north")), source: facts)
        #expect(!plain.needsFaces && plain.decode.size.height < 650)
    }

    /// For CenterFace the decode needs only what fits its canvas (the detector reads nothing more),
    /// so the detector's copy is the decode itself; an output that needs more still gets it.
    @Test(arguments: [
        ("c_fill,w_100,h_100,g_faces", 4000, 3000, Size(640, 480)),
        ("c_fill,w_100,h_100,g_faces", 3000, 4000, Size(360, 480)),
        ("c_fill,w_100,h_100,g_faces", 6000, 2000, Size(640, 213)),
        ("c_fill,w_1000,h_1000,g_faces", 4000, 3000, Size(1333, 1000)),
        ("c_fill,w_100,h_100,g_faces", 500, 300, Size(500, 300)),
        ("c_fill,w_100,h_100,g_north", 4000, 3000, Size(133, 100)),
    ])
    func aCanvasDetectorDecodesOnlyWhatFitsItsCanvas(text: String, width: Int, height: Int, decoded: Size) throws {
        let planner = Planner(faceDecodeCanvas: Size(640, 480))
        let plan = try planner.plan(JobResolver().resolve(TransformationInput.parse(text)), source: SourceFacts(format: .jpeg, width: width, height: height))
        #expect(plan.decode.size == decoded)
        #expect(Planner.faceDecodeScale(Size(4000, 3000), shortSide: 650, canvas: nil) == 650.0 / 3000)
        #expect(Planner.faceDecodeScale(Size(4000, 3000), shortSide: 650, canvas: Size(640, 480)) == 0.16)
    }
}
