/// Derive's own reader of a Photoshop document's layers (`pg_name:`) and the files embedded in
/// its smart objects (`pg_embedded:`). libvips reads a PSD flattened, and only through
/// ImageMagick, which Derive blocks; this reads the layer and mask section itself.
///
/// Read: the header (PSD version 1 and PSB version 2), the colour mode data and image resources
/// (skipped), the layer records (bounds, channels, blend mode, opacity, clipping, the hidden
/// flag, the layer mask's rectangle and parameters, the Pascal name and the Unicode name of a
/// `luni` block, which wins, group markers `lsct`, vector masks `vmsk`/`vsms`, solid colour
/// fills `SoCo`, the smart object blocks `PlLd`/`SoLd`/`SoLE`), every layer channel's pixels
/// (compression 0 raw and 1 RLE/PackBits), and the linked files of the `lnk2`/`lnkD`/`lnk3`
/// blocks (the embedded files' bytes and names). 8-bit RGB and greyscale only; ZIP-compressed
/// channels, other depths and colour modes are refused by name. Blend modes other than normal,
/// a group's own mask and opacity, adjustment layers and effects are not drawn (the language
/// reference says so).
///
/// Every count and length is checked against the bytes that remain before it is used, and the
/// canvas against the caller's pixel limit before it is allocated: a malformed or truncated file
/// is a `corruptImage` error, never a crash or an unbounded allocation.
public struct PhotoshopDocument: Sendable {
    struct LayerMask: Sendable {
        var channel: Int
        var left: Int, top: Int, right: Int, bottom: Int
        var outside: UInt8
        var disabled: Bool
        var density: Int
        /// Flag bit 3: the mask was rendered from other data (the vector mask), so it is the
        /// vector mask already.
        var rendered = false
    }

    public struct Layer: Sendable {
        public var name: String
        /// Left, top, right, bottom in document pixels (may reach outside the canvas).
        public var left: Int, top: Int, right: Int, bottom: Int
        /// Four characters (`norm`, `mul `, `lddg`, ...).
        public var blendMode: String
        public var opacity: Int
        public var hidden: Bool
        /// Clipped to the layer below it (Photoshop's clipping mask): shown only where that
        /// base layer is.
        public var clipped = false
        /// `lsct`: 0 a layer, 1 or 2 a group (open, closed), 3 the end-of-group marker.
        public var section: Int
        /// The linked file's unique ID when the layer is a smart object.
        public var smartObjectID: String?
        /// The layer mask: its channel (-2, or -3 when Photoshop stored the user and vector masks
        /// combined, the "real" mask), rectangle, the value outside it, whether it is off, and its
        /// density (255 when the mask applies fully).
        var mask: LayerMask?
        /// The vector mask's density from the layer mask's parameters.
        var vectorDensity = 255
        /// Where the vector mask's data (`vmsk`/`vsms`) is in the file.
        var vectorMask: Range<Int>?
        /// A solid colour fill layer's colour (`SoCo`): it covers the canvas, its masks shape it.
        var fill: [UInt8]?
        /// Channel ID (0, 1, 2 colour, -1 transparency, -2 and -3 masks) and where its
        /// compression code and data are in the file.
        var channels: [(id: Int, offset: Int, length: Int)]

        public var width: Int { right - left }
        /// The same layer covering a canvas of this size (a fill layer's pixels are its colour).
        func filling(width: Int, height: Int) -> Layer {
            var layer = self
            layer.left = 0; layer.top = 0; layer.right = width; layer.bottom = height
            return layer
        }
        public var height: Int { bottom - top }
        public var isGroup: Bool { section == 1 || section == 2 }
        public var isGroupEnd: Bool { section == 3 }
    }

    /// A file a smart object holds (`liFD`), or names outside the document (`liFE`, `liFA`).
    public struct LinkedFile: Sendable {
        public var id: String
        public var name: String
        /// The kind as stored: `liFD` embedded, `liFE` external, `liFA` an alias.
        public var kind: String
        /// Where the embedded bytes are; nil when the file is outside the document.
        var data: Range<Int>?
    }

    public var width: Int
    public var height: Int
    /// 1 PSD, 2 PSB.
    public var version: Int
    /// 1 greyscale, 3 RGB.
    public var colorMode: Int
    /// In the file's order: bottom to top.
    public var layers: [Layer]
    public var linkedFiles: [LinkedFile]
    let bytes: [UInt8]
    /// The caller's pixel limit, which also bounds each layer decoded.
    let maxPixels: Int

    public static let maxLayers = 10_000

    /// `true` when `bytes` start as a Photoshop document does.
    public static func isPhotoshop(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 6 && bytes.starts(with: Array("8BPS".utf8)) && (bytes[5] == 1 || bytes[5] == 2) && bytes[4] == 0
    }

