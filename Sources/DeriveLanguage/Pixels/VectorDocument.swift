/// The SVG document of an e_vectorize: one `<path>` per colour layer, stacked from the colour
/// with the most pixels (the background) to the one with the fewest. Each layer is traced from
/// the union of its own pixels and those of every layer above it, so a layer lies under its
/// neighbours instead of meeting them edge to edge: no hairline gaps where two traced outlines
/// would not quite touch.
public struct VectorDocument: Sendable {
    /// A closed curve as potrace gives it: starting at the last segment's end point.
    public struct Curve: Sendable, Equatable {
        public var segments: [Segment]
        public init(segments: [Segment]) { self.segments = segments }
    }

    public enum Segment: Sendable, Equatable {
        /// Straight to a corner, then straight to `end`.
        case corner(Point, end: Point)
        /// A cubic Bézier curve.
        case curve(Point, Point, end: Point)
    }

    public struct Point: Sendable, Equatable {
        public var x: Double, y: Double
        public init(_ x: Double, _ y: Double) {
            self.x = x
            self.y = y
        }
    }

    public struct Layer: Sendable {
        public var color: ColorQuantizer.RGB
        public var curves: [Curve]
        public init(color: ColorQuantizer.RGB, curves: [Curve]) {
            self.color = color
            self.curves = curves
        }
    }

    /// The output's size (the SVG's width and height).
    public var size: Size
    /// The traced bitmap's size: the viewBox, in whose units the curves are.
    public var traced: Size
    public var layers: [Layer]

    public init(size: Size, traced: Size, layers: [Layer]) {
        self.size = size
        self.traced = traced
        self.layers = layers
    }

    /// Bounds on what one output may hold: beyond them the trace is refused with advice rather
    /// than written (a photograph at full detail, no despeckle and 30 colours can make a
    /// document browsers struggle with).
    public static let maxCurves = 60_000
    public static let maxBytes = 16 << 20

    public var curveCount: Int { layers.reduce(0) { $0 + $1.curves.count } }

    static let advice = "lower e_vectorize's detail or colors, or raise its despeckle"

    /// The refusal of a trace with more than `maxCurves` paths: `count` of them, or nil when the
    /// tracer stopped counting at the limit.
    public static func tooManyPaths(_ count: Int?) -> DeriveError {
        let traced = count.map { "traced \($0) paths, more than the \(maxCurves)" } ?? "traced more than the \(maxCurves) paths"
        return DeriveError(.limitExceeded, "e_vectorize \(traced) an SVG output may hold; \(advice)")
    }

    /// The document's text, or a `limitExceeded` error when it would pass the bounds.
    public func svg() throws(DeriveError) -> String {
        let advice = Self.advice
        guard curveCount <= Self.maxCurves else { throw Self.tooManyPaths(curveCount) }
        var out = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += #"<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\#(size.width)" height="\#(size.height)" viewBox="0 0 \#(traced.width) \#(traced.height)">"# + "\n"
        for layer in layers where !layer.curves.isEmpty {
            out += #"<path fill="\#(layer.color.hex)" fill-rule="evenodd" d=""#
            for curve in layer.curves {
                guard let last = curve.segments.last else { continue }
                out += "M" + Self.pair(Self.end(of: last))
                for segment in curve.segments {
                    switch segment {
                    case .corner(let c, let end): out += "L" + Self.pair(c) + "L" + Self.pair(end)
                    case .curve(let a, let b, let end): out += "C" + Self.pair(a) + " " + Self.pair(b) + " " + Self.pair(end)
                    }
                }
                out += "Z"
                if out.utf8.count > Self.maxBytes {
                    throw DeriveError(.limitExceeded, "e_vectorize's SVG passed \(Self.maxBytes >> 20) MiB, the most an SVG output may hold; \(advice)")
                }
            }
            out += "\"/>\n"
        }
        out += "</svg>\n"
        return out
    }

    static func end(of segment: Segment) -> Point {
        switch segment {
        case .corner(_, let end), .curve(_, _, let end): end
        }
    }

    /// `x,y` with one decimal (a tenth of a traced pixel), no trailing `.0`.
    static func pair(_ p: Point) -> String { number(p.x) + "," + number(p.y) }

    static func number(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        let a = abs(tenths)
        return a % 10 == 0 ? sign + String(a / 10) : sign + String(a / 10) + "." + String(a % 10)
    }
}
