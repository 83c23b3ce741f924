import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Testing

/// Blend modes with a layer placed on faces (issue 30): `l_sample/e_screen,fl_layer_apply,g_face`
/// blends on the largest face, `e_mask` with `g_faces` keeps the image at every face.
@Suite struct FaceBlendTests {
    /// The largest of the surer faces, in the output's pixels.
    static func largestFace(_ result: RenderResult) throws -> Rect {
        try #require(result.source.faces?.cropFaces.max { $0.box.size.pixels < $1.box.size.pixels }).box
    }

    static func centre(of face: Rect, side: Int) -> Rect {
        Rect(x: face.x + face.width / 2 - side / 2, y: face.y + face.height / 2 - side / 2, width: side, height: side)
    }

    static func mean(_ p: PixelBuffer, in region: Rect, channels: Range<Int>) -> Double {
        var sum = 0, count = 0
        for y in region.y..<(region.y + region.height) {
            for x in region.x..<(region.x + region.width) {
                for c in channels {
                    sum += Int(p.pixels[(y * p.width + x) * p.bands + c])
                    count += 1
                }
            }
        }
        return Double(sum) / Double(count)
    }

    /// Screen with a mid grey lightens the face (drawn over, the grey would darken her skin),
    /// and changes nothing far from it.
    @Test func screenOnTheFaceLightensIt() throws {
        let (_, screened) = try FaceTests.render(FaceTests.portrait, "l_text:sans_120:%E2%96%88,co_rgb:808080/e_screen,fl_layer_apply,g_face/f_png")
        let (_, over) = try FaceTests.render(FaceTests.portrait, "l_text:sans_120:%E2%96%88,co_rgb:808080/fl_layer_apply,g_face/f_png")
        let (_, plain) = try FaceTests.render(FaceTests.portrait, "a_0/f_png")
        let a = try Harness.pixels(screened.outputs[0].data), b = try Harness.pixels(plain.outputs[0].data)
        let o = try Harness.pixels(over.outputs[0].data)
        let centre = Self.centre(of: try Self.largestFace(screened), side: 16)
        let skin = Self.mean(b, in: centre, channels: 0..<3)
        #expect(skin > 128, "her skin is lighter than the grey: \(skin)")
        #expect(Self.mean(a, in: centre, channels: 0..<3) > skin + 15)
        #expect(Self.mean(o, in: centre, channels: 0..<3) < skin - 15)
        #expect(FaceTests.meanDifference(a, b, in: Rect(x: 0, y: 0, width: 40, height: 40)) == 0)
    }

    /// A mask on every face keeps the image at each of them (one canvas for all the faces'
    /// layers: masking face by face would keep only the last) and nothing far from them.
    @Test func maskOnEveryFaceKeepsEachFace() throws {
        let (_, masked) = try FaceTests.render(FaceTests.group, "l_text:sans_40:%E2%96%88,co_white/e_mask,fl_layer_apply,g_faces/f_png")
        let p = try Harness.pixels(masked.outputs[0].data)
        #expect(p.bands == 4)
        let faces = try #require(masked.source.faces?.cropFaces)
        #expect(faces.count >= 2)
        for face in faces {
            #expect(Self.mean(p, in: Self.centre(of: face.box, side: 8), channels: 3..<4) > 200, "face at \(face.box)")
        }
        #expect(Self.mean(p, in: Rect(x: 0, y: 0, width: 20, height: 20), channels: 3..<4) == 0)
    }
}
