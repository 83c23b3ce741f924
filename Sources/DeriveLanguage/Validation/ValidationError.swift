/// One reason an input was rejected: where (a JSON path or a chain component) and why.
public struct ValidationIssue: Sendable, Hashable, CustomStringConvertible {
    public var location: String
    public var reason: String

    public init(location: String, reason: String) {
        self.location = location
        self.reason = reason
    }

    public var description: String { location.isEmpty ? reason : "\(location): \(reason)" }
}

/// Everything wrong with a job, chain or plan request, one issue per line. Always permanent:
/// retrying the same input gives the same answer.
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var issues: [ValidationIssue]

    public init(_ issues: [ValidationIssue]) {
        self.issues = issues
    }

    public init(location: String, reason: String) {
        self.issues = [ValidationIssue(location: location, reason: reason)]
    }

    public var description: String { issues.map(\.description).joined(separator: "\n") }
}

/// A path into a JSON document, printed as `outputs[1].chain[0].resize.width`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    var components: [Component]

    public static let root = JSONPath(components: [])

    public func appending(_ key: String) -> JSONPath { JSONPath(components: components + [.key(key)]) }
    public func appending(_ index: Int) -> JSONPath { JSONPath(components: components + [.index(index)]) }

    /// Appends a dotted sub-path such as `text.size` or `radius[2]` produced by a rule.
    func appending(field: String) -> JSONPath {
        guard !field.isEmpty else { return self }
        var path = self
        for part in field.split(separator: ".") {
            if let bracket = part.firstIndex(of: "["), part.hasSuffix("]"),
               let index = Int(part[part.index(after: bracket)..<part.index(before: part.endIndex)]) {
                path = path.appending(String(part[..<bracket])).appending(index)
            } else {
                path = path.appending(String(part))
            }
        }
        return path
    }

    public var description: String {
        var out = ""
        for component in components {
            switch component {
            case .key(let key):
                if key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "$") }), !key.isEmpty {
                    out += out.isEmpty ? key : "." + key
                } else {
                    out += "[\(Quoted(key))]"
                }
            case .index(let i):
                out += "[\(i)]"
            }
        }
        return out.isEmpty ? "(top level)" : out
    }
}

/// A problem found by a rule inside one step or settings object: `field` is the dotted path
/// below it (`width`, `text.size`), empty for the object as a whole.
struct FieldIssue: Sendable, Hashable {
    var field: String
    var reason: String
    /// Whose range a number is outside of, when that is the problem: a refusal of a string
    /// says whether Cloudinary would take the value at all.
    var bound: Bound? = nil

    enum Bound: Sendable, Hashable {
        /// Outside what Cloudinary documents (`e_sepia:-10`, `w_0`, `o_150`).
        case cloudinary
        /// Within Cloudinary's language, beyond a limit of Derive's (`w_20000`).
        case derive
    }

    /// The issue of a setting written in a transformation string at `location`, named as it is
    /// written there (`q_` rather than `quality`).
    func inString(at location: String) -> ValidationIssue {
        ValidationIssue(location: location, reason: "\(CloudinaryNames.setting(field)) \(reason)")
    }
}

/// "did you mean" hints for misspelt keys and values.
package enum Suggest {
    package static func hint(for word: String, among candidates: [String]) -> String {
        guard let best = nearest(to: word, among: candidates) else { return "" }
        return "; did you mean \(Quoted(best))?"
    }

    /// The "did you mean" hint, or when no candidate is close, `fallback` (a list of what is
    /// supported, or how to write it).
    package static func hint(for word: String, among candidates: [String], else fallback: String) -> String {
        let hint = hint(for: word, among: candidates)
        return hint.isEmpty ? fallback : hint
    }

    package static func nearest(to word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        guard lowered.count <= 64 else { return nil }
        // Fewest edits wins; among equals, the longest shared prefix ("fil" → "fill", not "fit").
        var best: (candidate: String, distance: Int, prefix: Int)?
        for candidate in candidates {
            let lowerCandidate = candidate.lowercased()
            let distance = editDistance(Array(lowered), Array(lowerCandidate))
            let prefix = zip(lowered, lowerCandidate).prefix(while: { $0 == $1 }).count
            if best == nil || distance < best!.distance || (distance == best!.distance && prefix > best!.prefix) {
                best = (candidate, distance, prefix)
            }
        }
        guard let (candidate, distance, _) = best else { return nil }
        let allowed = max(1, min(3, candidate.count / 3))
        return distance <= allowed && distance > 0 ? candidate : nil
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and adjacent swaps.
    package static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
