/// The job's faces as the runner follows them through an output's operations: every face the
/// privacy effects cover (found at the detector's lower threshold: a missed face is worse than
/// an extra blurred patch) and the surer ones that steer crops, overlays and `fc`. Both lists
/// move with every geometric operation, so each step sees its faces where they are.
public struct JobFaces: Sendable, Hashable {
    /// What `e_blur_faces` and `e_pixelate_faces` cover.
    public var privacy: [Rect]
    /// What face gravities, `c_thumb`/`c_crop` around faces and overlays on faces go by.
    public var crops: [Rect]

    public init(privacy: [Rect], crops: [Rect]) {
        self.privacy = privacy
        self.crops = crops
    }

    /// Faces found down to the lower threshold, best first; those scoring `cropThreshold` or
    /// more (all of them when nil) also steer crops.
    public init(_ found: [DetectedFace], cropThreshold: Double?) {
        self.privacy = found.map(\.box)
        self.crops = found.filter { face in cropThreshold.map { face.score >= $0 } ?? true }.map(\.box)
    }

    /// Both lists after `operation` turned an image of `input` size into one of `output` size.
    public func mapped(through operation: ImageOperation, input: Size, output: Size) -> JobFaces {
        JobFaces(privacy: FaceGeometry.map(privacy, through: operation, input: input, output: output),
                 crops: FaceGeometry.map(crops, through: operation, input: input, output: output))
    }
}
