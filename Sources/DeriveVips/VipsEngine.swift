import DeriveLanguage
import DeriveDigest
import Foundation

/// The libvips engine: reads headers, decodes each source once at the plan's size, derives
/// every output from that decode, and records the metadata.
public struct VipsEngine: ImageEngine {
    public let settings: EngineSettings
    public let planner: Planner
    /// Looks for faces when an output needs them; nil works as detection turned off.
    public let faceDetector: (any FaceDetector)?

    public init(settings: EngineSettings = EngineSettings(), limits: ChainLimits = .default,
                faceDetector: (any FaceDetector)? = nil) throws(DeriveError) {
        try VipsRuntime.start(settings)
        self.settings = settings
        // CenterFace reads only what fits its canvas, so a job that needs faces decodes no larger
        // than that (unless an output needs more); dlib's grey copy goes by its shorter side.
        self.planner = Planner(limits: limits, faces: settings.faces, detectorReadsCanvas: faceDetector?.wantsColor == true)
        self.faceDetector = settings.faces.enabled ? faceDetector : nil
    }

    public func selecting(_ selection: PSDSelection, from source: SourceImage) throws(DeriveError) -> SourceImage {
        try selection.source(from: source, limits: settings.sourceLimits)
    }

    static let sniffedExactly: Set<ImageFormat> = [.jpeg, .png, .gif, .webp]

    public func inspect(_ source: SourceImage) throws(DeriveError) -> SourceInspection {
        try settings.sourceLimits.check(byteCount: source.bytes.count)
        let format = try VipsDecoder.format(of: source.bytes, settings: settings)
        // The sniffer reads sizes without libvips: a bomb is refused before any parser runs,
        // and before the structure is walked (a canvas too large is the clearer reason). Headers
        // are in the first megabyte, but a TIFF's directories are where their offsets say, and
        // libtiff writes the first after the image data: the sniffer gets the whole TIFF (its
        // walk is bounded by entries and pages, not by bytes).
        let sniffed = ImageSniffer.facts(of: format == .tiff ? source.bytes : Array(source.bytes.prefix(1 << 20)))
        if let sniffed { try settings.sourceLimits.check(sniffed) }
        if let reason = ImageSniffer.truncation(of: source.bytes, format: format) {
            throw DeriveError(.corruptImage, reason)
        }
        // JPEG, PNG, GIF and WebP headers are read exactly by the sniffer; libvips reads the
        // rest. The colour space, profile and EXIF come from the decode itself (`render`).
        if let sniffed, Self.sniffedExactly.contains(format) {
            return SourceInspection(facts: sniffed, colorSpace: "")
        }
        let inspection = try withBytes(source.bytes) { (buffer) throws(DeriveError) -> SourceInspection in
            VipsDecoder.inspection(of: try VipsDecoder.header(buffer, format: format, inflateLimit: settings.sourceLimits.maxInputBytes), format: format)
        }
        try settings.sourceLimits.check(inspection.facts)
        // libvips reads every OpenEXR through its RGBA interface, so it reports alpha even
        // where the file has none; the header's channel list says.
        if format == .exr, let sniffed {
            var exact = inspection
            exact.facts.hasAlpha = sniffed.hasAlpha
            return exact
        }
        // Whether a TIFF's extra channel is a mask rather than alpha is in its ExtraSamples tag,
        // which the sniffer reads and libvips does not report.
        if format == .tiff, let sniffed, sniffed.hasMaskChannel, inspection.facts.hasAlpha {
            var exact = inspection
            exact.facts.hasMaskChannel = true
            return exact
        }
        return inspection
    }

