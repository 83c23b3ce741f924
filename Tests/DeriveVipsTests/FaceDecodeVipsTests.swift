import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import DeriveVision
import Foundation
import Testing

/// Decoding twice where the crop depends on the faces (issue 43), on real photographs: the
/// region decode holds the whole decode's pixels, and the crops are the ones one full decode
/// took.
@Suite struct FaceDecodeVipsTests {
    static func decode(_ source: SourceImage, _ plan: DecodePlan, engine: VipsEngine) throws -> PixelBuffer {
        let facts = try engine.inspect(source).facts
        let result: Result<VImage, DeriveError> = source.bytes.withUnsafeBytes { buffer in
            Result { () throws(DeriveError) -> VImage in
                try VipsDecoder.decode(buffer, facts: facts, plan: plan, inflateLimit: 1 << 30).image
            }
        }
        return try result.get().pixelBuffer()
    }

    /// A region of the decode is the same pixels as the whole decode has there, whatever the
    /// EXIF orientation (the region is cut before the image is turned upright).
    @Test(arguments: 1...8)
    func aRegionDecodeIsThatPartOfTheWholeDecode(orientation: Int) throws {
        let engine = try Harness.engine()
        let source = try Harness.source("orientation/landscape_\(orientation).jpg")
        let upright = try engine.inspect(source).facts.orientedSize
        let size = Size(upright.width * 3 / 8, upright.height * 3 / 8)
        let whole = try Self.decode(source, DecodePlan(size: size, scale: 0.375, pages: .page(1)), engine: engine)
        let region = Rect(x: 101, y: 57, width: 230, height: 170)
        let part = try Self.decode(source, DecodePlan(size: size, scale: 0.375, pages: .page(1), region: region), engine: engine)
        #expect(part.width == region.width && part.height == region.height && part.bands == whole.bands)
        var largest = 0
        for y in 0..<region.height {
            for x in 0..<region.width {
                for b in 0..<part.bands {
                    let p = Int(part.pixels[(y * part.width + x) * part.bands + b])
                    let q = Int(whole.pixels[((y + region.y) * whole.width + x + region.x) * whole.bands + b])
                    largest = max(largest, abs(p - q))
                }
            }
        }
        #expect(largest == 0, "orientation \(orientation): pixels differ by up to \(largest)")
    }

    static func engine(twice: Bool) throws -> VipsEngine {
        var settings = Harness.allLoaders
        settings.faces.decodeTwice = twice
        return try VipsEngine(settings: settings, faceDetector: FaceTests.detector)
    }

    /// The crops around faces are the ones a single full decode took, on the face fixtures;
    /// only the decode changed (smaller, and the region alone).
    @Test(arguments: [FaceTests.group, FaceTests.portrait, "Benchmarks/faces/images/gfpgan-00.jpg",
                      "Benchmarks/faces/images/ultralight-masked-img6.jpg", "Benchmarks/faces/images/facenet-pytorch-multiface.jpg"])
    func cropsAroundFacesAreTheSameAsWithOneDecode(file: String) throws {
        let once = try Self.engine(twice: false), twice = try Self.engine(twice: true)
        let chains = ["c_thumb,g_face,w_200,h_200", "c_crop,g_face,w_300,h_300", "c_thumb,g_faces,w_400,h_200,z_0.8", "c_crop,g_faces",
                      "a_90/c_thumb,g_face,w_150,h_150"]
        for chain in chains {
            let (_, old) = try FaceTests.render(file, chain + "/f_png", engine: once)
            let (_, new) = try FaceTests.render(file, chain + "/f_png", engine: twice)
            let a = old.outputs[0].metadata, b = new.outputs[0].metadata
            #expect(a.crops == b.crops, "\(file) \(chain): \(a.crops.map(\.rect)) then \(b.crops.map(\.rect))")
            #expect(a.width == b.width && a.height == b.height)
            #expect(old.source.faces?.faces.count == new.source.faces?.faces.count)
        }
    }
}
