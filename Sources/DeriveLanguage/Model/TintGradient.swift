/// Cloudinary's tint through several colours, `e_tint[:equalize]:<amount>:<colour>[:<n>p]:<colour>[:<n>p]…`
/// (up to ten colours; its SDKs: "equalize:amount:color1:color1_position:color2:…"), and the
/// one-colour tint with `equalize`. Each pixel's luminance (black 0 … white 100) is looked up on
/// a gradient through the colours, the first at the darkest and the last at the lightest unless
/// positions place them, and the result is mixed into the image by the amount. One colour is
/// the plain tint, a gradient from black to that colour. `equalize` spreads the image's
/// luminance evenly over the range first (histogram equalisation), so every colour is reached.
public struct TintGradient: Sendable, Hashable {
    public var colors: [Color]
    /// Each colour's place on the gradient, in percent of white (0...100), or nil where the
    /// string gives none: those are spaced evenly between their neighbours.
    public var positions: [Int?]
    public var equalize: Bool

    public static let maxColors = 10

    public init(colors: [Color], positions: [Int?]? = nil, equalize: Bool = false) {
        self.colors = colors
        self.positions = positions ?? Array(repeating: nil, count: colors.count)
        self.equalize = equalize
    }

    /// The stops of the gradient: one colour runs from black at 0 to it at 100; several run
    /// from the first to the last, a missing position spaced evenly between the given ones
    /// around it (the first at 0 and the last at 100 when not given).
    public var stops: [(color: Color, position: Double)] {
        if colors.count == 1 { return [(.black, 0), (colors[0], Double(positions[0] ?? 100))] }
        var p = positions.map { $0.map(Double.init) }
        if p[0] == nil { p[0] = 0 }
        if p[p.count - 1] == nil { p[p.count - 1] = 100 }
        var i = 0
        while i < p.count {
            guard p[i] == nil else { i += 1; continue }
            let before = i - 1
            var after = i
            while p[after] == nil { after += 1 }
            let (a, b) = (p[before]!, p[after]!)
            for k in i..<after { p[k] = a + (b - a) * Double(k - before) / Double(after - before) }
            i = after
        }
        return zip(colors, p).map { ($0, $1!) }
    }

    /// Why the positions cannot make a gradient, or nil. Out of 0...100 is malformed;
    /// positions that go back Cloudinary may read some way it does not document.
    public enum PositionProblem: Sendable, Hashable {
        case outOfRange(String)
        case backwards(String)

        public var reason: String {
            switch self {
            case .outOfRange(let reason), .backwards(let reason): reason
            }
        }
    }

    public var positionProblem: PositionProblem? {
        let given = positions.compactMap { $0 }
        if let bad = given.first(where: { !(0...100).contains($0) }) { return .outOfRange("a colour's position must be between 0p and 100p, got \(bad)p") }
        if zip(given, given.dropFirst()).contains(where: { $0 > $1 }) {
            return .backwards("the colours' positions go back (\(given.map { "\($0)p" }.joined(separator: ", ")))")
        }
        return nil
    }

    /// 256 RGB entries: for each luminance 0...255, the gradient's colour there (before the
    /// first stop, its colour; after the last, its colour; between two, each channel linear).
    public func lookupTable() -> [UInt8] {
        let stops = self.stops
        var table: [UInt8] = []
        table.reserveCapacity(256 * 3)
        for i in 0..<256 {
            let x = Double(i) / 255 * 100
            let color: (Double, Double, Double)
            if let first = stops.first, x <= first.position {
                color = (Double(first.color.red), Double(first.color.green), Double(first.color.blue))
            } else if let last = stops.last, x >= last.position {
                color = (Double(last.color.red), Double(last.color.green), Double(last.color.blue))
            } else {
                let k = stops.indices.dropLast().last { stops[$0].position <= x } ?? 0
                let (a, b) = (stops[k], stops[k + 1])
                let f = b.position > a.position ? (x - a.position) / (b.position - a.position) : 1
                func mix(_ p: UInt8, _ q: UInt8) -> Double { Double(p) * (1 - f) + Double(q) * f }
                color = (mix(a.color.red, b.color.red), mix(a.color.green, b.color.green), mix(a.color.blue, b.color.blue))
            }
            table += [color.0, color.1, color.2].map { UInt8(min(255, max(0, $0.rounded()))) }
        }
        return table
    }
}