    public func render(_ plan: Plan, source: SourceImage, inspection: SourceInspection,
                       overlays: any OverlayLoader, phase: (RenderPhase) -> Void) throws(DeriveError) -> RenderResult {
        var timings = StageTimings()
        let format = inspection.facts.format
        return try withBytes(source.bytes) { (buffer) throws(DeriveError) -> RenderResult in
            var clock = LapTimer()
            let sourceHash = source.sha256 ?? {
                var hash = ContentHash()
                hash.update(buffer)
                return hash.finalizeHex()
            }()
            let oriented = plan.source.orientedSize
            var plan = plan
            // The crops decided before the decode (around faces), per output, for the reports.
            var decided: [[CropDecision]]?
            // 1. Faces first, when an output cuts around them: the plan's decode streams through
            //    the detector's copy (the same copy it reads from a decode kept in memory, so the
            //    same faces and crops) without being kept; the crops are then decided in the
            //    source's pixels, and the job decodes only what its outputs need (`Planner.refined`).
            var found: (faces: [DetectedFace], in: Size)?
            var faceImage: VImage?
            if settings.faces.decodeTwice, let faceDetector, inspection.facts.orientation == 1, planner.decidesBeforeDecoding(plan) {
                let (image, _) = try VipsDecoder.decode(buffer, facts: inspection.facts, plan: plan.decode,
                                                        inflateLimit: settings.sourceLimits.maxInputBytes, streamed: true)
                let look = try FaceFinder(detector: faceDetector, settings: settings.faces).look(at: image)
                timings.faces = clock.lap()
                found = (look.faces, image.frameSize)
                faceImage = look.copy
                let upright = JobFaces(look.faces.map { $0.scaled(x: Double(oriented.width) / Double(image.width),
                                                                  y: Double(oriented.height) / Double(image.pageHeight)) },
                                       cropThreshold: faceDetector.cropThreshold)
                if let refined = planner.refined(plan, faces: upright) {
                    plan = refined.plan
                    decided = refined.decisions
                }
            }

            // 2. Decode once, into memory, so every output and the metadata read the same pixels
            //    without decoding again. The decode is no larger than the largest output.
            let (decoded, loaded) = try VipsDecoder.decode(buffer, facts: inspection.facts, plan: plan.decode,
                                                           inflateLimit: settings.sourceLimits.maxInputBytes)
            timings.decode += clock.lap()
            if plan.decode.region == nil { faceImage = nil }

            // 3. Source metadata; the perceptual hash is of the whole image (the detector's copy
            //    of it, when the decode holds only a part).
            let perceptual = try DifferenceHash.hash(gray: (faceImage ?? decoded).withPixels { view in
                view.downsampled(to: Size(DifferenceHash.width, DifferenceHash.height), grey: true).pixels
            })
            faceImage = nil
            var metadata = SourceMetadata(location: source.location, sha256: sourceHash, bytes: buffer.count,
                                          inspection: loaded, perceptualHash: perceptual)
            timings.metadata = clock.lap()

            // 4. Faces, once for every output, when one needs them (found above, or now on the decode).
            //    One detection at the lower (privacy) threshold; the surer faces among them steer crops.
            var faces: JobFaces?
            if found != nil || plan.needsFaces, let faceDetector {
                var boxes: [DetectedFace]
                if let (first, seen) = found {
                    // In the decode's pixels: scaled to its size, then moved into its region.
                    let size = plan.decode.size
                    boxes = first.map { $0.scaled(x: Double(size.width) / Double(seen.width), y: Double(size.height) / Double(seen.height)) }
                    metadata.faces = FaceFindings(faces: first.map { $0.scaled(x: Double(oriented.width) / Double(seen.width),
                                                                               y: Double(oriented.height) / Double(seen.height)) },
                                                  detector: faceDetector.name, milliseconds: timings.faces, cropThreshold: faceDetector.cropThreshold)
                } else {
                    boxes = try FaceFinder(detector: faceDetector, settings: settings.faces).faces(in: decoded)
                    timings.faces = clock.lap()
                    let sx = Double(oriented.width) / Double(decoded.width), sy = Double(oriented.height) / Double(decoded.pageHeight)
                    metadata.faces = FaceFindings(faces: boxes.map { $0.scaled(x: sx, y: sy) }, detector: faceDetector.name,
                                                  milliseconds: timings.faces, cropThreshold: faceDetector.cropThreshold)
                }
                var jobFaces = JobFaces(boxes, cropThreshold: faceDetector.cropThreshold)
                if let region = plan.decode.region {
                    jobFaces = jobFaces.mapped(through: .crop(region), input: plan.decode.size, output: region.size)
                }
                faces = jobFaces
            }

            // The illustration score (ils), once, when an output's condition or number names it.
            var illustrationScore: Double?
            if plan.needsIllustrationScore {
                let frame = decoded.pages > 1 ? try decoded.extracted(Rect(x: 0, y: 0, width: decoded.width, height: decoded.pageHeight)) : decoded
                illustrationScore = IllustrationScore.of(try frame.standardised().inMemory().withPixels { $0.downsampled(to: Self.previewSize(frame.frameSize)) })
            }

            // 4. Every output from the one decode.
            let runner = OperationRunner(engine: self, overlays: overlays, sourceFormat: format, faces: faces,
                                         illustrationScore: illustrationScore)
            // fl_clip's paths, read from the source's bytes once when an output clips.
            let paths = plan.outputs.contains { $0.encoding.clip != nil } ? PhotoshopPaths.read(source.bytes) : nil
            // Each clip filled once, however many outputs (a format set's) use it.
            var clippedBy: [ClipSetting: VImage] = [:]
            phase(.outputs)
            var rendered: [RenderedOutput] = []
            for (index, output) in plan.outputs.enumerated() {
                do throws(DeriveError) {
                    runner.decisions = decided?[index] ?? []
                    var decoded = decoded
                    if let clip = output.encoding.clip, let paths {
                        if clippedBy[clip] == nil {
                            clippedBy[clip] = try Self.clipped(decoded, to: clip, paths: paths, orientation: plan.source.orientation)
                        }
                        decoded = clippedBy[clip]!
                    }
                    if let search = output.breakpointSearch {
                        rendered += try breakpoints(output, search: search, from: decoded, runner: runner)
                    } else {
                        rendered.append(try self.output(output, from: decoded, runner: runner))
                    }
                } catch {
                    // With several outputs, say which one failed.
                    throw error.prefixed("outputs[\(index)] \(Quoted(output.name))")
                }
            }
            return RenderResult(source: metadata, outputs: rendered, timings: timings)
        }
    }

