import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// Renders fixtures through the real engine and reads outputs back through libvips.
enum Harness {
    static let allLoaders = EngineSettings(allowedLoaders: Set(UntrustedLoader.allCases))

    static func engine(_ settings: EngineSettings = allLoaders) throws -> VipsEngine {
        try VipsEngine(settings: settings)
    }

    static func source(_ fixture: String) throws -> SourceImage {
        SourceImage(bytes: [UInt8](try Data(contentsOf: Paths.fixture(fixture))), location: fixture)
    }

    static func outputs(_ text: String) throws -> [CanonicalOutput] {
        try JobResolver().resolve(TransformationInput.parse(text)).outputs
    }

    /// Inspects, plans and renders one source with a chain (string or JSON).
    static func render(_ fixture: String, _ chain: String, engine: VipsEngine? = nil,
                       overlays: any OverlayLoader = NoOverlays()) throws -> (Plan, RenderResult) {
        try render(source(fixture), chain, engine: engine, overlays: overlays)
    }

    static func render(_ source: SourceImage, _ chain: String, engine: VipsEngine? = nil,
                       overlays: any OverlayLoader = NoOverlays()) throws -> (Plan, RenderResult) {
        let engine = try engine ?? Self.engine()
        let inspection = try engine.inspect(source)
        let plan = try Planner().plan(JobResolver().resolve(TransformationInput.parse(chain)), source: inspection.facts)
        return (plan, try engine.render(plan, source: source, inspection: inspection, overlays: overlays))
    }

    /// The first output's pixels, decoded by libvips (first frame; alpha kept).
    static func pixels(_ data: [UInt8]) throws -> PixelBuffer {
        let engine = try Self.engine()
        let inspection = try engine.inspect(SourceImage(bytes: data, location: "output"))
        return try withBytes(data) { (buffer) throws(DeriveError) -> PixelBuffer in
            var image = try VipsDecoder.header(buffer, format: inspection.facts.format)
            if image.pages > 1 { image = try image.extracted(Rect(x: 0, y: 0, width: image.width, height: image.pageHeight)) }
            return try image.standardised().inMemory().pixelBuffer()
        }
    }

    /// Header of an encoded output, with its metadata fields.
    /// Everything libvips' loader reports about an encoded image, and every metadata field.
    static func header(_ data: [UInt8]) throws -> (SourceInspection, [String: String]) {
        let format = try #require(ImageSniffer.format(of: data))
        return try withBytes(data) { (buffer) throws(DeriveError) -> (SourceInspection, [String: String]) in
            let image = try VipsDecoder.header(buffer, format: format)
            var fields: [String: String] = [:]
            for name in image.fieldNames { fields[name] = image.string(name) ?? "" }
            return (VipsDecoder.inspection(of: image, format: format), fields)
        }
    }

    static func mean(_ p: PixelBuffer, channel: Int) -> Double {
        var sum = 0
        for i in stride(from: channel, to: p.pixels.count, by: p.bands) { sum += Int(p.pixels[i]) }
        return Double(sum) / Double(p.width * p.height)
    }

    static func standardDeviation(_ p: PixelBuffer, channel: Int = 0) -> Double {
        let m = mean(p, channel: channel)
        var sum = 0.0
        for i in stride(from: channel, to: p.pixels.count, by: p.bands) { sum += (Double(p.pixels[i]) - m) * (Double(p.pixels[i]) - m) }
        return (sum / Double(p.width * p.height)).squareRoot()
    }

    static func pixel(_ p: PixelBuffer, _ x: Int, _ y: Int) -> [Int] {
        let i = (y * p.width + x) * p.bands
        return p.pixels[i..<(i + p.bands)].map(Int.init)
    }

    /// Mean absolute difference of the colour channels of two same-sized images, 0–255.
    static func difference(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.width == b.width && a.height == b.height)
        var total = 0
        for y in 0..<a.height {
            for x in 0..<a.width {
                let pa = pixel(a, x, y), pb = pixel(b, x, y)
                for c in 0..<3 { total += abs(pa[min(c, pa.count - 1)] - pb[min(c, pb.count - 1)]) }
            }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }
}
