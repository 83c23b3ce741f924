import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Testing

@Suite struct EngineGeometryTests {
    /// For every resize mode, reducing and enlarging, the pixels come out at the planner's size.
    @Test(arguments: ["photos/jolla-phone.jpg", "photos/grace_hopper_noexif.jpg", "photos/canon-sx60hs_orient6.jpg"],
          ["c_scale,w_300,h_200", "c_scale,w_700", "c_fit,w_700,h_700", "c_limit,w_700,h_700", "c_mfit,w_700,h_700",
           "c_fill,w_300,h_300", "c_fill,w_900,h_500,g_north", "c_lfill,w_700,h_300", "c_pad,w_400,h_400,b_black",
           "c_lpad,w_900,h_900", "c_mpad,w_900,h_900", "c_crop,w_300,h_200,x_10,y_20", "c_crop,w_0.5,h_0.5,g_south_east",
           "c_thumb,w_128,h_128", "c_auto,w_200,h_120", "c_fill,ar_16:9,w_640", "c_fill,w_100,h_100,dpr_2.0",
           "c_fill,w_240,h_240,g_xy_center,x_0.7,y_0.3", "a_33/c_fit,w_250,h_250", "bo_7px_solid_red/c_scale,w_0.25"])
    func outputSizesEqualThePlan(photo: String, chain: String) throws {
        let (plan, result) = try Harness.render(photo, chain + "/f_jpg,q_60")
        let planned = try #require(plan.outputs[0].size)
        let output = result.outputs[0].metadata
        #expect(Size(output.width, output.height) == planned, "\(photo) \(chain)")
        let pixels = try Harness.pixels(result.outputs[0].data)
        #expect(Size(pixels.width, pixels.height) == planned)
    }

    /// Every EXIF orientation comes out as the same upright picture as orientation 1.
    @Test(arguments: 1...8)
    func everyOrientationComesOutUpright(orientation: Int) throws {
        let reference = try Harness.pixels(Harness.render("orientation/landscape_1.jpg", "c_scale,w_180/f_png").1.outputs[0].data)
        let (_, result) = try Harness.render("orientation/landscape_\(orientation).jpg", "c_scale,w_180/f_png")
        let pixels = try Harness.pixels(result.outputs[0].data)
        #expect(pixels.width == 180 && pixels.height == 120)
        #expect(Harness.difference(pixels, reference) < 4, "orientation \(orientation)")
    }

    /// The comparison above can fail: ignoring orientation 3 leaves the picture upside down.
    @Test func ignoringOrientationIsVisiblyDifferent() throws {
        let reference = try Harness.pixels(Harness.render("orientation/landscape_1.jpg", "c_scale,w_180/f_png").1.outputs[0].data)
        let ignored = try Harness.pixels(Harness.render("orientation/landscape_3.jpg", "c_scale,w_180/a_ignore/f_png").1.outputs[0].data)
        #expect(Harness.difference(ignored, reference) > 20)
        let turned = try Harness.render("orientation/landscape_6.jpg", "c_scale,w_120/a_ignore/f_png").1.outputs[0].metadata
        #expect(turned.width == 120 && turned.height == 180)
    }

    @Test func decodesOnceAtTheLargestNeededSize() throws {
        let (plan, result) = try Harness.render("photos/kodak-pixpro-az521.jpg",
            #"{"outputs": [{"name": "s", "chain": "c_limit,w_320", "format": "webp"}, {"name": "m", "chain": "c_limit,w_1024", "format": "jpeg"}, {"name": "l", "chain": "c_limit,w_2048", "format": "webp"}]}"#)
        #expect(plan.decode.size == Size(2048, 1536))
        #expect(result.outputs.map { Size($0.metadata.width, $0.metadata.height) } == [Size(320, 240), Size(1024, 768), Size(2048, 1536)])
    }
}