    func output(_ planned: PlannedOutput, from decoded: VImage, runner: OperationRunner,
                extra: [ImageOperation] = [], breakpointWidth: Int? = nil) throws(DeriveError) -> RenderedOutput {
        if planned.encoding.format == .svg && extra.isEmpty {
            return try vectorOutput(planned, from: decoded, runner: runner, breakpointWidth: breakpointWidth)
        }
        var clock = LapTimer()
        let image = try applied(planned.operations + extra, to: decoded, planned: planned, runner: runner)
        let applyTime = clock.lap()
        let taken = runner.takeDecisions()
        var rendered = try encoded(image, planned: planned, breakpointWidth: breakpointWidth ?? planned.breakpointWidth,
                                   applyMilliseconds: applyTime)
        rendered.metadata.noting(crops: taken.crops, covers: taken.covers)
        return rendered
    }

    func applied(_ operations: [ImageOperation], to decoded: VImage, planned: PlannedOutput, runner: OperationRunner) throws(DeriveError) -> VImage {
        if planned.keepsAnimation && decoded.pages > 1 || operations.first.map(Self.selectsPages) == true {
            return try runner.runAnimated(operations, on: decoded)
        }
        return try runner.run(operations, on: decoded).0
    }

    static func selectsPages(_ operation: ImageOperation) -> Bool {
        if case .selectPages = operation { true } else { false }
    }

