/// Bounds on what a job may ask for. Deployments use `default`, so a chain one worker (or
/// `derive submit`) accepts, every worker accepts; tests pass smaller limits to exercise them.
public struct ChainLimits: Sendable, Hashable {
    /// Largest width or height of any output, and of any intermediate canvas.
    public var maxOutputDimension: Int
    /// Largest number of pixels of any output or intermediate canvas.
    public var maxOutputPixels: Int
    public var maxOutputsPerJob: Int
    /// Steps in one chain (an overlay's chain counts separately).
    public var maxChainLength: Int
    /// Overlays inside overlays.
    public var maxOverlayDepth: Int
    /// Breakpoint widths per output.
    public var maxBreakpoints: Int
    /// Characters in a text overlay.
    public var maxTextLength: Int
    /// Bytes of a Cloudinary transformation string.
    public var maxTransformationLength: Int

    public init(maxOutputDimension: Int = 16384, maxOutputPixels: Int = 100_000_000, maxOutputsPerJob: Int = 50,
                maxChainLength: Int = 40, maxOverlayDepth: Int = 3, maxBreakpoints: Int = 30,
                maxTextLength: Int = 1000, maxTransformationLength: Int = 8192) {
        self.maxOutputDimension = maxOutputDimension
        self.maxOutputPixels = maxOutputPixels
        self.maxOutputsPerJob = maxOutputsPerJob
        self.maxChainLength = maxChainLength
        self.maxOverlayDepth = maxOverlayDepth
        self.maxBreakpoints = maxBreakpoints
        self.maxTextLength = maxTextLength
        self.maxTransformationLength = maxTransformationLength
    }

    public static let `default` = ChainLimits()
}
