import DeriveDigest
import DeriveLanguage

extension VipsEngine {
    /// An `f_svg` output: the chain up to its e_vectorize applied as pixels (the planner makes
    /// e_vectorize the last step of such a chain), then traced into an SVG document.
    func vectorOutput(_ planned: PlannedOutput, from decoded: VImage, runner: OperationRunner,
                      breakpointWidth: Int?) throws(DeriveError) -> RenderedOutput {
        guard case .effect(.vectorize(let colors, let trace))? = planned.operations.last else {
            throw DeriveError(.invalidJob, "outputs \(Quoted(planned.name)): f_svg is written by e_vectorize, which must be the chain's last step")
        }
        var clock = LapTimer()
        let image = try applied(Array(planned.operations.dropLast()), to: decoded, planned: planned, runner: runner).inMemory()
        let applyTime = clock.lap()
        let traced = try VectorTracer.trace(image, colors: colors.planned, trace: trace)
        let data = Array(try traced.document.svg().utf8)
        let encodeTime = clock.lap()
        let taken = runner.takeDecisions()
        // The preview (blurhash, dominant colour) is of the flat colours the SVG draws.
        let flat = traced.quantized
        let size = traced.parameters.size
        var rgb = [UInt8](repeating: 255, count: size.pixels * 3)
        for (i, index) in flat.indices.enumerated() where index != ColorQuantizer.Quantized.transparent {
            let c = flat.palette[Int(index)]
            rgb[i * 3] = c.r; rgb[i * 3 + 1] = c.g; rgb[i * 3 + 2] = c.b
        }
        let preview = rgb.withUnsafeBytes { bytes in
            PixelView(width: size.width, height: size.height, bands: 3, bytes: bytes).downsampled(to: Self.previewSize(size))
        }
        let p = traced.parameters
        let choice = "svg: \(flat.palette.count) colours traced by potrace at \(size) (turdsize \(p.turdsize), "
            + "alphamax \(Decimal6.string(p.alphamax)), opttolerance \(Decimal6.string(p.opttolerance))), \(traced.document.curveCount) paths"
        var metadata = OutputMetadata(
            format: .svg, width: image.width, height: image.pageHeight, bytes: data.count,
            sha256: ContentHash.sha256(data), frames: 1, hasAlpha: image.hasAlpha, quality: nil, choices: [choice],
            blurhash: BlurHash.encode(preview), dominantColor: DominantColor.of(preview).hex,
            applyMilliseconds: applyTime, encodeMilliseconds: encodeTime)
        metadata.noting(crops: taken.crops, covers: taken.covers)
        return RenderedOutput(name: planned.name, breakpointWidth: breakpointWidth ?? planned.breakpointWidth,
                              identity: planned.identity, data: data, metadata: metadata)
    }
}