    func encoded(_ lazy: VImage, planned: PlannedOutput, breakpointWidth: Int?, applyMilliseconds: Double,
                 hints: [OutputFormat: Int] = [:]) throws(DeriveError) -> RenderedOutput {
        var clock = LapTimer()
        // Computed once: the encoder and the preview for the metadata read the same pixels.
        let image = try lazy.inMemory()
        let animated = planned.keepsAnimation && image.pages > 1
        let encoded = try VipsEncoder.encode(image, encoding: planned.encoding, animated: animated, settings: settings, hints: hints)
        let encodeTime = clock.lap()
        let frame = animated ? try image.extracted(Rect(x: 0, y: 0, width: image.width, height: image.pageHeight)).inMemory() : image
        let preview = try frame.standardised().inMemory().withPixels { $0.downsampled(to: Self.previewSize(frame.size)) }
        let metadata = OutputMetadata(
            format: encoded.format, width: frame.width, height: frame.height, bytes: encoded.data.count,
            sha256: ContentHash.sha256(encoded.data), frames: animated ? image.pages : 1,
            hasAlpha: encoded.format.supportsAlpha && image.hasAlpha, quality: encoded.quality, choices: encoded.choices,
            blurhash: BlurHash.encode(preview), dominantColor: DominantColor.of(preview).hex,
            applyMilliseconds: applyMilliseconds, encodeMilliseconds: encodeTime)
        return RenderedOutput(name: planned.name, breakpointWidth: breakpointWidth, identity: planned.identity,
                              data: encoded.data, metadata: metadata)
    }

    /// Byte-spaced breakpoints, found by encoding: from the widest, each next width is the
    /// widest whose file is at least `bytes` smaller than the previous one (binary search).
    func breakpoints(_ planned: PlannedOutput, search: BreakpointSearch, from decoded: VImage,
                     runner: OperationRunner) throws(DeriveError) -> [RenderedOutput] {
        var clock = LapTimer()
        let base = try applied(planned.operations, to: decoded, planned: planned, runner: runner).inMemory()
        let baseTime = clock.lap()
        let taken = runner.takeDecisions()
        // Each width's q_auto search starts where the widest one's ended.
        var hints: [OutputFormat: Int] = [:]
        func render(_ width: Int) throws(DeriveError) -> RenderedOutput {
            var clock = LapTimer()
            let (operations, _) = try runner.planned([.resize(Resize(mode: .limit, width: .pixels(width)))], on: base.frameSize)
            let image = try applied(operations, to: base, planned: planned, runner: runner)
            return try encoded(image, planned: planned, breakpointWidth: width, applyMilliseconds: baseTime + clock.lap(), hints: hints)
        }
        // The search needs only each width's encoded size, once; the widths chosen are
        // rendered in full, with their metadata.
        var sizes: [Int: Int] = [:]
        var probe = planned.encoding
        func bytes(_ width: Int) throws(DeriveError) -> Int {
            if let known = sizes[width] { return known }
            let (operations, _) = try runner.planned([.resize(Resize(mode: .limit, width: .pixels(width)))], on: base.frameSize)
            let image = try applied(operations, to: base, planned: planned, runner: runner).inMemory()
            let size = try VipsEncoder.encode(image, encoding: probe, animated: planned.keepsAnimation && image.pages > 1,
                                              settings: settings).data.count
            sizes[width] = size
            return size
        }
        let widest = try render(min(search.maxWidth, base.width))
        sizes[widest.breakpointWidth ?? 0] = widest.metadata.bytes
        if let quality = widest.metadata.quality { hints[widest.metadata.format] = quality }
        // Size probes reuse what the widest's q_auto/f_auto search found instead of searching
        // again at every width they try; the widths chosen are searched in full.
        probe = probe.learned(from: widest.metadata)
        var chosen = [widest]
        while chosen.count < search.maxCount {
            let previous = chosen[chosen.count - 1]
            let target = previous.metadata.bytes - search.bytes
            guard target > 0, let previousWidth = previous.breakpointWidth, previousWidth > search.minWidth,
                  try bytes(search.minWidth) <= target else { break }
            var low = search.minWidth, high = previousWidth - 1
            for _ in 0..<10 where low < high {
                let middle = (low + high + 1) / 2
                if try bytes(middle) <= target { low = middle } else { high = middle - 1 }
            }
            chosen.append(try render(low))
        }
        return chosen.reversed().map { var output = $0; output.metadata.noting(crops: taken.crops, covers: taken.covers); return output }
    }

