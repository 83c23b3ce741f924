extension Masks {
    /// The holes a shape encloses: 255 where `alpha` is transparent (below 128) and no path of
    /// transparent pixels (4-connected) leads to the image's edge, 0 elsewhere. e_outline's fill
    /// modes fill them with the outline's colour.
    public static func enclosedHoles(alpha: [UInt8], width: Int, height: Int) -> [UInt8] {
        precondition(alpha.count == width * height)
        // Reached from outside: transparent pixels connected to the edge, found breadth first.
        var outside = [Bool](repeating: false, count: alpha.count)
        var queue: [Int] = []
        queue.reserveCapacity(2 * (width + height))
        func visit(_ i: Int) {
            if !outside[i] && alpha[i] < 128 {
                outside[i] = true
                queue.append(i)
            }
        }
        for x in 0..<width {
            visit(x)
            visit((height - 1) * width + x)
        }
        for y in 0..<height {
            visit(y * width)
            visit(y * width + width - 1)
        }
        var next = 0
        while next < queue.count {
            let i = queue[next]
            next += 1
            let x = i % width
            if x > 0 { visit(i - 1) }
            if x < width - 1 { visit(i + 1) }
            if i >= width { visit(i - width) }
            if i + width < alpha.count { visit(i + width) }
        }
        return (0..<alpha.count).map { alpha[$0] < 128 && !outside[$0] ? 255 : 0 }
    }
}
