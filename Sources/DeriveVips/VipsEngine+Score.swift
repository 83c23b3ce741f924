import DeriveLanguage

extension VipsEngine {
    /// The SSIMULACRA 2 score of `distorted` against `reference` (two encoded images of the
    /// same size, any format Derive reads), as `q_auto` measures its candidates: both in 8-bit
    /// sRGB, flattened on white. For `derive score` and the metric's validation.
    public func perceptualScore(reference: [UInt8], distorted: [UInt8]) throws(DeriveError) -> Double {
        func pixels(_ bytes: [UInt8], _ role: String) throws(DeriveError) -> PixelBuffer {
            do throws(DeriveError) {
                let format = try VipsDecoder.format(of: bytes, settings: settings)
                return try withBytes(bytes) { (buffer) throws(DeriveError) -> PixelBuffer in
                    let image = try VipsCall(VipsDecoder.loader(for: format)).blob("buffer", buffer).run(failing: .decodeFailed).image("out")
                    return try PerceptualReference.metricPixels(image)
                }
            } catch {
                throw error.prefixed(role)
            }
        }
        return try Ssimulacra2.score(reference: try pixels(reference, "reference"), distorted: try pixels(distorted, "distorted"))
    }
}