    /// Decodes an overlay source at the size its own chain needs, and applies that chain.
    /// Its errors name the overlay, so they are not taken for the main source's.
    func decodeOverlay(_ source: SourceImage, chain: [Step]) throws(DeriveError) -> VImage {
        do throws(DeriveError) {
            let inspection = try inspect(source)
            let output = CanonicalOutput(name: "overlay", chain: chain, encoding: EncodingSettings(OutputSettings()))
            let plan: Plan
            do {
                plan = try planner.plan(ResolvedJob(source: source.location, outputs: [output], preset: nil), source: inspection.facts)
            } catch {
                throw DeriveError(error)
            }
            return try withBytes(source.bytes) { (buffer) throws(DeriveError) -> VImage in
                let (decoded, _) = try VipsDecoder.decode(buffer, facts: inspection.facts, plan: plan.decode,
                                                          inflateLimit: settings.sourceLimits.maxInputBytes)
                let runner = OperationRunner(engine: self, overlays: NoOverlays(), sourceFormat: inspection.facts.format)
                return try runner.run(plan.outputs[0].operations, on: decoded).0.standardised().inMemory()
            }
        } catch {
            throw error.prefixed("overlay \(Quoted(Redacted.url(source.location), limit: 200))")
        }
    }

    /// The faces in a source, in upright source pixels, decoded only as large as detection
    /// needs: what `derive faces` prints and the face benchmark measures.
    public func faces(in source: SourceImage) throws(DeriveError) -> FaceFindings {
        guard let faceDetector else { throw DeriveError(.invalidJob, "face detection is turned off (DERIVE_FACE_DETECTION)") }
        let inspection = try inspect(source)
        let oriented = inspection.facts.orientedSize
        // As a job decodes for faces: what fits the canvas for CenterFace, so this prints the
        // faces a job finds; dlib's detector reads its own shorter side (it enlarges twice itself).
        let scale = min(1, Planner.faceDecodeScale(oriented, shortSide: settings.faces.shortSide,
                                                   canvas: faceDetector.wantsColor ? settings.faces.canvas : nil))
        let size = Size(ResizeGeometry.px(Double(oriented.width) * scale), ResizeGeometry.px(Double(oriented.height) * scale))
        return try withBytes(source.bytes) { (buffer) throws(DeriveError) -> FaceFindings in
            var clock = LapTimer()
            let (decoded, _) = try VipsDecoder.decode(buffer, facts: inspection.facts,
                                                      plan: DecodePlan(size: size, scale: scale, pages: .page(1)),
                                                      inflateLimit: settings.sourceLimits.maxInputBytes)
            let found = try FaceFinder(detector: faceDetector, settings: settings.faces).faces(in: decoded)
            let sx = Double(oriented.width) / Double(decoded.width), sy = Double(oriented.height) / Double(decoded.pageHeight)
            return FaceFindings(faces: found.map { $0.scaled(x: sx, y: sy) }, detector: faceDetector.name, milliseconds: clock.lap(),
                                cropThreshold: faceDetector.cropThreshold)
        }
    }

    /// BlurHash and the dominant colour need only a few hundred pixels.
    static func previewSize(_ size: Size) -> Size {
        let scale = min(1, 32.0 / Double(max(size.width, size.height)))
        return Size(max(1, Int((Double(size.width) * scale).rounded())), max(1, Int((Double(size.height) * scale).rounded())))
    }
}

/// Milliseconds between laps.
struct LapTimer {
    private var last = DispatchTime.now().uptimeNanoseconds

    mutating func lap() -> Double {
        let now = DispatchTime.now().uptimeNanoseconds
        defer { last = now }
        return Double(now - last) / 1_000_000
    }
}