    /// Reads the structure (no pixel is decoded). `maxPixels` bounds the canvas declared.
    public init(_ bytes: [UInt8], maxPixels: Int) throws(DeriveError) {
        self.bytes = bytes
        self.maxPixels = maxPixels
        var r = PSDReader(bytes: bytes)
        guard Self.isPhotoshop(bytes) else { throw DeriveError(.invalidJob, "not a Photoshop document (PSD or PSB)") }
        r.offset = 4
        version = try r.u16()
        try r.skip(6)
        let channelCount = try r.u16()
        height = try r.u32()
        width = try r.u32()
        let depth = try r.u16()
        colorMode = try r.u16()
        let maxSide = version == 1 ? 30_000 : 300_000
        guard (1...56).contains(channelCount), (1...maxSide).contains(width), (1...maxSide).contains(height) else {
            throw Self.corrupt("its header declares \(width)x\(height) pixels in \(channelCount) channels")
        }
        let pixels = width.multipliedReportingOverflow(by: height)
        if pixels.overflow || pixels.partialValue > maxPixels {
            throw DeriveError(.limitExceeded, "the Photoshop document declares \(width)x\(height) pixels; the limit is \(maxPixels) pixels (DERIVE_MAX_INPUT_PIXELS)")
        }
        guard depth == 8 else {
            throw DeriveError(.unsupportedFormat, "the Photoshop document has \(depth)-bit channels; Derive reads the layers of 8-bit documents only")
        }
        guard colorMode == 1 || colorMode == 3 else {
            let mode = [0: "bitmap", 2: "indexed", 4: "CMYK", 7: "multichannel", 8: "duotone", 9: "Lab"][colorMode] ?? "mode \(colorMode)"
            throw DeriveError(.unsupportedFormat, "the Photoshop document is in \(mode) colour; Derive reads the layers of RGB and greyscale documents only")
        }
        try r.skipBlock()   // colour mode data
        try r.skipBlock()   // image resources
        let sectionLength = version == 2 ? try r.u64() : try r.u32()
        let sectionEnd = try r.end(of: sectionLength)
        layers = []
        linkedFiles = []
        guard sectionLength > 0 else { return }
        let infoLength = version == 2 ? try r.u64() : try r.u32()
        let infoEnd = try r.end(of: infoLength)
        guard infoEnd <= sectionEnd else { throw Self.corrupt("its layer information runs past its section") }
        if infoLength > 0 {
            layers = try Self.layerInfo(&r, version: version, end: infoEnd)
        }
        // The global layer mask, then the document's tagged blocks (the linked files).
        r.offset = infoEnd + (infoEnd & 1)
        guard r.offset + 4 <= sectionEnd else { return }
        let maskLength = try r.u32()
        guard r.offset + maskLength <= sectionEnd else { throw Self.corrupt("its global layer mask runs past its section") }
        r.offset += maskLength
        linkedFiles = try Self.documentBlocks(&r, version: version, end: sectionEnd)
    }

    static func corrupt(_ what: String) -> DeriveError {
        DeriveError(.corruptImage, "the Photoshop document is malformed: \(what)")
    }

    // MARK: - Layer records

    static func layerInfo(_ r: inout PSDReader, version: Int, end: Int) throws(DeriveError) -> [Layer] {
        let declared = Int(Int16(truncatingIfNeeded: try r.u16()))
        let count = abs(declared)
        guard count <= maxLayers else {
            throw DeriveError(.limitExceeded, "the Photoshop document has \(count) layers; Derive reads at most \(maxLayers)")
        }
        // A record is at least 34 bytes: a count larger than the bytes allow is refused before
        // anything is kept for it.
        guard count * 34 <= end - r.offset else { throw corrupt("it declares \(count) layers in \(end - r.offset) bytes") }
        var records: [(layer: Layer, lengths: [Int])] = []
        for index in 0..<count {
            let top = try r.i32(), left = try r.i32(), bottom = try r.i32(), right = try r.i32()
            guard bottom >= top, right >= left, bottom - top <= 300_000, right - left <= 300_000 else {
                throw corrupt("layer \(index + 1) has bounds \(left),\(top) to \(right),\(bottom)")
            }
            let channelCount = try r.u16()
            guard channelCount <= 56 else { throw corrupt("layer \(index + 1) declares \(channelCount) channels") }
            var ids: [Int] = [], lengths: [Int] = []
            for _ in 0..<channelCount {
                ids.append(Int(Int16(truncatingIfNeeded: try r.u16())))
                lengths.append(version == 2 ? try r.u64() : try r.u32())
            }
            guard try r.fourCC() == "8BIM" else { throw corrupt("layer \(index + 1)'s blend mode signature is not 8BIM") }
            let blend = try r.fourCC()
            let opacity = try r.u8()
            let clipping = try r.u8()
            let flags = try r.u8()
            _ = try r.u8()                  // filler
            let extraLength = try r.u32()
            let extraEnd = try r.end(of: extraLength)
            guard extraEnd <= end else { throw corrupt("layer \(index + 1)'s extra data runs past the layer information") }
            let maskLength = try r.u32()
            let maskEnd = try r.end(of: maskLength)
            var mask: LayerMask?
            var vectorDensity = 255
            if maskLength >= 18 {
                // Rectangle, default colour, flags; with 36 bytes or more the "real" flags,
                // colour and rectangle (the user and vector masks combined, channel -3); then,
                // when flag bit 4 is set, the parameters (densities and feathers).
                var m = PSDReader(bytes: r.bytes, offset: r.offset, limit: maskEnd)
                let top = try m.i32(), left = try m.i32(), bottom = try m.i32(), right = try m.i32()
                let outside = UInt8(try m.u8()), flags = try m.u8()
                var chosen = LayerMask(channel: -2, left: left, top: top, right: right, bottom: bottom, outside: outside,
                                       disabled: flags & 0x02 != 0, density: 255, rendered: flags & 0x08 != 0)
                if maskLength >= 36 {
                    let realFlags = try m.u8(), realOutside = UInt8(try m.u8())
                    let realTop = try m.i32(), realLeft = try m.i32(), realBottom = try m.i32(), realRight = try m.i32()
                    if realFlags & 0x10 != 0 {
                        chosen = LayerMask(channel: -3, left: realLeft, top: realTop, right: realRight, bottom: realBottom,
                                           outside: realOutside, disabled: realFlags & 0x02 != 0, density: 255)
                    }
                }
                if flags & 0x10 != 0, let parameters = try? m.u8() {
                    if parameters & 1 != 0, let d = try? m.u8() { chosen.density = d }
                    if parameters & 2 != 0 { _ = try? m.skip(8) }
                    if parameters & 4 != 0, let d = try? m.u8() { vectorDensity = d }
                }
                if chosen.rendered && chosen.channel == -2 { chosen.density = vectorDensity }
                let b = chosen
                if b.bottom > b.top, b.right > b.left, b.bottom - b.top <= 300_000, b.right - b.left <= 300_000 {
                    mask = chosen
                }
            }
            r.offset = maskEnd
            try r.skipBlock()         // blending ranges
            let nameLength = try r.u8()
            let pascal = try r.bytes(nameLength)
            try r.skip((4 - (1 + nameLength) % 4) % 4)
            var layer = Layer(name: macRoman(pascal),
                              left: left, top: top, right: right, bottom: bottom, blendMode: blend, opacity: opacity,
                              hidden: flags & 0x02 != 0, clipped: clipping != 0, section: 0, smartObjectID: nil,
                              mask: mask, vectorDensity: vectorDensity, vectorMask: nil, fill: nil,
                              channels: ids.map { (id: $0, offset: 0, length: 0) })
            // The layer's tagged blocks, to the end of its extra data (no padding between them).
            while r.offset + 12 <= extraEnd {
                let signature = try r.fourCC()
                guard signature == "8BIM" || signature == "8B64" else { break }
                let key = try r.fourCC()
                let length = version == 2 && bigKeys.contains(key) ? try r.u64() : try r.u32()
                let blockEnd = try r.end(of: length)
                guard blockEnd <= extraEnd else { throw corrupt("layer \(index + 1)'s \(key) block runs past its extra data") }
                var block = PSDReader(bytes: r.bytes, offset: r.offset, limit: blockEnd)
                switch key {
                case "luni":
                    let units = try block.u32()
                    guard units * 2 <= blockEnd - block.offset else { throw corrupt("layer \(index + 1)'s Unicode name is longer than its block") }
                    var utf16: [UInt16] = []
                    for _ in 0..<units { utf16.append(UInt16(try block.u16())) }
                    while utf16.last == 0 { utf16.removeLast() }
                    layer.name = String(decoding: utf16, as: UTF16.self)
                case "SoCo":
                    let slice = r.bytes[r.offset..<blockEnd]
                    if let red = descriptorDouble(slice, key: "Rd  "), let green = descriptorDouble(slice, key: "Grn "),
                       let blue = descriptorDouble(slice, key: "Bl  ") {
                        layer.fill = [red, green, blue].map { UInt8(max(0, min(255, $0.rounded()))) }
                    }
                case "vmsk", "vsms":
                    layer.vectorMask = r.offset..<blockEnd
                case "lsct":
                    layer.section = try block.u32()
                case "PlLd":
                    // 'plcL', version, then the unique ID as a Pascal string.
                    try block.skip(8)
                    let n = try block.u8()
                    let id = String(decoding: try block.bytes(n), as: UTF8.self)
                    if layer.smartObjectID == nil { layer.smartObjectID = id }
                case "SoLd", "SoLE":
                    if let id = descriptorText(r.bytes[r.offset..<blockEnd], key: "Idnt") { layer.smartObjectID = id }
                default: break
                }
                r.offset = blockEnd
            }
            r.offset = extraEnd
            records.append((layer, lengths))
        }
        // Channel image data: each layer's channels in order, each its compression and data.
        var layers: [Layer] = []
        for (layer, lengths) in records {
            var layer = layer
            for i in layer.channels.indices {
                let start = r.offset
                let channelEnd = try r.end(of: lengths[i])
                guard channelEnd <= end else { throw corrupt("layer \(Quoted(layer.name))'s channel data runs past the layer information") }
                layer.channels[i].offset = start
                layer.channels[i].length = lengths[i]
                r.offset = channelEnd
            }
            layers.append(layer)
        }
        return layers
    }

