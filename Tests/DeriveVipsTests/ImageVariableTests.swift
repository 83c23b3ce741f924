import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Testing

/// `$img_current` (issue 30): the image as it is at that point of the chain, drawn later by
/// `l_$img` or `u_$img` through the layer's own chain, on real pixels.
@Suite struct ImageVariableTests {
    /// How far from grey a region is: the mean spread between the channels of its pixels.
    static func colourfulness(_ p: PixelBuffer, in region: Rect) -> Double {
        var sum = 0, count = 0
        for y in region.y..<(region.y + region.height) {
            for x in region.x..<(region.x + region.width) {
                let px = Harness.pixel(p, x, y)
                sum += max(px[0], px[1], px[2]) - min(px[0], px[1], px[2])
                count += 1
            }
        }
        return Double(sum) / Double(count)
    }

    /// Cloudinary's documented example: the colour image kept, the base turned grey, the kept
    /// one drawn at 30% of the width with a white border in the top-left corner.
    @Test func theKeptImageIsDrawnInColourOverTheGreyBase() throws {
        let chain = "$img_current/e_grayscale/l_$img,w_0.3,bo_10px_solid_white/fl_layer_apply,g_north_west/f_png"
        let (_, result) = try Harness.render(ToneEffectTests.photo, chain)
        let p = try Harness.pixels(result.outputs[0].data)
        let (_, plain) = try Harness.render(ToneEffectTests.photo, "c_scale,w_0.3/f_png")
        let small = try Harness.pixels(plain.outputs[0].data)
        // The layer: the photograph at 30% of its width plus the border on each side.
        let layer = Rect(x: 10, y: 10, width: small.width, height: small.height)
        #expect(Harness.pixel(p, 3, 3).prefix(3) == [255, 255, 255])
        #expect(Self.colourfulness(p, in: Rect(x: layer.x + 10, y: layer.y + 10, width: layer.width - 20, height: layer.height - 20)) > 8)
        // Its pixels are the colour photograph's, scaled.
        var diff = 0
        for y in 0..<small.height { for x in 0..<small.width {
            diff += zip(Harness.pixel(p, x + 10, y + 10).prefix(3), Harness.pixel(small, x, y).prefix(3)).map { abs($0 - $1) }.reduce(0, +)
        } }
        #expect(Double(diff) / Double(small.width * small.height * 3) < 2)
        // Outside it the base is grey.
        let corner = Rect(x: p.width - 60, y: p.height - 60, width: 50, height: 50)
        #expect(Self.colourfulness(p, in: corner) < 1)
    }

    /// Drawn where it is named, as the image was where it was kept: a later change to the base
    /// is not in the layer, and two layers draw the same kept image.
    @Test func twoLayersDrawTheSameKeptImage() throws {
        let chain = "$img_current/e_grayscale/l_$img,w_0.2/fl_layer_apply,g_north_west/l_$img,w_0.2/fl_layer_apply,g_south_east/f_png"
        let p = try Harness.pixels(Harness.render(ToneEffectTests.photo, chain).1.outputs[0].data)
        let w = Int((Double(p.width) * 0.2).rounded()) - 4, h = Int((Double(p.height) * 0.2).rounded()) - 4
        #expect(Self.colourfulness(p, in: Rect(x: 2, y: 2, width: w, height: h)) > 8)
        #expect(Self.colourfulness(p, in: Rect(x: p.width - w - 2, y: p.height - h - 2, width: w, height: h)) > 8)
        #expect(Self.colourfulness(p, in: Rect(x: p.width / 2 - 10, y: p.height / 2 - 10, width: 20, height: 20)) < 1)
    }

    /// A layer's own chain that keeps an image under the same name neither replaces nor
    /// releases the chain's: the second layer still draws the colour image kept at the start
    /// (it failed with "holds no image here" when the inner assignment cleared the outer one).
    @Test func aLayersOwnVariableLeavesTheChainsAlone() throws {
        let chain = "$img_current/e_grayscale/l_$img,w_0.5/$img_current/e_sepia/fl_layer_apply,g_south_east/l_$img,w_0.2/fl_layer_apply,g_north_west/f_png"
        let p = try Harness.pixels(Harness.render(ToneEffectTests.photo, chain).1.outputs[0].data)
        let w = Int((Double(p.width) * 0.2).rounded()) - 4, h = Int((Double(p.height) * 0.2).rounded()) - 4
        #expect(Self.colourfulness(p, in: Rect(x: 2, y: 2, width: w, height: h)) > 8)
        #expect(Self.colourfulness(p, in: Rect(x: p.width / 4, y: p.height / 4, width: 20, height: 20)) < 1)
    }

    /// One image kept per name, released after the last layer that draws it; none kept when no
    /// layer draws it.
    @Test(arguments: [
        "$img_current/e_grayscale/l_$img,w_0.3/fl_layer_apply",
        "$img_current/e_grayscale",
        "$img_current/l_$img,w_0.5/fl_layer_apply/$img_current/e_sepia/l_$img,w_0.5/fl_layer_apply,g_south",
    ])
    func theKeptImageIsReleased(chain: String) throws {
        let engine = try Harness.engine()
        let plan = try Planner().plan(JobResolver().resolve(TransformationInput.parse(chain)), source: SourceFacts(format: .png, width: 40, height: 30))
        let runner = OperationRunner(engine: engine, overlays: NoOverlays(), sourceFormat: .png)
        var pixels: [UInt8] = []
        for y in 0..<30 {
            for x in 0..<40 { pixels += [UInt8(x * 6), UInt8(y * 8), 90] }
        }
        let image = try VImage.fromPixels(pixels, width: 40, height: 30, bands: 3).interpreted(as: "srgb")
        let (out, _) = try runner.run(plan.outputs[0].operations, on: image)
        #expect(out.size == Size(40, 30))
        #expect(runner.keptSnapshots == 0)
    }

    /// Under the image (the second documented example), the kept image fills what a transparent
    /// image leaves uncovered; the base keeps its size, as every Derive underlay does.
    @Test func anUnderlayDrawsTheKeptImageBeneath() throws {
        let chain = "$img_current/e_grayscale/r_max/u_$img/fl_layer_apply/f_png"
        let p = try Harness.pixels(Harness.render(ToneEffectTests.photo, chain).1.outputs[0].data)
        // The corners cut by r_max show the colour image beneath; the middle is grey.
        #expect(Self.colourfulness(p, in: Rect(x: 0, y: 0, width: 6, height: 6)) > 8)
        #expect(Self.colourfulness(p, in: Rect(x: p.width / 2 - 10, y: p.height / 2 - 10, width: 20, height: 20)) < 1)
    }
}
