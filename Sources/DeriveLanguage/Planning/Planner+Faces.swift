/// Decoding twice where the crop depends on the faces: the detector reads the source first
/// (streamed, not kept), the crops around the faces are decided in the source's pixels (the same
/// decisions the runner makes on a full-size decode), and the second decode is only what the
/// outputs then need: shrunk on load to the scale of the largest of them, and only the part of
/// the image they cut.
extension Planner {
    /// The plan after the faces decided the crops around them: the operations each output runs
    /// on the second decode, the crops decided (the report's, one list per output, before those
    /// the runner adds), and that decode.
    public struct FaceRefinement: Sendable, Hashable {
        public var plan: Plan
        public var decisions: [[CropDecision]]
    }

    /// Whether the job should find its faces before it decodes: some output cuts around them
    /// (`c_thumb`/`c_crop` with a face gravity, after operations that only move pixels) on a
    /// decode of the whole source, so that the cut can be decided first and only what it keeps
    /// decoded (`refined(_:faces:)`). Only for one still image of a raster format (animations,
    /// documents, vectors keep the one decode).
    public func decidesBeforeDecoding(_ plan: Plan) -> Bool {
        let oriented = plan.source.orientedSize
        guard !plan.source.format.isScalable, plan.source.pages == 1, case .page = plan.decode.pages, plan.decode.size == oriented,
              plan.decode.region == nil, !plan.needsIllustrationScore,
              !plan.outputs.contains(where: { $0.encoding.clip != nil || $0.keepsAnimation }) else { return false }
        let none = JobFaces(privacy: [], crops: [])
        return plan.outputs.contains { resolvingFaceCrop($0.operations, start: oriented, faces: none) != nil }
    }

    /// `plan` with every `c_thumb`/`c_crop` around faces that comes first in its output (after
    /// operations that only move pixels: orientation, flips, right-angle turns, plain crops,
    /// pointwise effects) resolved on `faces`, the job's faces in the upright source's pixels,
    /// into the crop and resample it is; then decoded at the scale the outputs need and, when
    /// every output starts with a crop, only the part they cut. nil when no output could be
    /// resolved so (the plan then decodes as it was).
    /// The crops are the ones the runner takes on a full-size decode (`faceCrop(_:in:faces:)`,
    /// which it calls too), in the same pixels; only the decode changes.
    public func refined(_ plan: Plan, faces: JobFaces) -> FaceRefinement? {
        let oriented = plan.source.orientedSize
        guard decidesBeforeDecoding(plan) else { return nil }
        var outputs = plan.outputs
        var decisions = Array(repeating: [CropDecision](), count: outputs.count)
        var resolvedAny = false
        for index in outputs.indices {
            guard let (operations, decision) = resolvingFaceCrop(outputs[index].operations, start: oriented, faces: faces) else { continue }
            outputs[index].operations = operations
            decisions[index] = decision.map { [$0] } ?? []
            resolvedAny = true
        }
        guard resolvedAny else { return nil }

        // The decode: the largest scale any output needs now, and the part of it they cut.
        let scale = min(1, outputs.map { demand($0.operations, start: oriented) }.max() ?? 1)
        let size = scale == 1 ? oriented : Size(ResizeGeometry.px(Double(oriented.width) * scale), ResizeGeometry.px(Double(oriented.height) * scale))
        for index in outputs.indices {
            outputs[index].operations = rebase(outputs[index].operations, full: oriented, decoded: size)
        }
        var region: Rect?
        let firstCrops = outputs.map { output -> Rect? in if case .crop(let rect)? = output.operations.first { rect } else { nil } }
        if firstCrops.allSatisfy({ $0 != nil }) {
            let union = firstCrops.compactMap { $0 }.dropFirst().reduce(firstCrops[0]!) { FaceGeometry.union($0, $1) }
            if union.size != size { region = union }
        }
        if let region {
            for index in outputs.indices {
                guard case .crop(let rect)? = outputs[index].operations.first else { continue }
                if rect == region {
                    outputs[index].operations.removeFirst()
                } else {
                    outputs[index].operations[0] = .crop(Rect(x: rect.x - region.x, y: rect.y - region.y, width: rect.width, height: rect.height))
                }
            }
        }
        let decode = DecodePlan(size: size, scale: Decimal6.quantize(scale), pages: plan.decode.pages, region: region)
        return FaceRefinement(plan: Plan(source: plan.source, decode: decode, outputs: outputs), decisions: decisions)
    }