    /// Keys whose length is 8 bytes in a PSB.
    static let bigKeys: Set<String> = ["LMsk", "Lr16", "Lr32", "Layr", "Mt16", "Mt32", "Mtrn", "Alph", "FMsk", "lnk2", "FEid", "FXid", "PxSD"]

    /// A descriptor's text item `key` (`Idnt` in `SoLd`): found by its key (a 4-character key
    /// is stored after a length of 0 or 4) and type rather than by parsing the whole
    /// descriptor, which nothing else here needs.
    static func descriptorText(_ slice: ArraySlice<UInt8>, key: String) -> String? {
        let needle = Array(key.utf8) + Array("TEXT".utf8)
        let b = Array(slice)
        guard b.count >= needle.count + 8 else { return nil }
        for i in 4...(b.count - needle.count - 4) where b[i..<(i + needle.count)].elementsEqual(needle) {
            guard b[i - 4] == 0, b[i - 3] == 0, b[i - 2] == 0, b[i - 1] == 0 || b[i - 1] == 4 else { continue }
            var r = PSDReader(bytes: b, offset: i + needle.count)
            guard let units = try? r.u32(), units * 2 <= b.count - r.offset else { return nil }
            var utf16: [UInt16] = []
            for _ in 0..<units { utf16.append(UInt16((try? r.u16()) ?? 0)) }
            while utf16.last == 0 { utf16.removeLast() }
            return String(decoding: utf16, as: UTF16.self)
        }
        return nil
    }

    /// A descriptor's number item `key` (`Rd  ` in `SoCo`'s colour): its key, the type `doub`
    /// and an 8-byte IEEE double, found as `descriptorText` finds text.
    static func descriptorDouble(_ slice: ArraySlice<UInt8>, key: String) -> Double? {
        let needle = Array(key.utf8) + Array("doub".utf8)
        let b = Array(slice)
        guard b.count >= needle.count + 12 else { return nil }
        for i in 4...(b.count - needle.count - 8) where b[i..<(i + needle.count)].elementsEqual(needle) {
            guard b[i - 4] == 0, b[i - 3] == 0, b[i - 2] == 0, b[i - 1] == 0 || b[i - 1] == 4 else { continue }
            var bits: UInt64 = 0
            for k in 0..<8 { bits = bits << 8 | UInt64(b[i + needle.count + k]) }
            let value = Double(bitPattern: bits)
            return value.isFinite ? value : nil
        }
        return nil
    }

