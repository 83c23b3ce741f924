@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Derive's own PSD layer reader (`pg_name:`, `pg_embedded:`, issue 30) on real Photoshop files
/// from psd-tools' tests (Tests/Fixtures/README.md). The expected pixels are psd-tools 1.26's
/// per-layer render and composite of the same files (Benchmarks/psd/verify.py prints them).
@Suite struct PhotoshopLayersTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/psd/\(name)")))
    }

    static func pixel(_ rgba: [UInt8], width: Int, _ x: Int, _ y: Int) -> [Int] {
        let i = (y * width + x) * 4
        return rgba[i..<(i + 4)].map(Int.init)
    }

    static func close(_ a: [Int], _ b: [Int], tolerance: Int = 1) -> Bool {
        // A transparent pixel's colour is no colour: only its alpha is compared.
        if a[3] == 0 && b[3] == 0 { return true }
        return zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
    }

    /// The bytes are a PNG from its signature to its IEND chunk: nothing cut or added.
    static func wholePNG(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            && bytes.suffix(12).elementsEqual([0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
    }

    @Test func readsLayerNamesBoundsAndUnicodeNames() throws {
        // 2layers.psd's Pascal names are in a Cyrillic code page; its luni blocks name them.
        let two = try PhotoshopDocument(Self.fixture("2layers.psd"), maxPixels: 1 << 20)
        #expect(two.width == 101 && two.height == 55)
        #expect(two.layerNames == ["Фон", "Слой"])
        let top = two.layers[1]
        let bounds: [Int] = [top.left, top.top, top.right, top.bottom]
        #expect(bounds == [8, 4, 93, 50])
        #expect(top.blendMode == "norm" && top.opacity == 255 && !top.hidden)

        // A name outside the BMP (a surrogate pair) in luni; the Pascal name is "?".
        let emoji = try PhotoshopDocument(Self.fixture("layer-name-emoji.psd"), maxPixels: 1 << 20)
        #expect(emoji.layerNames == ["👽"])
        #expect(emoji.layers[0].blendMode == "lddg" && emoji.layers[0].opacity == 128)

        let placed = try PhotoshopDocument(Self.fixture("placedLayer.psd"), maxPixels: 1 << 20)
        #expect(placed.layerNames == ["Background", "linked-png", "linked-psd", "embedded-png"])
        #expect(placed.smartObjects.map(\.name) == ["linked-png", "linked-psd", "embedded-png"])
        #expect(placed.linkedFiles.map(\.name).sorted() == ["1layer.psd", "linked-layer.png", "linked-layer.png"])
    }

    @Test func compositesOneLayerOnATransparentCanvas() throws {
        let doc = try PhotoshopDocument(Self.fixture("2layers.psd"), maxPixels: 1 << 20)
        let rgba = try doc.composite(doc.layers(named: ["Слой"]))
        #expect(rgba.count == 101 * 55 * 4)
        // psd-tools: composite(layer_filter: name == "Слой").
        let expected: [((Int, Int), [Int])] = [
            ((0, 0), [0, 0, 0, 0]), ((50, 27), [242, 244, 193, 42]), ((60, 40), [243, 244, 195, 254]),
            ((59, 11), [242, 243, 194, 38]), ((76, 17), [242, 244, 195, 157]), ((92, 49), [0, 0, 0, 0]),
        ]
        for ((x, y), want) in expected {
            let got = Self.pixel(rgba, width: 101, x, y)
            #expect(Self.close(got, want), "(\(x), \(y)): \(got), psd-tools \(want)")
        }
    }

    @Test func compositesTwoLayersInDocumentOrder() throws {
        let doc = try PhotoshopDocument(Self.fixture("2layers.psd"), maxPixels: 1 << 20)
        // Named top first: composited bottom to top all the same.
        let rgba = try doc.composite(doc.layers(named: ["Слой", "Фон"]))
        let expected: [((Int, Int), [Int])] = [
            ((0, 0), [255, 255, 255, 255]), ((50, 27), [52, 195, 77, 255]), ((20, 10), [68, 186, 15, 255]),
            ((8, 4), [39, 186, 15, 255]), ((60, 40), [242, 243, 194, 255]), ((92, 49), [39, 186, 15, 255]),
        ]
        for ((x, y), want) in expected {
            let got = Self.pixel(rgba, width: 101, x, y)
            #expect(Self.close(got, want), "(\(x), \(y)): \(got), psd-tools \(want)")
        }
        // A smart object layer's own pixels (the placed PSD), with partial transparency.
        let placed = try PhotoshopDocument(Self.fixture("placedLayer.psd"), maxPixels: 1 << 20)
        let layer = try placed.composite(placed.layers(named: ["linked-psd"]))
        for ((x, y), want) in [((0, 0), [0, 0, 0, 0]), ((128, 128), [95, 225, 37, 255]), ((27, 73), [255, 255, 255, 222]), ((100, 100), [15, 186, 55, 255])] {
            let got = Self.pixel(layer, width: 256, x, y)
            #expect(Self.close(got, want), "(\(x), \(y)): \(got), psd-tools \(want)")
        }
    }

    /// A named group brings the layers inside it (psd-tools: composite of the group's members);
    /// the end-of-group markers are not layers.
    @Test func aGroupBringsItsLayers() throws {
        let doc = try PhotoshopDocument(Self.fixture("hidden-groups.psd"), maxPixels: 1 << 20)
        #expect(doc.layerNames == ["Background", "Shape 1", "Group 1", "Shape 2", "Group 2"])
        #expect(doc.layers.first { $0.name == "Group 1" }?.hidden == true)
        let second = try doc.composite(doc.layers(named: ["Group 2"]))
        #expect(Self.close(Self.pixel(second, width: 100, 60, 100), [225, 11, 11, 255]))
        #expect(Self.pixel(second, width: 100, 50, 60)[3] == 0 && Self.pixel(second, width: 100, 0, 0)[3] == 0)
        // The hidden group, named, is drawn with its visible layer.
        let first = try doc.composite(doc.layers(named: ["Group 1"]))
        #expect(Self.close(Self.pixel(first, width: 100, 50, 60), [0, 0, 0, 255]))
        #expect(Self.pixel(first, width: 100, 60, 100)[3] == 0)
        #expect(try doc.layers(named: ["Group 1", "Group 2"]).map(\.name) == ["Shape 1", "Shape 2"])
    }

    /// A PSB (version 2): 8-byte section and channel lengths, 4-byte RLE row counts.
    @Test func readsALargeDocumentFormatFile() throws {
        let doc = try PhotoshopDocument(Self.fixture("1layer.psb"), maxPixels: 1 << 20)
        #expect(doc.version == 2 && doc.width == 101 && doc.height == 55 && doc.layerNames == ["Фон"])
        let rgba = try doc.composite(doc.layers(named: ["Фон"]))
        for ((x, y), want) in [((0, 0), [255, 255, 255, 255]), ((50, 27), [95, 225, 37, 255]), ((90, 50), [39, 186, 15, 255])] {
            let got = Self.pixel(rgba, width: 101, x, y)
            #expect(Self.close(got, want), "(\(x), \(y)): \(got), psd-tools \(want)")
        }
    }

    /// Masks (psd-tools' composite of the same layers): a layer mask (ellipse1), a solid colour
    /// fill layer without pixels shaped by its vector mask and layer mask (ellipse2), a vector
    /// mask alone (ellipse3); and densities, where the layer mask was rendered from the vector
    /// mask and its density lets 25%, 50%, 75% through.
    @Test(arguments: [
        ("masks-2.psd", "ellipse1", [((10, 20), [0, 0, 255, 128]), ((30, 30), [0, 0, 0, 0]), ((5, 5), [0, 0, 0, 0])]),
        ("masks-2.psd", "ellipse2", [((40, 20), [0, 255, 0, 128]), ((32, 32), [0, 255, 0, 128]), ((20, 5), [0, 0, 0, 0]), ((60, 10), [0, 0, 0, 0])]),
        ("masks-2.psd", "ellipse3", [((32, 40), [255, 0, 0, 128]), ((10, 20), [0, 0, 0, 0]), ((50, 60), [0, 0, 0, 0])]),
        ("mask-density-vectormask.psd", "Layer 1", [((20, 3), [255, 0, 0, 255]), ((10, 3), [255, 0, 0, 191]), ((24, 8), [0, 0, 0, 0])]),
        ("mask-density-vectormask.psd", "Layer 1 copy 2", [((20, 20), [255, 0, 0, 255]), ((10, 20), [255, 0, 0, 64])]),
    ])
    func masksShapeTheLayer(file: String, layer: String, expected: [((Int, Int), [Int])]) throws {
        let doc = try PhotoshopDocument(Self.fixture(file), maxPixels: 1 << 20)
        let rgba = try doc.composite(doc.layers(named: [layer]))
        for ((x, y), want) in expected {
            let got = Self.pixel(rgba, width: doc.width, x, y)
            #expect(Self.close(got, want), "\(layer) (\(x), \(y)): \(got), psd-tools \(want)")
        }
    }

    /// A clipped layer shows only where its base is: Rectangle 2 (green, 1..25) is clipped to
    /// Group 1, which holds Rectangle 1 (red, 10..31). With its base, psd-tools' composite; alone,
    /// the same green where the group is and nothing elsewhere (psd-tools draws a clipped layer
    /// only with its base).
    @Test func aClippedLayerShowsOnlyWhereItsBaseIs() throws {
        let doc = try PhotoshopDocument(Self.fixture("clipping-mask3.psd"), maxPixels: 1 << 20)
        #expect(doc.layers.first { $0.name == "Rectangle 2" }?.clipped == true)
        let both = try doc.composite(doc.layers(named: ["Group 1", "Rectangle 2"]))
        for ((x, y), want) in [((4, 4), [0, 0, 0, 0]), ((12, 12), [1, 255, 0, 255]), ((20, 20), [1, 255, 0, 255]), ((28, 28), [255, 0, 0, 255]), ((12, 28), [255, 0, 0, 255])] {
            let got = Self.pixel(both, width: 32, x, y)
            #expect(Self.close(got, want), "(\(x), \(y)): \(got), psd-tools \(want)")
        }
        let alone = try doc.composite(doc.layers(named: ["Rectangle 2"]))
        #expect(Self.pixel(alone, width: 32, 4, 4)[3] == 0)
        #expect(Self.close(Self.pixel(alone, width: 32, 12, 12), [0, 255, 0, 255]))
        #expect(Self.pixel(alone, width: 32, 28, 28)[3] == 0)
    }

    @Test func aLayerTheDocumentDoesNotHaveIsNamedWithTheOnesItHas() throws {
        let doc = try PhotoshopDocument(Self.fixture("placedLayer.psd"), maxPixels: 1 << 20)
        let error = #expect(throws: DeriveError.self) { try doc.layers(named: ["Background", "record_cover"]) }
        #expect(error?.code == .invalidJob)
        #expect(error?.detail.contains("\"record_cover\"") == true)
        #expect(error?.detail.contains("\"Background\", \"linked-png\", \"linked-psd\", \"embedded-png\"") == true)
    }

    @Test func embeddedFilesByNumberAndByName() throws {
        let placed = try PhotoshopDocument(Self.fixture("placedLayer.psd"), maxPixels: 1 << 20)
        // psd-tools: the third smart object embeds linked-layer.png, 17,272 bytes, 64x64.
        let third = try placed.embeddedFile(number: 3)
        #expect(third.name == "linked-layer.png")
        #expect(third.bytes.count == 17_272)
        #expect(Self.wholePNG(third.bytes))
        #expect(ImageSniffer.facts(of: third.bytes).map { [$0.width, $0.height] } == [64, 64])
        #expect(try placed.embeddedFile(name: "embedded-png").bytes == third.bytes)
        // The first two are linked to files outside the document.
        let linked = #expect(throws: DeriveError.self) { try placed.embeddedFile(number: 1) }
        #expect(linked?.code == .invalidJob && linked?.detail.contains("outside") == true)
        let missing = #expect(throws: DeriveError.self) { try placed.embeddedFile(number: 4) }
        #expect(missing?.detail.contains("3 smart objects") == true)
        let unnamed = #expect(throws: DeriveError.self) { try placed.embeddedFile(name: "skyline.jpg") }
        #expect(unnamed?.code == .invalidJob && unnamed?.detail.contains("\"embedded-png\"") == true)

        // Version 7 records (child ID, time, lock byte after the data): A.png, 378 bytes.
        let small = try PhotoshopDocument(Self.fixture("smartobject-layer.psd"), maxPixels: 1 << 20)
        let a = try small.embeddedFile(number: 1)
        #expect(a.name == "A.png" && a.bytes.count == 378)
        #expect(Self.wholePNG(a.bytes))
        #expect(ImageSniffer.facts(of: a.bytes).map { [$0.width, $0.height] } == [32, 32])
        #expect(try small.embeddedFile(name: "A.png").bytes == a.bytes)
    }

    @Test func refusesWhatItDoesNotRead() throws {
        var sixteen = try Self.fixture("2layers.psd")
        sixteen[23] = 16   // depth
        let depth = #expect(throws: DeriveError.self) { try PhotoshopDocument(sixteen, maxPixels: 1 << 20) }
        #expect(depth?.code == .unsupportedFormat && depth?.detail.contains("16-bit") == true)
        var cmyk = try Self.fixture("2layers.psd")
        cmyk[25] = 4
        let mode = #expect(throws: DeriveError.self) { try PhotoshopDocument(cmyk, maxPixels: 1 << 20) }
        #expect(mode?.code == .unsupportedFormat && mode?.detail.contains("CMYK") == true)
        let big = #expect(throws: DeriveError.self) { try PhotoshopDocument(Self.fixture("placedLayer.psd"), maxPixels: 1000) }
        #expect(big?.code == .limitExceeded)
        // The work a composite may do is bounded: what 2layers.psd's two layers cost, it may do,
        // and not one unit less.
        var bounded = try PhotoshopDocument(Self.fixture("2layers.psd"), maxPixels: 1 << 20)
        var cost = 0
        _ = try bounded.composite(bounded.layers(named: ["Фон", "Слой"]), work: &cost)
        // The canvas, then each layer's four channels decoded and its alpha made and drawn.
        #expect(cost > 5_555 + 4 * 5_555 + 4 * 3_910)
        bounded.maxWork = cost - 1
        let work = #expect(throws: DeriveError.self) { try bounded.composite(bounded.layers(named: ["Фон", "Слой"])) }
        #expect(work?.code == .limitExceeded && work?.detail.contains("pixel operations") == true)
        bounded.maxWork = cost
        #expect(try bounded.composite(bounded.layers(named: ["Фон", "Слой"])).count == 101 * 55 * 4)
        // A ZIP-compressed channel (code 2) is refused by name when its layer is drawn.
        var zipped = try Self.fixture("layer-name-emoji.psd")
        let channel = try PhotoshopDocument(zipped, maxPixels: 1 << 20).layers[0].channels[0]
        zipped[channel.offset + 1] = 2
        let zip = try PhotoshopDocument(zipped, maxPixels: 1 << 20)
        let compression = #expect(throws: DeriveError.self) { try zip.composite(zip.layers) }
        #expect(compression?.code == .unsupportedFormat && compression?.detail.contains("ZIP-compressed") == true)
        let png = #expect(throws: DeriveError.self) { try PhotoshopDocument([0x89, 0x50, 0x4E, 0x47, 0, 0, 0, 0], maxPixels: 1000) }
        #expect(png?.code == .invalidJob)
    }

    /// Truncations and byte flips across the whole of every fixture: each either reads (and its
    /// layers composite) or fails with a classified error; none crashes or hangs.
    @Test func truncatedAndFlippedFilesFailClassified() throws {
        let classified: Set<DeriveError.Code> = [.corruptImage, .unsupportedFormat, .limitExceeded, .invalidJob]
        var failures = 0, reads = 0
        func attempt(_ bytes: [UInt8]) {
            do {
                let doc = try PhotoshopDocument(bytes, maxPixels: 1 << 20)
                _ = try doc.composite(doc.layers.filter { !$0.isGroup && !$0.isGroupEnd })
                for n in doc.smartObjects.indices { _ = try? doc.embeddedFile(number: n + 1) }
                reads += 1
            } catch {
                #expect(classified.contains(error.code), "\(error)")
                failures += 1
            }
        }
        var flippedPastStructure = 0
        for name in ["2layers.psd", "layer-name-emoji.psd", "smartobject-layer.psd", "placedLayer.psd", "hidden-groups.psd", "1layer.psb", "masks-2.psd", "mask-density-vectormask.psd", "clipping-mask3.psd"] {
            let bytes = try Self.fixture(name)
            // Truncations spread over the whole file (every one of the first 512 bytes, where the
            // header and the layer records are, then about 1,000 more to the end)...
            let step = max(1, bytes.count / 1_000)
            for cut in Array(0..<min(512, bytes.count)) + Array(stride(from: 512, to: bytes.count, by: step)) {
                attempt(Array(bytes.prefix(cut)))
            }
            // ...and byte flips at random positions anywhere in it (channel data, tagged
            // blocks, the linked files' records at the end).
            var generator = SeededRandom(seed: UInt64(bytes.count))
            for _ in 0..<1_000 {
                var flipped = bytes
                let at = Int(generator.next() % UInt64(bytes.count))
                if at >= 4096 { flippedPastStructure += 1 }
                flipped[at] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
                attempt(flipped)
            }
        }
        #expect(failures > 100 && reads > 0)
        #expect(flippedPastStructure > 5_000)
    }

    // MARK: - Synthetic documents (what the fixtures lack)

    /// A named group leaves out what a hidden group inside it holds, however deep: Outer holds
    /// B and a hidden Inner group around A (Docs/language.md: a named group brings its visible
    /// layers). Inner named is drawn with A, as a named hidden group is.
    @Test func aNamedGroupLeavesOutItsHiddenSubgroups() throws {
        let psd = SyntheticPSD(width: 20, height: 10, layers: [
            .end, .end, .init(name: "A", rect: (0, 0, 10, 10)), .group("Inner", hidden: true),
            .init(name: "B", rect: (10, 0, 20, 10), colour: (0, 255, 0)), .group("Outer"),
        ])
        let doc = try PhotoshopDocument(psd.bytes, maxPixels: 1 << 20)
        #expect(try doc.layers(named: ["Outer"]).map(\.name) == ["B"])
        let outer = try doc.composite(doc.layers(named: ["Outer"]))
        #expect(Self.pixel(outer, width: 20, 5, 5)[3] == 0)
        #expect(Self.pixel(outer, width: 20, 15, 5) == [0, 255, 0, 255])
        let inner = try doc.composite(doc.layers(named: ["Inner"]))
        #expect(Self.pixel(inner, width: 20, 5, 5) == [255, 0, 0, 255])
        #expect(Self.pixel(inner, width: 20, 15, 5)[3] == 0)
        // Two levels down, and a visible group inside the hidden one.
        let deep = SyntheticPSD(width: 20, height: 10, layers: [
            .end, .end, .end, .init(name: "A", rect: (0, 0, 10, 10)), .group("Deepest"), .group("Inner", hidden: true),
            .init(name: "B", rect: (10, 0, 20, 10)), .group("Outer"),
        ])
        #expect(try PhotoshopDocument(deep.bytes, maxPixels: 1 << 20).layers(named: ["Outer"]).map(\.name) == ["B"])
    }

    /// Clipped layers take their base's opacity, and a hidden base (not named) shows none of
    /// them, as in Photoshop ("the layers in the clipping mask have the opacity of the base").
    @Test func clippingTakesTheBasesOpacityAndVisibility() throws {
        let psd = SyntheticPSD(width: 4, height: 4, layers: [
            .init(name: "base", rect: (0, 0, 4, 4), opacity: 128),
            .init(name: "clipped", rect: (0, 0, 4, 4), clipped: true, colour: (0, 255, 0)),
        ])
        let doc = try PhotoshopDocument(psd.bytes, maxPixels: 1 << 20)
        #expect(Self.pixel(try doc.composite(doc.layers(named: ["clipped"])), width: 4, 1, 1) == [0, 255, 0, 128])
        // With the base: red at 128, then green at 128 over it (green weighs 255, red 127).
        let both = Self.pixel(try doc.composite(doc.layers(named: ["base", "clipped"])), width: 4, 1, 1)
        #expect(Self.close(both, [85, 170, 0, 192]), "\(both)")

        let hidden = SyntheticPSD(width: 4, height: 4, layers: [
            .end, .init(name: "base", rect: (0, 0, 4, 4), hidden: true),
            .init(name: "clipped", rect: (0, 0, 4, 4), clipped: true, colour: (0, 255, 0)), .group("G"),
        ])
        let hiddenDoc = try PhotoshopDocument(hidden.bytes, maxPixels: 1 << 20)
        #expect(try hiddenDoc.layers(named: ["G"]).map(\.name) == ["clipped"])
        #expect(Self.pixel(try hiddenDoc.composite(hiddenDoc.layers(named: ["G"])), width: 4, 1, 1)[3] == 0)
        // The hidden base named is drawn, and its clipped layer with it.
        let named = try hiddenDoc.composite(hiddenDoc.layers(named: ["base", "clipped"]))
        #expect(Self.pixel(named, width: 4, 1, 1) == [0, 255, 0, 255])
    }

    /// A clipping base is decoded once for the clipped layers above it, and only its rows and
    /// columns on the canvas; a layer off the canvas is not decoded. (Before: each of the 300
    /// clipped layers decoded the whole 3000×3000 base, 300 × 36 million bytes, uncounted.)
    @Test func aLargeBaseUnderManyClippedLayersCostsItsPartOnTheCanvasOnce() throws {
        var layers: [SyntheticPSD.Layer] = [.init(name: "base", rect: (0, 0, 3000, 3000), rle: true)]
        for i in 0..<300 { layers.append(.init(name: "c\(i)", rect: (0, 0, 1, 1), clipped: true, colour: (0, 0, 255))) }
        layers.append(.init(name: "far", rect: (10_000, 10_000, 12_000, 12_000), rle: true))
        let doc = try PhotoshopDocument(SyntheticPSD(width: 4, height: 4, layers: layers).bytes, maxPixels: 150_000_000)
        var work = 0
        let rgba = try doc.composite(doc.layers, work: &work)
        #expect(Self.pixel(rgba, width: 4, 0, 0) == [0, 0, 255, 255])
        #expect(Self.pixel(rgba, width: 4, 1, 1) == [255, 0, 0, 255])
        // The base: 4 channels × (its 3,000 row counts + 4 rows of 24 runs + 16 pixels) and its
        // passes; each clipped layer a few pixels; the far layer nothing.
        #expect(work < 100_000, "\(work)")
    }

    /// Every shape of a vector mask is charged (each is filled over the layer's part of the
    /// canvas), so a mask of many shapes fails with `limit_exceeded` instead of running on; a
    /// shape without a segment costs nothing to fill.
    @Test func everyShapeOfAVectorMaskIsCharged() throws {
        let triangle: [(y: Double, x: Double)] = [(0.1, 0.1), (0.9, 0.5), (0.1, 0.9)]
        let many = SyntheticPSD(width: 300, height: 300, layers: [
            .init(name: "v", rect: (0, 0, 300, 300), rle: true, vectorMask: SyntheticPSD.vectorMask(shapes: 200, knots: triangle)),
        ])
        var doc = try PhotoshopDocument(many.bytes, maxPixels: 1 << 20)
        doc.maxWork = 10_000_000
        let error = #expect(throws: DeriveError.self) { try doc.composite(doc.layers) }
        #expect(error?.code == .limitExceeded)
        let one = SyntheticPSD(width: 300, height: 300, layers: [
            .init(name: "v", rect: (0, 0, 300, 300), rle: true, vectorMask: SyntheticPSD.vectorMask(shapes: 1, knots: triangle)),
        ])
        let drawn = try PhotoshopDocument(one.bytes, maxPixels: 1 << 20)
        let rgba = try drawn.composite(drawn.layers)
        #expect(Self.pixel(rgba, width: 300, 150, 100) == [255, 0, 0, 255])
        #expect(Self.pixel(rgba, width: 300, 150, 280)[3] == 0)
        // A layer's vector mask over its part of the canvas only: a 10×10 layer with the
        // triangle of a 3000×3000 canvas fills 100 pixels a shape.
        let small = SyntheticPSD(width: 3000, height: 3000, layers: [
            .init(name: "v", rect: (1000, 1000, 1010, 1010), vectorMask: SyntheticPSD.vectorMask(shapes: 50, knots: triangle)),
        ])
        let smallDoc = try PhotoshopDocument(small.bytes, maxPixels: 1 << 24)
        var work = 0
        _ = try smallDoc.composite(smallDoc.layers, work: &work)
        #expect(work < 3000 * 3000 + 100_000, "\(work)")
        let empty = SyntheticPSD(width: 300, height: 300, layers: [
            .init(name: "v", rect: (0, 0, 300, 300), rle: true, vectorMask: SyntheticPSD.vectorMask(shapes: 2_000, knots: [])),
        ])
        let emptyDoc = try PhotoshopDocument(empty.bytes, maxPixels: 1 << 20)
        work = 0
        #expect(Self.pixel(try emptyDoc.composite(emptyDoc.layers, work: &work), width: 300, 150, 150)[3] == 0)
        #expect(work < 2_000_000, "\(work)")
    }

    /// Clipping groups: each group composited as a base costs a canvas, and only the current
    /// base is held; many of them on a large canvas fail with `limit_exceeded` quickly.
    @Test func manyClippingGroupsFailWithinTheBound() throws {
        var layers: [SyntheticPSD.Layer] = []
        for i in 0..<40 { layers += [.end, .group("g\(i)"), .init(name: "c\(i)", rect: (0, 0, 1, 1), clipped: true)] }
        var doc = try PhotoshopDocument(SyntheticPSD(width: 2000, height: 2000, layers: layers).bytes, maxPixels: 1 << 24)
        doc.maxWork = 100_000_000
        let error = #expect(throws: DeriveError.self) { try doc.composite(doc.layers) }
        #expect(error?.code == .limitExceeded)
    }

    /// The composite's PNG reads back to the same pixels: every chunk's CRC, the zlib stream's
    /// stored blocks and Adler-32, and each row (filter 0) byte for byte.
    @Test func storedPNGIsReadBack() throws {
        let doc = try PhotoshopDocument(Self.fixture("2layers.psd"), maxPixels: 1 << 20)
        let rgba = try doc.composite(doc.layers(named: ["Слой"]))
        let png = StoredPNG.rgba(rgba, width: 101, height: 55)
        let facts = ImageSniffer.facts(of: png)
        #expect(facts?.format == .png && facts?.width == 101 && facts?.height == 55 && facts?.hasAlpha == true)
        var at = 8, idat: [UInt8] = [], types: [String] = []
        while at + 12 <= png.count {
            let length = Int(png[at]) << 24 | Int(png[at + 1]) << 16 | Int(png[at + 2]) << 8 | Int(png[at + 3])
            let typed = Array(png[(at + 4)..<(at + 8 + length)])
            let crc = png[(at + 8 + length)..<(at + 12 + length)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            #expect(crc == StoredPNG.crc32(typed))
            let type = String(decoding: typed.prefix(4), as: UTF8.self)
            types.append(type)
            if type == "IDAT" { idat += typed.dropFirst(4) }
            at += 12 + length
        }
        #expect(types == ["IHDR", "IDAT", "IEND"] && at == png.count)
        // zlib: a 2-byte header, stored blocks (final bit, LEN, NLEN), Adler-32.
        var z = 2, filtered: [UInt8] = [], last = false
        while !last {
            last = idat[z] & 1 == 1
            #expect(idat[z] >> 1 == 0, "a stored block")
            let n = Int(idat[z + 1]) | Int(idat[z + 2]) << 8
            #expect(UInt16(n) == ~(UInt16(idat[z + 3]) | UInt16(idat[z + 4]) << 8))
            filtered += idat[(z + 5)..<(z + 5 + n)]
            z += 5 + n
        }
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in filtered { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        #expect(idat[z..<(z + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } == b << 16 | a)
        #expect(z + 4 == idat.count)
        let stride = 101 * 4 + 1
        #expect(filtered.count == stride * 55)
        var pixels: [UInt8] = []
        for row in 0..<55 {
            #expect(filtered[row * stride] == 0)
            pixels += filtered[(row * stride + 1)..<((row + 1) * stride)]
        }
        #expect(pixels == rgba)
    }
}