    /// The operations with their first face crop resolved, when only operations that move
    /// pixels come before it; the faces are followed through those as the runner follows them.
    func resolvingFaceCrop(_ operations: [ImageOperation], start: Size, faces: JobFaces) -> ([ImageOperation], CropDecision?)? {
        var size = start
        var tracked = faces
        for (index, operation) in operations.enumerated() {
            if case .faceCrop(let r) = operation {
                guard let (resolved, decision) = try? faceCrop(r, in: size, faces: tracked.crops) else { return nil }
                return (Array(operations[..<index]) + resolved + operations[(index + 1)...], decision)
            }
            let next: Size
            switch operation {
            case .selectPage, .dropMaskChannel, .flip, .lut: next = size
            case .effect(let e) where e.isPointwise: next = size
            case .unorient(let orientation): next = orientation >= 5 ? size.swapped : size
            case .crop(let rect): next = rect.size
            case .rotate(let degrees, let canvas, _) where ResizeGeometry.isRightAngle(degrees): next = canvas
            default: return nil
            }
            tracked = tracked.mapped(through: operation, input: size, output: next)
            size = next
        }
        return nil
    }

    /// What `c_thumb`/`c_crop` with a face gravity resolves to on an image of `input` size whose
    /// faces (those crops go by) are `faces`: a crop around them and a resample to the requested
    /// size, with the decision for the report; or, with no face (or `faces` nil: nobody looked),
    /// the same step with its fallback gravity (the centre, or attention for the `:auto` forms,
    /// which the engine then decides on the pixels and records itself).
    public func faceCrop(_ r: Resize, in input: Size, faces: [Rect]?) throws(ValidationError) -> (operations: [ImageOperation], decision: CropDecision?) {
        guard case .smart(let gravity)? = r.gravity else { return ([], nil) }
        let basis: CropDecision.Basis = gravity.faceTarget == .largest ? .face : .faces
        if let boxes = faces, let (region, output) = FaceGeometry.region(for: r, in: input, faces: boxes) {
            let inside = boxes.compactMap { FaceGeometry.clipped($0, to: input) }
            let decision = CropDecision(rect: region, input: input, basis: basis,
                                        facesKept: inside.filter { FaceGeometry.contains(region, $0) }.count, facesSeen: inside.count)
                .notingCut(of: inside)
            return ([.crop(region)] + (region.size == output ? [] : [.resize(output)]), decision)
        }
        var fallback = r
        fallback.gravity = gravity.fallback == .auto ? .smart(.auto) : .center
        fallback.mode = r.mode == .thumb ? .fill : .crop
        fallback.zoom = nil
        fallback.x = nil
        fallback.y = nil
        if r.mode == .thumb, r.width == nil || r.height == nil {
            // A thumbnail given one side is square, with or without a face.
            fallback.width = r.width ?? r.height
            fallback.height = r.height ?? r.width
        }
        if fallback.width == nil && fallback.height == nil { return ([], nil) }
        let (operations, _) = try self.operations(for: [.resize(fallback)], input: input)
        guard gravity.fallback != .auto, let crop = operations.compactMap({ if case .crop(let rect) = $0 { rect } else { nil } }).first else {
            return (operations, nil)
        }
        let scaled = operations.compactMap { if case .resize(let s) = $0 { s } else { nil } }.first ?? input
        return (operations, CropDecision(rect: crop, input: scaled, basis: basis, fallback: .center, facesSeen: faces?.count ?? 0))
    }
}