    static func macRoman(_ bytes: [UInt8]) -> String {
        // ASCII is the same in Mac Roman; other bytes are read as Latin-1, which is close enough
        // for a fallback name (the `luni` block, present since Photoshop 5, wins).
        String(bytes.map { Character(Unicode.Scalar($0)) })
    }

    // MARK: - Linked files

    static func documentBlocks(_ r: inout PSDReader, version: Int, end: Int) throws(DeriveError) -> [LinkedFile] {
        var files: [LinkedFile] = []
        while r.offset + 12 <= end {
            // Blocks here are padded to 4 bytes by Photoshop, to 2 by others: find the signature.
            var found = false
            for pad in 0..<4 where r.offset + pad + 12 <= end {
                let sig = String(decoding: r.bytes[(r.offset + pad)..<(r.offset + pad + 4)], as: UTF8.self)
                if sig == "8BIM" || sig == "8B64" { r.offset += pad; found = true; break }
            }
            guard found else { break }
            try r.skip(4)
            let key = try r.fourCC()
            let length = version == 2 && bigKeys.contains(key) ? try r.u64() : try r.u32()
            let blockEnd = try r.end(of: length)
            guard blockEnd <= end else { throw corrupt("its \(key) block runs past the layer section") }
            if key == "lnk2" || key == "lnkD" || key == "lnk3" || key == "lnkE" {
                var block = PSDReader(bytes: r.bytes, offset: r.offset, limit: blockEnd)
                while block.offset + 8 <= blockEnd {
                    let itemLength = try block.u64()
                    let itemEnd = try block.end(of: itemLength)
                    files.append(try linkedFile(PSDReader(bytes: r.bytes, offset: block.offset, limit: itemEnd), end: itemEnd))
                    block.offset = itemEnd + (4 - itemLength % 4) % 4
                }
            }
            r.offset = blockEnd
        }
        return files
    }

    /// One linked-file record. Its open-file descriptor is not parsed: the embedded bytes are
    /// found from the record's end, where the fields after them have lengths the version fixes
    /// (the child document ID is a counted string, checked against its count).
    static func linkedFile(_ reader: PSDReader, end: Int) throws(DeriveError) -> LinkedFile {
        var r = reader
        let kind = try r.fourCC()
        let version = try r.u32()
        guard (1...8).contains(version) else { throw corrupt("a linked file's record has version \(version)") }
        let idLength = try r.u8()
        let id = String(decoding: try r.bytes(idLength), as: UTF8.self)
        let units = try r.u32()
        guard units * 2 <= end - r.offset else { throw corrupt("a linked file's name is longer than its record") }
        var utf16: [UInt16] = []
        for _ in 0..<units { utf16.append(UInt16(try r.u16())) }
        while utf16.last == 0 { utf16.removeLast() }
        let name = String(decoding: utf16, as: UTF16.self)
        try r.skip(8)                       // file type, creator
        let size = try r.u64()
        let headerEnd = r.offset
        guard kind == "liFD" else { return LinkedFile(id: id, name: name, kind: kind, data: nil) }
        // After the data: v5+ a counted UTF-16 child ID, v6+ an 8-byte time, v7+ a lock byte.
        let fixed = (version >= 6 ? 8 : 0) + (version >= 7 ? 1 : 0)
        var dataEnd: Int?
        if version >= 5 {
            for n in 0...256 {
                let countAt = end - fixed - 2 * n - 4
                guard countAt - size >= headerEnd else { break }
                if PSDReader.u32(r.bytes, countAt) == n { dataEnd = countAt; break }
            }
        } else {
            dataEnd = end
        }
        guard let dataEnd, dataEnd - size >= headerEnd else {
            throw corrupt("the embedded file \(Quoted(name)) does not fit its record (\(size) bytes declared)")
        }
        return LinkedFile(id: id, name: name, kind: kind, data: (dataEnd - size)..<dataEnd)
    }

    // MARK: - Selection

    /// The names of the layers (groups included, end-of-group markers not), bottom to top.
    public var layerNames: [String] { layers.filter { !$0.isGroupEnd }.map(\.name) }

    /// The layers that `names` select, in document order: a named group brings the visible
    /// layers inside it; a layer named is drawn even when hidden (naming it asks for it). A name
    /// the document does not have fails with the names it has.
    public func layers(named names: [String]) throws(DeriveError) -> [Layer] {
        var chosen = Set<Int>()
        for name in names {
            let matches = layers.indices.filter { !layers[$0].isGroupEnd && layers[$0].name == name }
            guard !matches.isEmpty else {
                let has = layerNames.map { Quoted($0).description }.joined(separator: ", ")
                throw DeriveError(.invalidJob, "pg_name: the Photoshop document has no layer \(Quoted(name)); its layers are \(has.isEmpty ? "none" : has)")
            }
            for index in matches {
                chosen.insert(index)
                if layers[index].isGroup { chosen.formUnion(members(ofGroupAt: index)) }
            }
        }
        return chosen.sorted().map { layers[$0] }.filter { !$0.isGroup && !$0.isGroupEnd }
    }

    /// A group's members: the records between its end marker and it, without what Photoshop
    /// hides inside it.
    func members(ofGroupAt index: Int) -> Set<Int> {
        var members = Set<Int>()
        var depth = 0
        var i = index - 1
        while i >= 0 {
            if layers[i].isGroup { depth += 1 }
            if layers[i].isGroupEnd {
                if depth == 0 { break }
                depth -= 1
            }
            if !layers[i].hidden { members.insert(i) }
            i -= 1
        }
        return members
    }

    /// The smart object layers, bottom to top (`pg_embedded:<n>` counts them from 1).
    public var smartObjects: [Layer] { layers.filter { $0.smartObjectID != nil } }

