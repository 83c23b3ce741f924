/// Writes Photoshop paths into files, for `fl_clip`'s tests: 8BIM path resources (26-byte
/// records, 8.24 fixed-point fractions of the height and width) in a JPEG's APP13 segment or a
/// TIFF's Photoshop tag.
public enum PhotoshopPathFiles {
    /// A closed subpath through these anchors (fractions x, y), straight from one to the next
    /// (each control point on its anchor).
    public struct Polygon: Sendable {
        public var points: [(x: Double, y: Double)]
        public init(_ points: [(x: Double, y: Double)]) { self.points = points }
    }

    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func fixed(_ v: Double) -> [UInt8] { be32(Int(Int32(truncatingIfNeeded: Int((v * Double(1 << 24)).rounded())))) }

    /// The records of one path: the fill rule record, then each polygon as a closed subpath.
    public static func pathData(_ polygons: [Polygon]) -> [UInt8] {
        var data = be16(6) + [UInt8](repeating: 0, count: 24)
        for polygon in polygons {
            data += be16(0) + be16(polygon.points.count) + [UInt8](repeating: 0, count: 22)
            for p in polygon.points {
                let point = fixed(p.y) + fixed(p.x)
                data += be16(1) + point + point + point
            }
        }
        return data
    }

    /// One 8BIM resource, its name and data padded to even lengths.
    public static func resource(id: Int, name: String, data: [UInt8]) -> [UInt8] {
        var name = [UInt8(name.utf8.count)] + Array(name.utf8)
        if name.count % 2 != 0 { name.append(0) }
        return Array("8BIM".utf8) + be16(id) + name + be32(data.count) + data + (data.count % 2 != 0 ? [0] : [])
    }

    /// Paths 2000, 2001... named as given, and resource 2999 naming the clipping path if any.
    public static func resources(_ paths: [(name: String, polygons: [Polygon])], clippingPath: String? = nil) -> [UInt8] {
        var block: [UInt8] = []
        for (i, path) in paths.enumerated() { block += resource(id: 2000 + i, name: path.name, data: pathData(path.polygons)) }
        if let clippingPath { block += resource(id: 2999, name: "", data: [UInt8(clippingPath.utf8.count)] + Array(clippingPath.utf8) + [0, 0]) }
        return block
    }

    /// The JPEG with APP13 "Photoshop 3.0" segments holding the resources, after its SOI: as
    /// many as a segment's 64 KB take, the block continuing from one to the next.
    public static func jpeg(_ jpeg: [UInt8], resources: [UInt8]) -> [UInt8] {
        let signature = Array("Photoshop 3.0\0".utf8)
        let room = 65_533 - signature.count
        var segments: [UInt8] = []
        for start in stride(from: 0, to: max(1, resources.count), by: room) {
            let payload = signature + resources[start..<min(resources.count, start + room)]
            segments += [0xFF, 0xED] + be16(payload.count + 2) + payload
        }
        return [0xFF, 0xD8] + segments + jpeg.dropFirst(2)
    }

    /// A minimal big-endian TIFF header whose first IFD has only the Photoshop tag (no image).
    public static func tiffHeader(resources: [UInt8]) -> [UInt8] {
        let entry = be16(34377) + be16(7) + be32(resources.count) + be32(8 + 2 + 12 + 4)
        return Array("MM".utf8) + be16(42) + be32(8) + be16(1) + entry + be32(0) + resources
    }
}
