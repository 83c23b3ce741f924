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
    /// The score crops need; `faces` also holds those below it, which only privacy effects
    /// cover. nil: every face counts for crops.
    public var cropThreshold: Double?

    public init(faces: [DetectedFace], detector: String, milliseconds: Double, cropThreshold: Double? = nil) {
        self.faces = faces
        self.detector = detector
        self.milliseconds = milliseconds
        self.cropThreshold = cropThreshold
    }

    /// The faces crops, overlays and `fc` go by.
    public var cropFaces: [DetectedFace] {
        guard let cropThreshold else { return faces }
        return faces.filter { $0.score >= cropThreshold }
    }

    /// `{"count": 2, "detector": "centerface", "boxes": [{"x":…, "y":…, "width":…, "height":…, "score":…}]}`:
    /// `count` is the faces crops go by; with a crop threshold, `cropThreshold` and
    /// `belowCropThreshold` (faces in `boxes` that only privacy effects cover) too.
    public var json: JSONValue {
        var members: [JSONMember] = [
            JSONMember(key: "count", value: .int(cropFaces.count)),
            JSONMember(key: "detector", value: .string(detector)),
        ]
        if let cropThreshold {
            members.append(JSONMember(key: "cropThreshold", value: .decimal(cropThreshold)))
            members.append(JSONMember(key: "belowCropThreshold", value: .int(faces.count - cropFaces.count)))
        }
        members.append(JSONMember(key: "boxes", value: .array(faces.map(\.json))))
        return .object(members)
    }
}

extension FaceFindings {
    /// Reads back what `json` wrote (an asset row's `faces`). The time detection took is not
    /// stored, so `milliseconds` is 0; `count` is the number of boxes.
    public init(json: JSONValue) throws(DeriveError) {
        func bad(_ what: String) -> DeriveError {
            DeriveError(.internalError, "face findings \(what): \(JSONWriter.compact(json).prefix(120))", retryable: false)
        }
        guard case .string(let detector)? = json["detector"] else { throw bad("have no detector") }
        guard case .array(let boxes)? = json["boxes"] else { throw bad("have no list of boxes") }
        var faces: [DetectedFace] = []
        for box in boxes {
            func int(_ key: String) -> Int? {
                if case .number(let number)? = box[key] { return number.intValue }
                return nil
            }
            guard let x = int("x"), let y = int("y"), let width = int("width"), let height = int("height"),
                  case .number(let score)? = box["score"], score.doubleValue.isFinite else { throw bad("have a malformed box") }
            faces.append(DetectedFace(box: Rect(x: x, y: y, width: width, height: height), score: score.doubleValue))
        }
        var cropThreshold: Double?
        if let stored = json["cropThreshold"] {
            guard case .number(let number) = stored, number.doubleValue.isFinite else { throw bad("have a malformed crop threshold") }
            cropThreshold = number.doubleValue
        }
        self.init(faces: faces, detector: detector, milliseconds: 0, cropThreshold: cropThreshold)
    }
}

extension DetectedFace {
    public var json: JSONValue {
        .object(["x": .int(box.x), "y": .int(box.y), "width": .int(box.width), "height": .int(box.height),
                 "score": .decimal((score * 1000).rounded() / 1000)])
    }
}
