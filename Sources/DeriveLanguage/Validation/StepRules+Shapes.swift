extension StepRules {
    /// e_distort: four corners (pixels within Derive's canvas, or fractions) making a convex
    /// quadrilateral, or an arc of at most a full circle either way.
    static func distortIssues(_ distortion: Distortion, limits: ChainLimits) -> [FieldIssue] {
        switch distortion {
        case .arc(let degrees):
            return check(degrees, in: Distortion.arcRange, field: "degrees", derivesLimits: true)
        case .corners(let corners):
            guard corners.count == 8 else {
                return [FieldIssue(field: "corners", reason: "takes four corners, eight numbers (x1:y1:x2:y2:x3:y3:x4:y4), got \(corners.count)")]
            }
            var issues: [FieldIssue] = []
            for (i, c) in corners.enumerated() {
                let field = "corners"
                let name = "\(i % 2 == 0 ? "x" : "y")\(i / 2 + 1)"
                switch c {
                case .pixels(let n):
                    issues += check(n, in: -limits.maxOutputDimension...limits.maxOutputDimension, field: field + " " + name, derivesLimits: true)
                case .fraction(let f):
                    if abs(f) > maxFraction {
                        issues.append(FieldIssue(field: field, reason: "\(name) must be a percentage between -1600 and 1600, got \(Decimal6.string(f * 100))p", bound: .derive))
                    }
                case .expression:
                    issues.append(FieldIssue(field: field, reason: "\(name) must be pixels or a percentage (30p), not an expression"))
                }
            }
            guard issues.isEmpty else { return issues }
            // The shape is known here when the corners are all pixels or all fractions (an
            // image's width and height scale fractions without changing which way they turn);
            // mixed, the planner checks it on the image.
            let fractions = corners.filter(\.isFraction).count
            if fractions == 0 || fractions == 8, let problem = DistortGeometry.problem(DistortGeometry.points(corners, on: Size(1, 1))) {
                issues.append(FieldIssue(field: "corners", reason: problem))
            }
            return issues
        }
    }
}