    /// The file embedded in a smart object: by 1-based number among the smart object layers, or
    /// by the layer's name (or the embedded file's own name).
    public func embeddedFile(number: Int? = nil, name: String? = nil) throws(DeriveError) -> (name: String, bytes: [UInt8]) {
        let objects = smartObjects
        let layer: Layer
        if let number {
            guard objects.indices.contains(number - 1) else {
                throw DeriveError(.invalidJob, "pg_embedded:\(number): the Photoshop document has \(objects.count) smart object\(objects.count == 1 ? "" : "s")")
            }
            layer = objects[number - 1]
        } else if let name, let found = objects.first(where: { $0.name == name }) {
            layer = found
        } else if let name, let file = linkedFiles.first(where: { $0.name == name && $0.data != nil }), let data = file.data {
            return (file.name, Array(bytes[data]))
        } else {
            let has = objects.map { Quoted($0.name).description }.joined(separator: ", ")
            throw DeriveError(.invalidJob, "pg_embedded:name:\(name ?? ""): the Photoshop document has no smart object layer of that name; its smart objects are \(has.isEmpty ? "none" : has)")
        }
        guard let file = linkedFiles.first(where: { $0.id == layer.smartObjectID }) else {
            throw Self.corrupt("the smart object \(Quoted(layer.name)) names a linked file the document does not hold")
        }
        guard let data = file.data else {
            throw DeriveError(.invalidJob, "the smart object \(Quoted(layer.name)) is linked to \(Quoted(file.name)), a file outside the Photoshop document, not embedded in it")
        }
        return (file.name, Array(bytes[data]))
    }

    // MARK: - Pixels

    /// The layers composited in document order onto a transparent canvas of the document's
    /// size, each at its position with its opacity, source-over (straight RGBA, 8 bits).
    public func composite(_ selected: [Layer]) throws(DeriveError) -> [UInt8] {
        var groupAlpha: [Int: [UInt8]] = [:]
        var work = 0
        return try composite(selected, depth: 0, groupAlpha: &groupAlpha, work: &work)
    }

    /// Pixels a composite may visit in all (each layer's area, each vector mask's and clipping
    /// base's canvas): a file of many large layers fails instead of taking hours.
    var maxWork = 4_000_000_000

    /// Groups composited as clipping bases nest at most this deep (each level holds a canvas).
    static let maxClippingDepth = 8

    func composite(_ selected: [Layer], depth: Int, groupAlpha: inout [Int: [UInt8]], work: inout Int) throws(DeriveError) -> [UInt8] {
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        for layer in selected {
            let canvasPixels = width * height
            let visited = layer.fill != nil ? canvasPixels : max(0, min(width, layer.right) - max(0, layer.left)) * max(0, min(height, layer.bottom) - max(0, layer.top))
            work += visited + (layer.vectorMask != nil ? canvasPixels : 0) + (layer.clipped ? canvasPixels : 0)
            guard work <= maxWork else {
                throw DeriveError(.limitExceeded, "pg_name: the selected layers of this \(width)x\(height) document need more than \(maxWork) pixel visits to composite (many large layers or masks)")
            }
            guard let drawn = try self.drawn(layer) else { continue }
            // A clipped layer shows only where its base layer is (the nearest layer below it
            // that is not clipped, in the same group), named or not.
            var base: ((Int, Int) -> Int)?
            if layer.clipped, let baseIndex = self.base(of: layer) {
                if layers[baseIndex].isGroup {
                    // A group as the base: where its visible layers are, composited (once a
                    // group however many layers it clips).
                    if groupAlpha[baseIndex] == nil {
                        guard depth < Self.maxClippingDepth else {
                            throw DeriveError(.limitExceeded, "layer \(Quoted(layer.name)) is clipped to groups nested more than \(Self.maxClippingDepth) deep")
                        }
                        let group = try composite(members(ofGroupAt: baseIndex).sorted().map { layers[$0] }, depth: depth + 1,
                                                  groupAlpha: &groupAlpha, work: &work)
                        groupAlpha[baseIndex] = stride(from: 3, to: group.count, by: 4).map { group[$0] }
                    }
                    let alpha = groupAlpha[baseIndex]!, width = self.width
                    base = { x, y in Int(alpha[y * width + x]) }
                } else {
                    guard let baseDrawn = try self.drawn(layers[baseIndex]) else { continue }
                    base = baseDrawn.alpha
                }
            }
            let opacity = layer.opacity
            let area = drawn.layer
            for y in max(0, area.top)..<min(height, area.bottom) {
                for x in max(0, area.left)..<min(width, area.right) {
                    var a = (drawn.alpha(x, y) * opacity + 127) / 255
                    if let base { a = (a * base(x, y) + 127) / 255 }
                    guard a > 0 else { continue }
                    let ci = (y * width + x) * 4
                    let da = Int(canvas[ci + 3])
                    // Straight alpha: out = (c·a + d·da·(1−a)) / outA.
                    let outA255 = a * 255 + da * (255 - a)           // alpha × 255
                    for k in 0..<3 {
                        let numerator = Int(drawn.colour(k, x, y)) * a * 255 + Int(canvas[ci + k]) * da * (255 - a)
                        canvas[ci + k] = UInt8((numerator + outA255 / 2) / outA255)
                    }
                    canvas[ci + 3] = UInt8((outA255 + 127) / 255)
                }
            }
        }
        return canvas
    }

