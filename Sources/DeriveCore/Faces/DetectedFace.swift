/// A face the detector found: its box in the pixels of the image it was found in, and the
/// detector's margin (above 0 is a face; larger is surer).
public struct DetectedFace: Sendable, Hashable {
    public var box: Rect
    public var score: Double

    public init(box: Rect, score: Double) {
        self.box = box
        self.score = score
    }

    /// The same face in an image `scale` times the size (boxes are rounded outward-neutral).
    public func scaled(x sx: Double, y sy: Double) -> DetectedFace {
        DetectedFace(box: Rect(x: Int((Double(box.x) * sx).rounded()), y: Int((Double(box.y) * sy).rounded()),
                               width: max(1, Int((Double(box.width) * sx).rounded())),
                               height: max(1, Int((Double(box.height) * sy).rounded()))),
                     score: score)
    }
}

/// What face detection found in a job's source, once for every output: the faces in upright
/// source pixels, best first, or why detection did not run.
public struct FaceFindings: Sendable, Hashable {
    public var faces: [DetectedFace]
    /// The detector that looked (`dlib-hog`), for reports.
    public var detector: String
    public var milliseconds: Double

    public init(faces: [DetectedFace], detector: String, milliseconds: Double) {
        self.faces = faces
        self.detector = detector
        self.milliseconds = milliseconds
    }

    /// `{"count": 2, "detector": "dlib-hog", "boxes": [{"x":…, "y":…, "width":…, "height":…, "score":…}]}`.
    public var json: JSONValue {
        .object([
            "count": .int(faces.count),
            "detector": .string(detector),
            "boxes": .array(faces.map(\.json)),
        ])
    }
}

extension DetectedFace {
    public var json: JSONValue {
        .object(["x": .int(box.x), "y": .int(box.y), "width": .int(box.width), "height": .int(box.height),
                 "score": .decimal((score * 1000).rounded() / 1000)])
    }
}
