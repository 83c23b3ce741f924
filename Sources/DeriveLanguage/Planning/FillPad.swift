/// `c_fill_pad` and `c_auto_pad`: fill the box as `c_fill,g_auto` does, unless that would cut
/// into what must be kept, in which case scale down only as far as it takes to keep it and pad
/// the rest with the background. Cloudinary "tries to prevent a bad crop ... adding padding if
/// it is determined that more of the original image needs to be included"; Derive's rule for
/// what must be kept is every face it found (with the head and shoulders around them). Without
/// faces there is nothing a fill would cut that Derive knows to keep, and it fills.
public enum FillPad {
    /// How much room around a face counts as part of it: the face box grown by this fraction of
    /// its width on each side and of its height above and (twice) below, for hair and chin.
    static let margin = (side: 0.3, top: 0.4, bottom: 0.6)

    /// The region to keep in an image of `input`: the faces' union with their margins, clipped.
    public static func keep(faces: [Rect], in input: Size) -> Rect? {
        guard var box = faces.first else { return nil }
        for face in faces.dropFirst() { box = FaceGeometry.union(box, face) }
        let w = Double(box.width), h = Double(box.height)
        let grown = Rect(x: box.x - Int(w * margin.side), y: box.y - Int(h * margin.top),
                         width: box.width + Int(2 * w * margin.side), height: box.height + Int(h * (margin.top + margin.bottom)))
        return FaceGeometry.clipped(grown, to: input)
    }

    /// The concrete operations for an image of `input`, a `target` box and the faces found in
    /// it (nil or empty: none): a fill with content-aware cropping, or a resize by the largest
    /// scale (at least the fitting one) at which the kept region fits, a crop of the box centred
    /// on that region, and an embed on the target canvas.
    public static func operations(input: Size, target: Size, background: Color, faces: [Rect]?) -> [ImageOperation] {
        let W = Double(input.width), H = Double(input.height)
        let kw = Double(target.width) / W, kh = Double(target.height) / H
        let kcov = max(kw, kh), kfit = min(kw, kh)
        func fill() -> [ImageOperation] {
            let scaled = Size(max(target.width, ResizeGeometry.px(W * kcov)), max(target.height, ResizeGeometry.px(H * kcov)))
            return (scaled == input ? [] : [.resize(scaled)]) + (scaled == target ? [] : [.smartCrop(target, .auto)])
        }
        guard let keep = keep(faces: faces ?? [], in: input) else { return fill() }
        let k = max(kfit, min(kcov, Double(target.width) / Double(keep.width), Double(target.height) / Double(keep.height)))
        if k >= kcov { return fill() }
        let scaled = Size(ResizeGeometry.px(W * k), ResizeGeometry.px(H * k))
        let window = Size(min(target.width, scaled.width), min(target.height, scaled.height))
        // The window centred on the kept region, inside the image.
        let cx = (Double(keep.x) + Double(keep.width) / 2) * k, cy = (Double(keep.y) + Double(keep.height) / 2) * k
        let x = ResizeGeometry.clamp(Int((cx - Double(window.width) / 2).rounded()), 0, scaled.width - window.width)
        let y = ResizeGeometry.clamp(Int((cy - Double(window.height) / 2).rounded()), 0, scaled.height - window.height)
        var operations: [ImageOperation] = scaled == input ? [] : [.resize(scaled)]
        if window != scaled { operations.append(.crop(Rect(x: x, y: y, width: window.width, height: window.height))) }
        if window != target {
            let at = Rect(x: (target.width - window.width) / 2, y: (target.height - window.height) / 2, width: window.width, height: window.height)
            operations.append(.embed(at: at, canvas: target, background: background))
        }
        return operations
    }
}
