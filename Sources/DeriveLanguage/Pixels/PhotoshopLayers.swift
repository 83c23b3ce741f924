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
/// canvas and each layer against the caller's pixel limit: a malformed or truncated file is a
/// `corruptImage` error, never a crash. What a composite holds at once is the canvas (4 bytes a
/// pixel), the layer being drawn (its planes cropped to the canvas, at most 5 bytes a canvas
/// pixel) and the current clipping base's alpha (1 byte a canvas pixel); a group as a clipping
/// base adds those again a level down, at most `maxClippingDepth` levels. What it does (every
/// decode, pass and vector-mask shape) is charged against `maxWork`, about 1.5 s of one core:
/// past it the composite stops with `limitExceeded`.
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
        /// Its position in `layers` (a clipped layer's base and a group's members are found by it).
        public internal(set) var index = 0

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
        for (index, (layer, lengths)) in records.enumerated() {
            var layer = layer
            layer.index = index
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

    /// Where the value of a descriptor's item `key` of `type` starts, with at least `size` bytes
    /// after it: found by its key (a 4-character key is stored after a length of 0 or 4) and
    /// type rather than by parsing the whole descriptor, which nothing else here needs.
    static func descriptorValue(_ b: [UInt8], key: String, type: String, size: Int) -> Int? {
        let needle = Array(key.utf8) + Array(type.utf8)
        guard b.count >= needle.count + 4 + size else { return nil }
        for i in 4...(b.count - needle.count - size) where b[i..<(i + needle.count)].elementsEqual(needle) {
            guard b[i - 4] == 0, b[i - 3] == 0, b[i - 2] == 0, b[i - 1] == 0 || b[i - 1] == 4 else { continue }
            return i + needle.count
        }
        return nil
    }

    /// A descriptor's text item `key` (`Idnt` in `SoLd`): a count of UTF-16 units, then them.
    static func descriptorText(_ slice: ArraySlice<UInt8>, key: String) -> String? {
        let b = Array(slice)
        guard let start = descriptorValue(b, key: key, type: "TEXT", size: 4) else { return nil }
        var r = PSDReader(bytes: b, offset: start)
        guard let units = try? r.u32(), units * 2 <= b.count - r.offset else { return nil }
        var utf16: [UInt16] = []
        for _ in 0..<units { utf16.append(UInt16((try? r.u16()) ?? 0)) }
        while utf16.last == 0 { utf16.removeLast() }
        return String(decoding: utf16, as: UTF16.self)
    }

    /// A descriptor's number item `key` (`Rd  ` in `SoCo`'s colour): an 8-byte IEEE double.
    static func descriptorDouble(_ slice: ArraySlice<UInt8>, key: String) -> Double? {
        let b = Array(slice)
        guard let start = descriptorValue(b, key: key, type: "doub", size: 8) else { return nil }
        var bits: UInt64 = 0
        for k in 0..<8 { bits = bits << 8 | UInt64(b[start + k]) }
        let value = Double(bitPattern: bits)
        return value.isFinite ? value : nil
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
    /// hides inside it (a hidden layer, and everything inside a hidden group, however deep).
    func members(ofGroupAt index: Int) -> Set<Int> {
        var members = Set<Int>()
        var depth = 0
        // The depth of the outermost hidden group the walk is inside, if any.
        var hiddenFrom: Int?
        var i = index - 1
        while i >= 0 {
            // Walking down, a nested group's opening record comes before its members and its
            // end marker after them.
            if layers[i].isGroup {
                depth += 1
                if hiddenFrom == nil && layers[i].hidden { hiddenFrom = depth }
            }
            if layers[i].isGroupEnd {
                if depth == 0 { break }
                if hiddenFrom == depth { hiddenFrom = nil }
                depth -= 1
            } else if hiddenFrom == nil && !layers[i].hidden {
                members.insert(i)
            }
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
        var work = 0
        return try composite(selected, work: &work)
    }

    /// The same, adding to `work` what it cost (the units `maxWork` bounds).
    func composite(_ selected: [Layer], work: inout Int) throws(DeriveError) -> [UInt8] {
        let named = Set(selected.map(\.index))
        return try composite(named.sorted(), named: named, depth: 0, work: &work)
    }

    /// What a composite may cost in all, in byte operations: every channel row decoded (its
    /// compressed bytes walked and its pixels written), every plane made and every pass over
    /// one (masks, each shape of a vector mask, opacity, clipping, drawing), every canvas. A file
    /// of many large layers, clipping groups or intricate masks fails with `limit_exceeded`
    /// instead of running for minutes: the bound is about 1.5 s of one core in a release build
    /// (Benchmarks/RESULTS.md, the PSD section).
    var maxWork = 1_000_000_000

    /// Groups composited as clipping bases nest at most this deep (each level holds a canvas
    /// and a base's alpha).
    static let maxClippingDepth = 4

    func charge(_ units: Int, _ work: inout Int) throws(DeriveError) {
        work += units
        guard work <= maxWork else {
            throw DeriveError(.limitExceeded, "pg_name: the selected layers of this \(width)x\(height) document cost more than \(maxWork) pixel operations to decode and composite (many large layers, clipping groups or masks)")
        }
    }

    /// A part of the canvas and one byte a pixel over it, row by row (a layer's alpha, or a
    /// clipping base's). Empty when nothing is there.
    struct Region {
        var left = 0, top = 0, right = 0, bottom = 0
        var pixels: [UInt8] = []
        var width: Int { right - left }
    }

    /// A layer ready to draw, cropped to the canvas: its colour planes over `area` (one for a
    /// greyscale document) and its alpha there (transparency × masks × opacity).
    struct Drawn {
        var area: Region
        var colour: [[UInt8]]
    }

    /// `indices` composited in order. Holds at once: this canvas, the layer being drawn (its
    /// planes cropped to the canvas) and the alpha of the clipping base of the layers being
    /// drawn (the base's clipped layers follow it, so only the current one is kept); a group
    /// as a base adds a canvas a level deeper, at most `maxClippingDepth` levels.
    func composite(_ indices: [Int], named: Set<Int>, depth: Int, work: inout Int) throws(DeriveError) -> [UInt8] {
        try charge(width * height, &work)
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var base: (index: Int, alpha: Region)?
        for index in indices {
            let layer = layers[index]
            guard !layer.isGroup, !layer.isGroupEnd else { continue }
            try charge(1, &work)
            var drawn = try self.drawn(index, work: &work)
            // A clipped layer shows only where its base layer is (the nearest layer below it
            // that is not clipped, in the same group), named or not, with the base's opacity.
            if layer.clipped, let baseIndex = self.base(of: index), drawn != nil {
                if base?.index != baseIndex {
                    base = nil
                    base = (baseIndex, try baseAlpha(baseIndex, named: named, depth: depth, work: &work))
                }
                try clip(&drawn!.area, to: base!.alpha, work: &work)
            } else if !layer.clipped {
                base = nil
                if index + 1 < layers.count, layers[index + 1].clipped {
                    // The base of the clipped layers above it: its alpha as drawn, kept for them.
                    base = (index, drawn?.area ?? Region())
                }
            }
            if let drawn { try draw(drawn, on: &canvas, work: &work) }
        }
        return canvas
    }

    /// A clipping base's alpha: a layer's as drawn (with its opacity), a group's composited from
    /// its visible layers; nothing when the base is hidden and not named.
    func baseAlpha(_ index: Int, named: Set<Int>, depth: Int, work: inout Int) throws(DeriveError) -> Region {
        let layer = layers[index]
        if layer.hidden && !named.contains(index) { return Region() }
        guard layer.isGroup else { return try drawn(index, work: &work)?.area ?? Region() }
        guard depth < Self.maxClippingDepth else {
            throw DeriveError(.limitExceeded, "pg_name: layers are clipped to groups nested more than \(Self.maxClippingDepth) deep")
        }
        let group = try composite(members(ofGroupAt: index).sorted(), named: named, depth: depth + 1, work: &work)
        try charge(width * height, &work)
        var alpha = [UInt8](repeating: 0, count: width * height)
        group.withUnsafeBufferPointer { g in
            alpha.withUnsafeMutableBufferPointer { a in
                for i in 0..<a.count { a[i] = g[i * 4 + 3] }
            }
        }
        return Region(left: 0, top: 0, right: width, bottom: height, pixels: alpha)
    }

    /// Multiplies `area`'s alpha by `base`'s (zero outside the base).
    func clip(_ area: inout Region, to base: Region, work: inout Int) throws(DeriveError) {
        try charge(area.pixels.count, &work)
        let width = area.width, baseWidth = base.width
        let left = area.left, top = area.top, right = area.right, bottom = area.bottom
        area.pixels.withUnsafeMutableBufferPointer { a in
            base.pixels.withUnsafeBufferPointer { b in
                for y in top..<bottom {
                    let row = (y - top) * width
                    guard y >= base.top, y < base.bottom else {
                        for i in row..<(row + width) { a[i] = 0 }
                        continue
                    }
                    let baseRow = (y - base.top) * baseWidth
                    for x in left..<right {
                        let i = row + x - left
                        if x >= base.left && x < base.right {
                            a[i] = UInt8((Int(a[i]) * Int(b[baseRow + x - base.left]) + 127) / 255)
                        } else {
                            a[i] = 0
                        }
                    }
                }
            }
        }
    }

    /// Source-over of a drawn layer onto the canvas (straight alpha:
    /// out = (c·a + d·da·(1−a)) / outA, rounded).
    func draw(_ drawn: Drawn, on canvas: inout [UInt8], work: inout Int) throws(DeriveError) {
        let area = drawn.area
        try charge(area.pixels.count, &work)
        let canvasWidth = width, width = area.width
        let red = drawn.colour[0], green = drawn.colour[drawn.colour.count > 1 ? 1 : 0], blue = drawn.colour[drawn.colour.count > 2 ? 2 : 0]
        canvas.withUnsafeMutableBufferPointer { c in
            area.pixels.withUnsafeBufferPointer { alpha in
                red.withUnsafeBufferPointer { r in
                    green.withUnsafeBufferPointer { g in
                        blue.withUnsafeBufferPointer { b in
                            for y in area.top..<area.bottom {
                                var ci = (y * canvasWidth + area.left) * 4
                                var i = (y - area.top) * width
                                for _ in 0..<width {
                                    let a = Int(alpha[i])
                                    if a > 0 {
                                        let da = Int(c[ci + 3])
                                        if a == 255 || da == 0 {
                                            c[ci] = r[i]; c[ci + 1] = g[i]; c[ci + 2] = b[i]; c[ci + 3] = UInt8(a)
                                        } else {
                                            let wa = a * 255, wd = da * (255 - a)
                                            let outA255 = wa + wd, half = outA255 / 2
                                            c[ci] = UInt8((Int(r[i]) * wa + Int(c[ci]) * wd + half) / outA255)
                                            c[ci + 1] = UInt8((Int(g[i]) * wa + Int(c[ci + 1]) * wd + half) / outA255)
                                            c[ci + 2] = UInt8((Int(b[i]) * wa + Int(c[ci + 2]) * wd + half) / outA255)
                                            c[ci + 3] = UInt8((outA255 + 127) / 255)
                                        }
                                    }
                                    ci += 4
                                    i += 1
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The layer at `index` ready to draw, cropped to the canvas: only the planes drawn are
    /// decoded (colour, transparency, the layer mask), and only their rows and columns on the
    /// canvas. Nil for a group record or a layer with nothing on the canvas.
    func drawn(_ index: Int, work: inout Int) throws(DeriveError) -> Drawn? {
        var layer = layers[index]
        guard layer.fill != nil || (layer.width > 0 && layer.height > 0), !layer.isGroup, !layer.isGroupEnd else { return nil }
        // A fill layer is its colour over the whole canvas, shaped by its masks.
        if layer.fill != nil { layer = layer.filling(width: width, height: height) }
        var area = Region(left: max(0, layer.left), top: max(0, layer.top), right: min(width, layer.right), bottom: min(height, layer.bottom))
        guard area.right > area.left, area.bottom > area.top else { return nil }
        let count = area.width * (area.bottom - area.top)
        let needed = colorMode == 3 ? [0, 1, 2] : [0]
        var colour: [[UInt8]] = []
        if let fill = layer.fill {
            let red = Int(fill[0]), green = Int(fill[1]), blue = Int(fill[2])
            let grey = UInt8((red * 299 + green * 587 + blue * 114 + 500) / 1000)
            for value in colorMode == 3 ? fill : [grey] {
                try charge(count, &work)
                colour.append([UInt8](repeating: value, count: count))
            }
        } else {
            for id in needed {
                guard let channel = layer.channels.first(where: { $0.id == id }) else {
                    throw Self.corrupt("layer \(Quoted(layer.name)) has no channel \(id)")
                }
                colour.append(try decode(channel, of: layer, crop: area, work: &work))
            }
        }
        try charge(count, &work)
        if layer.fill == nil, let transparency = layer.channels.first(where: { $0.id == -1 }) {
            area.pixels = try decode(transparency, of: layer, crop: area, work: &work)
        } else {
            area.pixels = [UInt8](repeating: 255, count: count)
        }
        try applyMasks(of: layer, to: &area, work: &work)
        if layer.opacity < 255 {
            try charge(count, &work)
            let opacity = layer.opacity
            area.pixels.withUnsafeMutableBufferPointer { a in
                for i in 0..<a.count { a[i] = UInt8((Int(a[i]) * opacity + 127) / 255) }
            }
        }
        return Drawn(area: area, colour: colour)
    }

    /// Multiplies `area`'s alpha by the layer's masks that apply: the layer mask (channel -2
    /// inside its rectangle, its default value outside) unless it is turned off, and the vector
    /// mask unless it is turned off, its subpaths combined by their operations. A density d
    /// weakens a mask m to d·m + (1 − d).
    func applyMasks(of layer: Layer, to area: inout Region, work: inout Int) throws(DeriveError) {
        func weakening(_ density: Int) -> [Int] {
            (0...255).map { density >= 255 ? $0 : ($0 * density + 255 * (255 - density) + 127) / 255 }
        }
        let width = area.width, left = area.left, top = area.top, right = area.right, bottom = area.bottom
        if let mask = layer.mask, !mask.disabled, let channel = layer.channels.first(where: { $0.id == mask.channel }) {
            try charge(area.pixels.count, &work)
            // The mask's rectangle on the layer's area: its plane there, its default value around.
            let inside = Region(left: max(left, mask.left), top: max(top, mask.top), right: min(right, mask.right), bottom: min(bottom, mask.bottom))
            let within = inside.right > inside.left && inside.bottom > inside.top
            var plane: [UInt8] = []
            if within {
                let maskLayer = Layer(name: layer.name, left: mask.left, top: mask.top, right: mask.right, bottom: mask.bottom,
                                      blendMode: layer.blendMode, opacity: 255, hidden: false, section: 0, channels: [])
                plane = try decode(channel, of: maskLayer, crop: inside, work: &work)
            }
            let table = weakening(mask.density), outside = table[Int(mask.outside)], planeWidth = inside.width
            area.pixels.withUnsafeMutableBufferPointer { a in
                plane.withUnsafeBufferPointer { p in
                    for y in top..<bottom {
                        let row = (y - top) * width
                        let rowInside = within && y >= inside.top && y < inside.bottom
                        let from = rowInside ? inside.left : right, to = rowInside ? inside.right : right
                        for x in left..<from { a[row + x - left] = UInt8((Int(a[row + x - left]) * outside + 127) / 255) }
                        if from < to {
                            let planeRow = (y - inside.top) * planeWidth - inside.left
                            for x in from..<to { a[row + x - left] = UInt8((Int(a[row + x - left]) * table[Int(p[planeRow + x])] + 127) / 255) }
                        }
                        for x in to..<right { a[row + x - left] = UInt8((Int(a[row + x - left]) * outside + 127) / 255) }
                    }
                }
            }
        }
        // The real mask (-3), or a mask rendered from the vector mask, holds it already.
        if layer.mask?.channel != -3, layer.mask?.rendered != true || layer.mask?.disabled == true, let range = layer.vectorMask,
           let coverage = try vectorMask(range, layer: layer.name, window: area, work: &work) {
            try charge(area.pixels.count, &work)
            let table = weakening(layer.vectorDensity)
            area.pixels.withUnsafeMutableBufferPointer { a in
                coverage.withUnsafeBufferPointer { c in
                    for i in 0..<a.count { a[i] = UInt8((Int(a[i]) * table[Int(c[i])] + 127) / 255) }
                }
            }
        }
    }

    /// The index of a clipped layer's base: the nearest record below it that is not clipped, a
    /// layer or a group (whose end marker is skipped to reach it); nil when there is none.
    func base(of index: Int) -> Int? {
        var i = index - 1
        while i >= 0 {
            let below = layers[i]
            if below.isGroupEnd {
                // The group this marker ends is the base: its opening record is above the
                // marker, below the clipped layer.
                var depth = 0
                for j in (i + 1)..<index {
                    if layers[j].isGroupEnd { depth += 1 }
                    if layers[j].isGroup {
                        if depth == 0 { return j }
                        depth -= 1
                    }
                }
                return nil   // a marker without its group: a malformed file; drawn unclipped
            }
            if !below.clipped { return i }
            i -= 1
        }
        return nil
    }

    /// A vector mask (`vmsk`/`vsms`) over `window` (a part of the canvas): version, flags (bit 0
    /// inverted, bit 1 unlinked, bit 2 off), then 26-byte path records whose points are 8.24
    /// fractions of the document's height and width. Subpaths are combined in order as
    /// Photoshop's path operations say (0 exclude, 1 combine, 2 subtract, 3 intersect; -1 joins
    /// the previous shape), on a mask that starts empty (or full, by the initial fill record,
    /// when there is no subpath). Each shape is filled over the window and charged to `work`.
    /// Nil when off.
    func vectorMask(_ range: Range<Int>, layer: String, window: Region, work: inout Int) throws(DeriveError) -> [UInt8]? {
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
        // the layer's alpha does.
        let count = window.pixels.isEmpty ? window.width * (window.bottom - window.top) : window.pixels.count
        try charge(count, &work)
        var mask = [UInt8](repeating: initialFill && shapes.isEmpty ? 255 : 0, count: count)
        for (index, shape) in shapes.enumerated() {
            try charge(1, &work)
            let path = ClippingPath(id: 0, name: layer, subpaths: shape.subpaths.filter { $0.knots.count > 1 })
            if index == 0 && (shape.operation == 2 || shape.operation == 3) {
                try charge(count, &work)
                for i in 0..<count { mask[i] = 255 - mask[i] }
            }
            // A shape without a segment covers nothing: combining, excluding or subtracting it
            // leaves the mask as it is, intersecting with it empties it.
            guard !path.subpaths.isEmpty else {
                if shape.operation == 3 {
                    try charge(count, &work)
                    for i in 0..<count { mask[i] = 0 }
                }
                continue
            }
            try charge(2 * count, &work)
            let plane: [UInt8]
            do throws(DeriveError) {
                plane = try PathRaster.mask(path, width: width, height: height, evenOdd: false,
                                            window: (left: window.left, top: window.top, width: window.width, height: window.bottom - window.top))
            } catch {
                throw DeriveError(error.code, "layer \(Quoted(layer))'s vector mask is too intricate to fill")
            }
            let operation = shape.operation
            mask.withUnsafeMutableBufferPointer { mask in
                plane.withUnsafeBufferPointer { plane in
                    for i in 0..<count {
                        let m = Int(mask[i]), p = Int(plane[i])
                        let product = (m * p + 127) / 255
                        let value = switch operation {
                        case 0: m + p - 2 * product          // exclude
                        case 2: m - min(m, p)                // subtract
                        case 3: product                      // intersect
                        default: m + p - product             // combine
                        }
                        mask[i] = UInt8(max(0, min(255, value)))
                    }
                }
            }
        }
        if flags & 0x01 != 0 {
            try charge(count, &work)
            for i in 0..<count { mask[i] = 255 - mask[i] }
        }
        return mask
    }

    /// One channel of `layer` (its rectangle is the channel's: the layer's, or the layer mask's)
    /// decoded over `crop`, a part of that rectangle in document pixels: `crop`'s pixels, row
    /// by row. Raw channels are read there alone; RLE rows above and below are skipped by their
    /// byte counts and each row's runs are walked, only the columns in `crop` written. What it
    /// does is charged to `work`.
    func decode(_ channel: (id: Int, offset: Int, length: Int), of layer: Layer, crop: Region, work: inout Int) throws(DeriveError) -> [UInt8] {
        let rows = layer.height, columns = layer.width, name = layer.name
        var r = PSDReader(bytes: bytes, offset: channel.offset, limit: channel.offset + channel.length)
        let compression = try r.u16()
        let size = rows * columns
        guard size <= maxPixels else {
            throw DeriveError(.limitExceeded, "layer \(Quoted(name)) is \(columns)x\(rows) pixels; the limit is \(maxPixels) pixels (DERIVE_MAX_INPUT_PIXELS)")
        }
        // The crop in the channel's own rows and columns.
        let firstRow = crop.top - layer.top, lastRow = crop.bottom - layer.top
        let firstColumn = crop.left - layer.left, lastColumn = crop.right - layer.left
        let cropWidth = lastColumn - firstColumn
        guard firstRow >= 0, lastRow <= rows, firstColumn >= 0, lastColumn <= columns, cropWidth > 0, lastRow > firstRow else {
            throw Self.corrupt("layer \(Quoted(name))'s channel is read outside its rectangle")
        }
        try charge(cropWidth * (lastRow - firstRow), &work)
        var out = [UInt8](repeating: 0, count: cropWidth * (lastRow - firstRow))
        switch compression {
        case 0:
            guard channel.length - 2 >= size else { throw Self.corrupt("layer \(Quoted(name))'s raw channel holds \(channel.length - 2) bytes, not \(size)") }
            let start = r.offset
            bytes.withUnsafeBufferPointer { b in
                out.withUnsafeMutableBufferPointer { o in
                    for row in firstRow..<lastRow {
                        let from = start + row * columns + firstColumn, to = (row - firstRow) * cropWidth
                        for k in 0..<cropWidth { o[to + k] = b[from + k] }
                    }
                }
            }
            return out
        case 1:
            // Every row's byte count, then the rows, each PackBits.
            let countSize = version == 2 ? 4 : 2
            guard rows * countSize <= channel.length - 2 else { throw Self.corrupt("layer \(Quoted(name))'s RLE row table is longer than its channel") }
            // PackBits expands 2 bytes to at most 128: a channel whose rows could not fill the
            // layer is refused.
            guard size <= (channel.length - 2) * 64 else { throw Self.corrupt("layer \(Quoted(name))'s RLE channel is too short for \(columns)x\(rows) pixels") }
            try charge(rows, &work)
            let table = r.offset
            var rowStart = table + rows * countSize
            // A row's byte count from the table (checked above to lie within the channel).
            func count(of row: Int) throws(DeriveError) -> Int {
                let at = table + row * countSize
                guard at >= 0, at + countSize <= bytes.count else { throw Self.corrupt("layer \(Quoted(name))'s RLE row table runs past the file") }
                return countSize == 4 ? PSDReader.u32(bytes, at) ?? 0 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
            }
            // The rows above the crop, skipped by their counts.
            for row in 0..<firstRow {
                rowStart += try count(of: row)
            }
            for row in firstRow..<lastRow {
                let length = try count(of: row)
                guard rowStart <= r.limit, length <= r.limit - rowStart else { throw Self.corrupt("layer \(Quoted(name))'s RLE rows run past its channel") }
                try charge(length, &work)
                let rowEnd = rowStart + length, base = (row - firstRow) * cropWidth
                let failure: String? = bytes.withUnsafeBufferPointer { b in
                    out.withUnsafeMutableBufferPointer { o in
                        var p = rowStart, x = 0
                        while p < rowEnd {
                            let n = Int(Int8(bitPattern: b[p]))
                            p += 1
                            if n >= 0 {
                                let count = n + 1
                                guard p + count <= rowEnd, x + count <= columns else { return "longer" }
                                let from = max(x, firstColumn), to = min(x + count, lastColumn)
                                if from < to { for k in from..<to { o[base + k - firstColumn] = b[p + k - x] } }
                                p += count
                                x += count
                            } else if n != -128 {
                                let run = 1 - n
                                guard p < rowEnd, x + run <= columns else { return "longer" }
                                let value = b[p]
                                p += 1
                                let from = max(x, firstColumn), to = min(x + run, lastColumn)
                                if from < to { for k in from..<to { o[base + k - firstColumn] = value } }
                                x += run
                            }
                        }
                        return x == columns ? nil : "shorter"
                    }
                }
                if let failure { throw Self.corrupt("layer \(Quoted(name))'s RLE row \(row + 1) is \(failure) than the layer") }
                rowStart = rowEnd
            }
            return out
        case 2, 3:
            throw DeriveError(.unsupportedFormat, "layer \(Quoted(name)) is ZIP-compressed; Derive reads raw and RLE (PackBits) layer channels")
        default:
            throw Self.corrupt("layer \(Quoted(name)) has channel compression \(compression)")
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
        try need(4)
        guard let value = Self.u32(bytes, offset) else { throw Self.truncated() }
        offset += 4
        return value
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
