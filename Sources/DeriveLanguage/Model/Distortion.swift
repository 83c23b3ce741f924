/// `e_distort`'s two forms (Cloudinary: "change the positioning of each of the corners, or warp
/// the image into an arc").
public enum Distortion: Sendable, Hashable {
    /// New positions of the image's top-left, top-right, bottom-right and bottom-left corners
    /// (x1, y1, ..., x4, y4): pixels, or fractions of the image's width (x) and height (y),
    /// which Cloudinary writes as percentages (`30p`). The image is warped in perspective onto
    /// that quadrilateral, on a canvas the size of its bounding box.
    case corners([Length])
    /// Bent into an arc of this many degrees (-360...360): positive curves it upwards like a
    /// frown, negative downwards like a smile.
    case arc(Int)

    /// e_distort:arc's degrees: a full circle at most (beyond it the image overlaps itself).
    public static let arcRange = -360...360

    /// Cloudinary spelling of the arguments after `e_distort:`.
    public var cloudinaryArguments: String {
        switch self {
        case .arc(let degrees): return "arc:\(degrees)"
        case .corners(let lengths):
            return lengths.map { length in
                switch length {
                case .fraction(let f): Decimal6.string(f * 100) + "p"
                default: length.cloudinaryText
                }
            }.joined(separator: ":")
        }
    }
}
