extension Planner {
    /// Why an `f_svg` output cannot be planned, or nil when it can: Derive writes SVG only from
    /// e_vectorize, as the last operation (the steps after it would have to be drawn as paths).
    static func svgRefusal(_ operations: [ImageOperation], chain: [Step], source: ImageFormat?) -> String? {
        if case .effect(.vectorize)? = operations.last { return nil }
        if vectorTrace(in: chain) != nil {
            return "f_svg: known to Cloudinary, not supported by Derive with steps after e_vectorize: e_vectorize must be the chain's last step, as Derive draws nothing after it as paths; move the steps after it before it, or write a raster format"
        }
        let svgSource = source == .svg || source == .svgz
            ? "; an SVG source is not delivered as SVG (its scripts and external references would go out with it): rasterise it (f_png) or vectorize it" : ""
        return "f_svg: known to Cloudinary, not supported by Derive without e_vectorize: Derive writes SVG only by tracing an image with e_vectorize, and this chain has none; add e_vectorize as its last step, or write a raster format\(svgSource)"
    }

    /// The settings of the chain's e_vectorize at its top level, if it has one.
    static func vectorTrace(in chain: [Step]) -> VectorTrace? {
        for step in chain.reversed() {
            if case .effect(.vectorize(_, let trace)) = step { return trace }
        }
        return nil
    }
}
