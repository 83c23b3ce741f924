internal import CMetricKernels

extension PixelBuffer {
    /// These pixels with nothing lost but half their chroma resolution, as JPEG's and AVIF's
    /// 4:2:0 keeps it (BT.601 full-range YCbCr, each chroma value the mean of a 2×2 block,
    /// restored bilinearly as decoders do): `q_auto` scores it to learn that no 4:2:0 encoding
    /// can reach a target. Nil for grey images, which have no chroma to halve, and images
    /// under 2×2.
    public func chromaHalved() -> PixelBuffer? {
        guard bands >= 3, width >= 2, height >= 2 else { return nil }
        var out = pixels
        let status = pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { out in
                dmetric_chroma_halved(source.baseAddress, width, height, Int32(bands), out.baseAddress)
            }
        }
        return status == 0 ? PixelBuffer(width: width, height: height, bands: bands, pixels: out) : nil
    }
}
