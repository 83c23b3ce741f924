@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_distort` (issue 16, item 2): four new corners in perspective, or an arc. Its string and
/// JSON forms, round trips, refusals, the canvas the planner gives it, and the geometry.
@Suite struct DistortLanguageTests {
    static let movieCorners: [Length] = [40, 25, 280, 60, 260, 155, 35, 165].map { .pixels($0) }

    @Test(arguments: [
        // Cloudinary's documentation example.
        ("e_distort:40:25:280:60:260:155:35:165", #"{"distort": {"corners": [40, 25, 280, 60, 260, 155, 35, 165]}}"#,
         Effect.distort(.corners(movieCorners))),
        ("e_distort:10p:0:90p:0:100p:100p:0p:100p", #"{"distort": {"corners": ["10%", 0, 0.9, 0, "100%", "100%", "0%", "100%"]}}"#,
         .distort(.corners([.fraction(0.1), .pixels(0), .fraction(0.9), .pixels(0), .fraction(1), .fraction(1), .fraction(0), .fraction(1)]))),
        ("e_distort:arc:180", #"{"distort": {"arc": 180}}"#, .distort(.arc(180))),
        ("e_distort:arc:-120", #"{"distort": {"arc": -120}}"#, .distort(.arc(-120))),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    @Test(arguments: [
        ("e_distort:40:25:280:60:260:155:35:165", "e_distort:40:25:280:60:260:155:35:165"),
        ("e_distort:10p:0:90p:-5:100p:100p:0p:100p", "e_distort:10p:0:90p:-5:100p:100p:0p:100p"),
        ("e_distort:arc:-120", "e_distort:arc:-120"),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_distort", "e_distort takes four corners (e_distort:<x1>:<y1>:<x2>:<y2>:<x3>:<y3>:<x4>:<y4>"),
        ("e_distort:1:2:3", "e_distort takes four corners"),
        ("e_distort:arc", "e_distort:arc takes one angle in degrees"),
        ("e_distort:arc:12.5", #"e_distort:arc takes whole degrees (-360 to 360), got "12.5""#),
        ("e_distort:arc:400", "e_distort:arc:400: known to Cloudinary, not supported by Derive: beyond Derive's limits: e_distort degrees must be between -360 and 360, got 400"),
        ("e_distort:0:0:10:0:w:10:0:10", #"e_distort's corners are whole pixels or percentages (30p), got "w""#),
        // A bow tie: the top-right and bottom-right corners swapped.
        ("e_distort:0:0:100:100:100:0:0:100", "e_distort:0:0:100:100:100:0:0:100: unknown to Cloudinary (e_distort corners must make a convex quadrilateral (top-left, top-right, bottom-right, bottom-left in turn)"),
        ("e_distort:0:0:50:0:100:0:0:100", "e_distort:0:0:50:0:100:0:0:100: unknown to Cloudinary (e_distort corners must make a convex quadrilateral"),
        ("e_distort:0:0:10:0:20000:10:0:10", "e_distort:0:0:10:0:20000:10:0:10: known to Cloudinary, not supported by Derive: beyond Derive's limits"),
    ])
    func refusals(text: String, reason: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.reason)
        #expect(issues.contains { $0.hasPrefix(reason) }, "\(issues)")
    }

    @Test(arguments: [
        (#"{"distort": true}"#, "expected an object"),
        (#"{"distort": {"corners": [1, 2], "arc": 10}}"#, #"expected "corners" (eight numbers) or "arc""#),
        (#"{"distort": {"corners": [0, 0, 10, 0, 10, 10, 0]}}"#, "takes four corners, eight numbers"),
    ])
    func jsonRefusals(json: String, reason: String) {
        #expect { try ToneEffectTests.step(json: json) } throws: { "\($0)".contains(reason) }
    }

    /// The planner's canvas: the corners' bounding box (Cloudinary's example on a 300x200
    /// image: 245x140), percentages of the image's sides; an arc of 180° of a 300x100 image is a
    /// half ring of outer radius 300/π + 50.
    @Test(arguments: [
        ("c_scale,w_300,h_200/e_distort:40:25:280:60:260:155:35:165", Size(245, 140)),
        ("c_scale,w_300,h_200/e_distort:10p:0p:90p:0p:100p:100p:0p:100p", Size(300, 200)),
        ("c_scale,w_300,h_200/e_distort:-10:-10:310:0:300:200:0:200", Size(320, 210)),
        ("c_scale,w_300,h_100/e_distort:arc:180", Size(291, 146)),
        ("c_scale,w_300,h_100/e_distort:arc:-180", Size(291, 146)),
        ("c_scale,w_300,h_100/e_distort:arc:0", Size(300, 100)),
    ])
    func plannedSize(chain: String, size: Size) throws {
        let plan = try Planner().plan(JobResolver().resolve(TransformationInput.parse(chain)), source: SourceFacts(format: .jpeg, width: 4000, height: 3000))
        #expect(plan.outputs[0].size == size)
    }

    /// Pixels and percentages mixed make a shape known only on the image: the planner refuses a
    /// bow tie it makes there.
    @Test func mixedCornersAreCheckedOnTheImage() throws {
        let job = try JobResolver().resolve(TransformationInput.parse("c_scale,w_300,h_200/e_distort:0:0:100p:100p:300:0:0p:100p"))
        #expect { try Planner().plan(job, source: SourceFacts(format: .jpeg, width: 4000, height: 3000)) } throws: {
            "\($0)".contains("e_distort corners must make a convex quadrilateral") && "\($0)".contains("(on this 300x200 image)")
        }
    }

    /// The perspective takes each image corner to its new place (in canvas coordinates), and
    /// the middle of the image to the quadrilateral's diagonals' crossing.
    @Test func perspectiveMapsTheCorners() throws {
        let p = try #require(DistortGeometry.Perspective(corners: Self.movieCorners, on: Size(300, 200)))
        #expect(p.canvas == Size(245, 140) && p.origin.x == 35 && p.origin.y == 25)
        let targets = [(40.0, 25.0, 0.0, 0.0), (280, 60, 300, 0), (260, 155, 300, 200), (35, 165, 0, 200)]
        for (x, y, u, v) in targets {
            let s = try #require(p.source(x: x - 35, y: y - 25, imageSize: Size(300, 200)))
            #expect(abs(s.u - u) < 1e-6 && abs(s.v - v) < 1e-6, "\(x),\(y) -> \(s)")
        }
        // Outside the quadrilateral, inside the box: nothing of the image.
        #expect(p.source(x: 1, y: 1, imageSize: Size(300, 200)) == nil)
        #expect(p.source(x: 244, y: 139, imageSize: Size(300, 200)) == nil)
        // The identity leaves every point where it was.
        let same = try #require(DistortGeometry.Perspective(corners: [0, 0, 300, 0, 300, 200, 0, 200].map { .pixels($0) }, on: Size(300, 200)))
        let mid = try #require(same.source(x: 123.5, y: 77.25, imageSize: Size(300, 200)))
        #expect(same.canvas == Size(300, 200) && abs(mid.u - 123.5) < 1e-9 && abs(mid.v - 77.25) < 1e-9)
    }

    /// A frown puts the top edge's middle at the top of the canvas and its ends lower; a smile
    /// puts the bottom edge's middle at the bottom and the top edge's ends higher.
    @Test func arcBendsTheImage() throws {
        let size = Size(300, 100)
        let frown = try #require(DistortGeometry.Arc(degrees: 120, on: size))
        let top = try #require(frown.source(x: Double(frown.canvas.width) / 2, y: 0.5))
        #expect(abs(top.u - 150) < 1 && top.v < 1, "\(top)")
        // The middle row keeps its length: the centre line's radius is width / angle.
        #expect(abs((frown.outer + frown.inner) / 2 - 300 / (120 * Double.pi / 180)) < 1e-9)
        #expect(frown.source(x: 1, y: 1) == nil)
        let smile = try #require(DistortGeometry.Arc(degrees: -120, on: size))
        #expect(smile.canvas == frown.canvas)
        let bottom = try #require(smile.source(x: Double(smile.canvas.width) / 2, y: Double(smile.canvas.height) - 0.5))
        #expect(abs(bottom.u - 150) < 1 && bottom.v > 99, "\(bottom)")
        #expect(smile.source(x: 1, y: Double(smile.canvas.height) - 1) == nil)
        #expect(DistortGeometry.Arc(degrees: 0, on: size) == nil)
    }

    @Test func homographySolvesFourPoints() throws {
        let m = try #require(Homography.solve(from: [(0, 0), (1, 0), (1, 1), (0, 1)], to: [(0, 0), (2, 0), (2, 3), (0, 3)]))
        #expect(zip(m, [2.0, 0, 0, 0, 3, 0, 0, 0, 1]).allSatisfy { abs($0 - $1) < 1e-9 }, "\(m)")
        #expect(Homography.solve(from: [(0, 0), (0, 0), (1, 1), (0, 1)], to: [(0, 0), (2, 0), (2, 3), (0, 3)]) == nil)
    }
}
