extension Planner {
    /// e_gradient_fade:symmetric_pad right after a pad crop: the image's own edges fade into
    /// the padding. So the fade (symmetric, its band a fraction of the image's side) goes before
    /// the padding, which then shows through: a fill draws the image over it; a colour is put
    /// beneath the faded edges by flattening onto it (a transparent one needs nothing). Nil
    /// when the operation before is not a pad: the fade is then a symmetric one.
    static func fadingIntoPadding(_ pad: ImageOperation, _ fade: Effect) -> [ImageOperation]? {
        switch pad {
        case .padFill:
            return [.effect(fade), pad]
        case .embed(_, _, let background):
            return [.effect(fade), pad] + (background.isOpaque ? [.flatten(background)] : [])
        default:
            return nil
        }
    }
}