    /// A layer ready to draw: its area on the canvas (a fill layer's is the canvas), its colour
    /// and its alpha (transparency channel times its masks, before its opacity) at a document
    /// pixel inside that area. Nil for a layer with nothing to draw.
    func drawn(_ layer: Layer) throws(DeriveError) -> (layer: Layer, colour: (Int, Int, Int) -> UInt8, alpha: (Int, Int) -> Int)? {
        guard layer.fill != nil || (layer.width > 0 && layer.height > 0), !layer.isGroup, !layer.isGroupEnd else { return nil }
        // A fill layer is its colour over the whole canvas, shaped by its masks.
        let layer = layer.fill == nil ? layer : layer.filling(width: width, height: height)
        let planes = try channels(of: layer)
        let colour: [[UInt8]] = colorMode == 3 ? [planes[0]!, planes[1]!, planes[2]!] : [planes[0]!, planes[0]!, planes[0]!]
        let transparency = planes[-1]
        let masks = try self.masks(of: layer, planes: planes)
        let left = layer.left, top = layer.top, right = layer.right, bottom = layer.bottom, columns = layer.width
        return (layer,
                { k, x, y in colour[k][(y - top) * columns + (x - left)] },
                { x, y in
                    guard x >= left, x < right, y >= top, y < bottom else { return 0 }
                    var a = Int(transparency?[(y - top) * columns + (x - left)] ?? 255)
                    for mask in masks { a = (a * Int(mask(x, y)) + 127) / 255 }
                    return a
                })
    }

    /// The index of a clipped layer's base: the nearest record below it that is not clipped, a
    /// layer or a group (whose end marker is skipped to reach it); nil when there is none.
    func base(of layer: Layer) -> Int? {
        guard let index = layers.firstIndex(where: { $0.channels.first?.offset == layer.channels.first?.offset && $0.name == layer.name }) else { return nil }
        var i = index - 1
        while i >= 0 {
            let below = layers[i]
            if below.isGroupEnd {
                // The group this marker ends is the base: find its opening record above it.
                var depth = 0
                for j in (i + 1)..<index {
                    if layers[j].isGroupEnd { depth += 1 }
                    if layers[j].isGroup {
                        if depth == 0 { return j }
                        depth -= 1
                    }
                }
                return nil
            }
            if !below.clipped { return i }
            i -= 1
        }
        return nil
    }

    /// The layer's masks that apply, as coverage at a document pixel: the layer mask (channel
    /// -2 inside its rectangle, its default value outside) unless it is turned off, and the
    /// vector mask unless it is turned off, its subpaths combined by their operations.
    func masks(of layer: Layer, planes: [Int: [UInt8]]) throws(DeriveError) -> [(Int, Int) -> UInt8] {
        var masks: [(Int, Int) -> UInt8] = []
        // A density d weakens a mask m to d·m + (1 − d).
        func weakened(_ value: UInt8, _ density: Int) -> UInt8 {
            density >= 255 ? value : UInt8((Int(value) * density + 255 * (255 - density) + 127) / 255)
        }
        if let mask = layer.mask, !mask.disabled, let plane = planes[mask.channel] {
            let width = mask.right - mask.left
            masks.append { x, y in
                guard x >= mask.left, x < mask.right, y >= mask.top, y < mask.bottom else { return weakened(mask.outside, mask.density) }
                return weakened(plane[(y - mask.top) * width + (x - mask.left)], mask.density)
            }
        }
        // The real mask (-3), or a mask rendered from the vector mask, holds it already.
        if layer.mask?.channel != -3, layer.mask?.rendered != true || layer.mask?.disabled == true, let range = layer.vectorMask, let coverage = try vectorMask(range, layer: layer.name) {
            let width = self.width, density = layer.vectorDensity
            masks.append { x, y in weakened(coverage[y * width + x], density) }
        }
        return masks
    }

    /// A vector mask (`vmsk`/`vsms`): version, flags (bit 0 inverted, bit 1 unlinked, bit 2
    /// off), then 26-byte path records whose points are 8.24 fractions of the document's height
    /// and width. Subpaths are combined in order as Photoshop's path operations say (0 exclude,
    /// 1 combine, 2 subtract, 3 intersect; -1 joins the previous shape), on a canvas that
    /// starts empty (or full, by the initial fill record, when there is no subpath). Nil when off.
    func vectorMask(_ range: Range<Int>, layer: String) throws(DeriveError) -> [UInt8]? {
        var r = PSDReader(bytes: bytes, offset: range.lowerBound, limit: range.upperBound)
        _ = try r.u32()
        let flags = try r.u32()
        guard flags & 0x04 == 0 else { return nil }
        func fixed(_ at: Int) -> Double {
            Double(Int32(truncatingIfNeeded: PSDReader.u32(bytes, at) ?? 0)) / Double(1 << 24)
        }
        func point(_ at: Int) -> ClippingPath.Point { ClippingPath.Point(x: fixed(at + 4), y: fixed(at)) }
        var shapes: [(operation: Int, subpaths: [ClippingPath.Subpath])] = []
        var initialFill = false
        var remaining = 0
        var record = r.offset
        while record + 26 <= range.upperBound {
            let selector = Int(bytes[record]) << 8 | Int(bytes[record + 1])
            switch selector {
            case 0, 3:
                remaining = Int(bytes[record + 2]) << 8 | Int(bytes[record + 3])
                let operation = Int(Int16(bitPattern: UInt16(bytes[record + 4]) << 8 | UInt16(bytes[record + 5])))
                let subpath = ClippingPath.Subpath(closed: selector == 0, knots: [])
                if operation == -1, !shapes.isEmpty {
                    shapes[shapes.count - 1].subpaths.append(subpath)
                } else {
                    shapes.append((operation, [subpath]))
                }
            case 1, 2, 4, 5:
                if remaining > 0, !shapes.isEmpty, !shapes[shapes.count - 1].subpaths.isEmpty {
                    let knot = ClippingPath.Knot(before: point(record + 2), anchor: point(record + 10), after: point(record + 18))
                    let last = shapes.count - 1
                    shapes[last].subpaths[shapes[last].subpaths.count - 1].knots.append(knot)
                    remaining -= 1
                }
            case 8:
                initialFill = (Int(bytes[record + 2]) << 8 | Int(bytes[record + 3])) == 1
            default:
                break
            }
            record += 26
        }
        // One byte a pixel, combined in integers (m and p in 0...255), so the mask costs what
        // the canvas's alpha does.
        let count = width * height
        var mask = [UInt8](repeating: initialFill && shapes.isEmpty ? 255 : 0, count: count)
        for (index, shape) in shapes.enumerated() {
            let path = ClippingPath(id: 0, name: layer, subpaths: shape.subpaths.filter { !$0.knots.isEmpty })
            let plane: [UInt8]
            do throws(DeriveError) {
                plane = try PathRaster.mask(path, width: width, height: height, evenOdd: false)
            } catch {
                throw DeriveError(error.code, "layer \(Quoted(layer))'s vector mask is too intricate to fill")
            }
            if index == 0 && (shape.operation == 2 || shape.operation == 3) {
                for i in 0..<count { mask[i] = 255 - mask[i] }
            }
            for i in 0..<count {
                let m = Int(mask[i]), p = Int(plane[i])
                let product = (m * p + 127) / 255
                let value = switch shape.operation {
                case 0: m + p - 2 * product          // exclude
                case 2: m - min(m, p)                // subtract
                case 3: product                      // intersect
                default: m + p - product             // combine
                }
                mask[i] = UInt8(max(0, min(255, value)))
            }
        }
        if flags & 0x01 != 0 {
            for i in 0..<count { mask[i] = 255 - mask[i] }
        }
        return mask
    }

