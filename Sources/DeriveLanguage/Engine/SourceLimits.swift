/// Bounds checked against a source's header before any pixel is decoded, so a pixel bomb (a
/// tiny file declaring a huge canvas) costs a header read, not gigabytes.
public struct SourceLimits: Sendable, Hashable {
    public var maxInputBytes: Int
    /// Pixels of one page or frame.
    public var maxInputPixels: Int
    public var maxFrames: Int
    /// Pixels of all frames an animation decodes together.
    public var maxAnimationPixels: Int

    public init(maxInputBytes: Int = 100 << 20, maxInputPixels: Int = 150_000_000, maxFrames: Int = 500,
                maxAnimationPixels: Int = 500_000_000) {
        self.maxInputBytes = maxInputBytes
        self.maxInputPixels = maxInputPixels
        self.maxFrames = maxFrames
        self.maxAnimationPixels = maxAnimationPixels
    }

    public static let `default` = SourceLimits()

    public func check(byteCount: Int) throws(DeriveError) {
        if byteCount > maxInputBytes {
            throw DeriveError(.limitExceeded, "the source is \(byteCount) bytes; the limit is \(maxInputBytes) (DERIVE_MAX_INPUT_BYTES)")
        }
    }

    public func check(_ facts: SourceFacts) throws(DeriveError) {
        let pixels = facts.width.multipliedReportingOverflow(by: facts.height)
        if pixels.overflow || pixels.partialValue > maxInputPixels {
            throw DeriveError(.limitExceeded, "the source declares \(facts.width)x\(facts.height) pixels; the limit is \(maxInputPixels) pixels (DERIVE_MAX_INPUT_PIXELS)")
        }
        if facts.pages > maxFrames {
            throw DeriveError(.limitExceeded, "the source has \(facts.pages) pages or frames; the limit is \(maxFrames) (DERIVE_MAX_FRAMES)")
        }
        if facts.isAnimated, pixels.partialValue * facts.pages > maxAnimationPixels {
            throw DeriveError(.limitExceeded, "the animation has \(facts.pages) frames of \(facts.width)x\(facts.height); the limit is \(maxAnimationPixels) pixels in all frames (DERIVE_MAX_ANIMATION_PIXELS)")
        }
    }
}