    /// A layer's channels decoded, by channel ID (a fill layer's colour channels made from its
    /// colour, opaque), each `width × height` bytes. Colour channels
    /// the mode needs must be there; masks are not decoded.
    func channels(of layer: Layer) throws(DeriveError) -> [Int: [UInt8]] {
        let needed = colorMode == 3 ? [0, 1, 2] : [0]
        var planes: [Int: [UInt8]] = [:]
        if let fill = layer.fill {
            let size = layer.width * layer.height
            let red = Int(fill[0]), green = Int(fill[1]), blue = Int(fill[2])
            let grey = UInt8((red * 299 + green * 587 + blue * 114 + 500) / 1000)
            let values: [UInt8] = colorMode == 3 ? fill : [grey]
            for (id, value) in zip(needed, values) {
                planes[id] = [UInt8](repeating: value, count: size)
            }
            if let mask = layer.mask, !mask.disabled, let channel = layer.channels.first(where: { $0.id == mask.channel }) {
                planes[mask.channel] = try decode(channel, rows: mask.bottom - mask.top, columns: mask.right - mask.left, layer: layer.name)
            }
            return planes
        }
        for channel in layer.channels where channel.id >= -1 {
            planes[channel.id] = try decode(channel, rows: layer.height, columns: layer.width, layer: layer.name)
        }
        // The layer mask has its own rectangle.
        if let mask = layer.mask, !mask.disabled, let channel = layer.channels.first(where: { $0.id == mask.channel }) {
            planes[mask.channel] = try decode(channel, rows: mask.bottom - mask.top, columns: mask.right - mask.left, layer: layer.name)
        }
        for id in needed where planes[id] == nil {
            throw Self.corrupt("layer \(Quoted(layer.name)) has no channel \(id)")
        }
        return planes
    }

    func decode(_ channel: (id: Int, offset: Int, length: Int), rows: Int, columns: Int, layer: String) throws(DeriveError) -> [UInt8] {
        var r = PSDReader(bytes: bytes, offset: channel.offset, limit: channel.offset + channel.length)
        let compression = try r.u16()
        let size = rows * columns
        guard size <= maxPixels else {
            throw DeriveError(.limitExceeded, "layer \(Quoted(layer)) is \(columns)x\(rows) pixels; the limit is \(maxPixels) pixels (DERIVE_MAX_INPUT_PIXELS)")
        }
        switch compression {
        case 0:
            guard channel.length - 2 >= size else { throw Self.corrupt("layer \(Quoted(layer))'s raw channel holds \(channel.length - 2) bytes, not \(size)") }
            return try r.bytes(size)
        case 1:
            // Every row's byte count, then the rows, each PackBits.
            let countSize = version == 2 ? 4 : 2
            guard rows * countSize <= channel.length - 2 else { throw Self.corrupt("layer \(Quoted(layer))'s RLE row table is longer than its channel") }
            var counts: [Int] = []
            counts.reserveCapacity(rows)
            for _ in 0..<rows { counts.append(version == 2 ? try r.u32() : try r.u16()) }
            // PackBits expands 2 bytes to at most 128: a channel whose rows could not fill the
            // layer is refused before the layer is allocated.
            guard size <= (channel.length - 2) * 64 else { throw Self.corrupt("layer \(Quoted(layer))'s RLE channel is too short for \(columns)x\(rows) pixels") }
            var out = [UInt8](repeating: 0, count: size)
            for row in 0..<rows {
                let rowEnd = try r.end(of: counts[row])
                guard rowEnd <= r.limit else { throw Self.corrupt("layer \(Quoted(layer))'s RLE rows run past its channel") }
                var o = row * columns
                let limit = o + columns
                while r.offset < rowEnd {
                    let n = Int(Int8(bitPattern: bytes[r.offset]))
                    r.offset += 1
                    if n >= 0 {
                        guard r.offset + n + 1 <= rowEnd, o + n + 1 <= limit else { throw Self.corrupt("layer \(Quoted(layer))'s RLE row \(row + 1) is longer than the layer") }
                        for k in 0...n { out[o + k] = bytes[r.offset + k] }
                        r.offset += n + 1
                        o += n + 1
                    } else if n != -128 {
                        let run = 1 - n
                        guard r.offset < rowEnd, o + run <= limit else { throw Self.corrupt("layer \(Quoted(layer))'s RLE row \(row + 1) is longer than the layer") }
                        let value = bytes[r.offset]
                        r.offset += 1
                        for k in 0..<run { out[o + k] = value }
                        o += run
                    }
                }
                guard o == limit else { throw Self.corrupt("layer \(Quoted(layer))'s RLE row \(row + 1) is shorter than the layer") }
                r.offset = rowEnd
            }
            return out
        case 2, 3:
            throw DeriveError(.unsupportedFormat, "layer \(Quoted(layer)) is ZIP-compressed; Derive reads raw and RLE (PackBits) layer channels")
        default:
            throw Self.corrupt("layer \(Quoted(layer)) has channel compression \(compression)")
        }
    }
}

/// Bounds-checked big-endian reads; every failure is a `corruptImage` error.
struct PSDReader {
    let bytes: [UInt8]
    var offset: Int
    var limit: Int

    init(bytes: [UInt8], offset: Int = 0, limit: Int? = nil) {
        self.bytes = bytes
        self.offset = offset
        self.limit = min(limit ?? bytes.count, bytes.count)
    }

    static func truncated() -> DeriveError { PhotoshopDocument.corrupt("it ends before its structure does (truncated)") }

    mutating func need(_ n: Int) throws(DeriveError) {
        guard n >= 0, offset <= limit, n <= limit - offset else { throw Self.truncated() }
    }
    mutating func u8() throws(DeriveError) -> Int { try need(1); defer { offset += 1 }; return Int(bytes[offset]) }
    mutating func u16() throws(DeriveError) -> Int { try need(2); defer { offset += 2 }; return Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) }
    mutating func u32() throws(DeriveError) -> Int {
        try need(4); defer { offset += 4 }
        return Self.u32(bytes, offset)!
    }
    mutating func i32() throws(DeriveError) -> Int { Int(Int32(truncatingIfNeeded: try u32())) }
    mutating func u64() throws(DeriveError) -> Int {
        let high = try u32(), low = try u32()
        // Lengths beyond 2^40 are no real file's: refused before they are used in arithmetic.
        guard high < 256 else { throw PhotoshopDocument.corrupt("it declares a length of more than a terabyte") }
        return high << 32 | low
    }
    mutating func fourCC() throws(DeriveError) -> String { String(decoding: try bytes(4), as: UTF8.self) }
    mutating func bytes(_ n: Int) throws(DeriveError) -> [UInt8] { try need(n); defer { offset += n }; return Array(bytes[offset..<(offset + n)]) }
    mutating func skip(_ n: Int) throws(DeriveError) { try need(n); offset += n }
    /// Skips a block that starts with its 4-byte length.
    mutating func skipBlock() throws(DeriveError) {
        let n = try u32()
        try skip(n)
    }
    /// Where a block of `length` bytes starting here ends; it must end within the limit.
    func end(of length: Int) throws(DeriveError) -> Int {
        guard length >= 0, offset <= limit, length <= limit - offset else { throw Self.truncated() }
        return offset + length
    }
    static func u32(_ bytes: [UInt8], _ i: Int) -> Int? {
        guard i >= 0, i + 4 <= bytes.count else { return nil }
        return Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
    }
}

extension PSDSelection {
    /// The part of a Photoshop document `source` that an output is made from, as a source of
    /// its own: the named layers composited (a PNG, which libvips' ordinary loader reads), or
    /// the embedded file's own bytes (which then go through the engine's format sniffing,
    /// blocked loaders and limits like any source). The document's bytes and canvas are checked
    /// against `limits` before anything is decoded. Keeps the source's location and hash.
    public func source(from source: SourceImage, limits: SourceLimits) throws(DeriveError) -> SourceImage {
        try limits.check(byteCount: source.bytes.count)
        guard PhotoshopDocument.isPhotoshop(source.bytes) else {
            let format = ImageSniffer.format(of: source.bytes).map { "a \($0.rawValue.uppercased()) file" } ?? "not an image format Derive recognises"
            throw DeriveError(.invalidJob, "pg_\(cloudinaryText) selects layers or smart objects of a Photoshop document (PSD or PSB); the source is \(format)")
        }
        let document = try PhotoshopDocument(source.bytes, maxPixels: limits.maxInputPixels)
        var selected = source
        switch self {
        case .layers(let names):
            // The composite reaches libvips as an uncompressed PNG: refused before it is made
            // when that file would be past the byte limit the engine checks sources against.
            let pngBytes = document.width * document.height * 4 + document.height
            guard pngBytes <= limits.maxInputBytes else {
                throw DeriveError(.limitExceeded, "pg_\(cloudinaryText): the layers of a \(document.width)x\(document.height) document composite to \(pngBytes) bytes of RGBA; the limit is \(limits.maxInputBytes) (DERIVE_MAX_INPUT_BYTES)")
            }
            let rgba = try document.composite(document.layers(named: names))
            selected.bytes = StoredPNG.rgba(rgba, width: document.width, height: document.height)
        case .embedded(let number):
            selected.bytes = try document.embeddedFile(number: number).bytes
        case .embeddedNamed(let names):
            // The first name the document has; if none, the error names the first.
            var lastError: DeriveError?
            for name in names {
                do throws(DeriveError) {
                    selected.bytes = try document.embeddedFile(name: name).bytes
                    lastError = nil
                    break
                } catch {
                    if lastError == nil { lastError = error }
                }
            }
            if let lastError { throw lastError }
        }
        return selected
    }
}

extension ResolvedJob {
    /// `pg_name:` / `pg_embedded:`: the job decodes one source, so every output must select the
    /// same part of the document (or none).
    public func psdSelection() throws(DeriveError) -> PSDSelection? {
        let selections = Set(outputs.map(\.encoding.psd))
        guard selections.count <= 1 else {
            let written = selections.map { $0.map { "pg_" + $0.cloudinaryText } ?? "the whole source" }.sorted().joined(separator: ", ")
            throw DeriveError(.invalidJob, "the outputs select different parts of the Photoshop document (\(written)); a job decodes one source: give each selection a job of its own")
        }
        return selections.first ?? nil
    }
}
