@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `e_tint` through several colours and with `equalize` (issue 30): Cloudinary's SDKs write
/// "equalize:amount:color1:color1_position:color2:…", up to ten colours. The string and JSON
/// forms, round trips, the gradient's table, and the refusals.
@Suite struct TintGradientLanguageTests {
    static let red = Color(red: 255, green: 0, blue: 0), green = Color(red: 0, green: 128, blue: 0)
    static let blue = Color(red: 0, green: 0, blue: 255), yellow = Color(red: 255, green: 255, blue: 0)

    @Test(arguments: [
        // The SDK tests' strings (cloudinary_php's tint(40, 'red', 'blue'), js-url-gen's tint('equalize:80:red:blue:yellow')).
        ("e_tint:100:green:red", #"{"tint": {"amount": 100, "colors": ["green", "red"]}}"#,
         Effect.tintGradient(amount: 100, gradient: TintGradient(colors: [green, red]))),
        ("e_tint:equalize:40:red:blue", #"{"tint": {"amount": 40, "colors": ["red", "blue"], "equalize": true}}"#,
         .tintGradient(amount: 40, gradient: TintGradient(colors: [red, blue], equalize: true))),
        ("e_tint:equalize:80:red:20p:blue:yellow:90p", #"{"tint": {"amount": 80, "colors": ["red", "blue", "yellow"], "positions": [20, null, 90], "equalize": true}}"#,
         .tintGradient(amount: 80, gradient: TintGradient(colors: [red, blue, yellow], positions: [20, nil, 90], equalize: true))),
        // One colour with equalize, as written in the wild (e_tint:equalize:100:black).
        ("e_tint:equalize:15:yellow", #"{"tint": {"amount": 15, "colors": ["yellow"], "equalize": true}}"#,
         .tintGradient(amount: 15, gradient: TintGradient(colors: [yellow], equalize: true))),
        ("e_tint:equalize", #"{"tint": {"equalize": true}}"#, .tintGradient(amount: 60, gradient: TintGradient(colors: [.blue], equalize: true))),
        ("e_tint:50:rgb:ff0000:0000ff", ##"{"tint": {"amount": 50, "colors": ["#ff0000", "#0000ff"]}}"##,
         .tintGradient(amount: 50, gradient: TintGradient(colors: [red, blue]))),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    /// In JSON too: a list of one colour without a position or equalize is the plain tint, so
    /// the JSON form and its string (e_tint:40:red) are one step with one identity.
    @Test func oneColourWithoutEqualizeIsStillThePlainTint() throws {
        #expect(try ToneEffectTests.step("e_tint:40:red") == .effect(.tint(amount: 40, color: Self.red)))
        #expect(try ToneEffectTests.step(json: #"{"tint": {"amount": 40, "colors": ["red"]}}"#) == .effect(.tint(amount: 40, color: Self.red)))
        #expect(try ToneEffectTests.step(json: #"{"tint": {"amount": 40, "colors": ["red"], "positions": [50]}}"#)
                == .effect(.tintGradient(amount: 40, gradient: TintGradient(colors: [Self.red], positions: [50]))))
    }

    @Test(arguments: [
        ("e_tint:100:green:red", "e_tint:100:green:red"),
        ("e_tint:equalize:80:red:20p:blue:yellow:90p", "e_tint:equalize:80:red:20p:blue:yellow:90p"),
        ("e_tint:50:rgb:ff0000:rgb:123456", "e_tint:50:red:rgb:123456"),
        ("c_scale,w_300/e_tint:equalize:15:yellow", "c_scale,w_300/e_tint:equalize:15:yellow"),
        ("e_tint:0:red:blue", ""),
    ])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test(arguments: [
        ("e_tint:equalize:80:red:50p:blue:60p:yellow:40p",
         "e_tint:equalize:80:red:50p:blue:60p:yellow:40p: known to Cloudinary, not supported by Derive: the colours' positions go back (50p, 60p, 40p); Cloudinary does not document what positions out of order mean, so Derive reads them only in order (red:20p:blue:60p)"),
        ("e_tint:80:red:150p:blue", "e_tint:80:red:150p:blue: unknown to Cloudinary (a colour's position must be between 0p and 100p, got 150p)"),
        ("e_tint:80:red:blue:grean", #"e_tint:80:red:blue:grean: unknown to Cloudinary (no colour "grean"); did you mean "green"?"#),
        ("e_tint:80:red:blue:red:blue:red:blue:red:blue:red:blue:red",
         "e_tint:80:red:blue:red:blue:red:blue:red:blue:red:blue:red: unknown to Cloudinary (e_tint takes up to 10 colours, got 11)"),
        ("e_tint:150:red:blue", "e_tint:150:red:blue: out of Cloudinary's range (e_tint amount must be between 0 and 100, got 150)"),
    ])
    func refusals(text: String, reason: String) {
        expectRefusal(text, reason: reason)
    }

    @Test(arguments: [
        (#"{"tint": {"colors": []}}"#, "[0].tint.colors: must hold 1 to 10 colours, got 0"),
        (#"{"tint": {"colors": ["red", "blue"], "positions": [10]}}"#, "[0].tint.positions: must hold one position per colour (2), got 1"),
        (#"{"tint": {"colors": ["red", "blue"], "positions": [60, 10]}}"#, "[0].tint.positions: the colours' positions go back (60p, 10p)"),
    ])
    func jsonRefusals(json: String, reason: String) {
        let error = #expect(throws: ValidationError.self) { try TransformationInput.parse(#"[\#(json)]"#) }
        #expect(error?.issues.map(\.description).contains(reason) == true, "\(error?.issues.map(\.description) ?? [])")
    }

    /// The table runs from the first colour at black to the last at white; positions hold a
    /// colour flat before the first and after the last, and interpolate between.
    @Test func theTableRunsThroughTheColoursByLuminance() {
        let table = TintGradient(colors: [Self.red, Self.blue]).lookupTable()
        #expect(table.count == 768)
        #expect(Array(table[0..<3]) == [255, 0, 0])
        #expect(Array(table[765..<768]) == [0, 0, 255])
        #expect(Array(table[384..<387]) == [127, 0, 128])
        let placed = TintGradient(colors: [Self.red, Self.blue], positions: [25, 75]).lookupTable()
        for i in [0, 30, 63] { #expect(Array(placed[(i * 3)..<(i * 3 + 3)]) == [255, 0, 0], "\(i)") }
        for i in [192, 230, 255] { #expect(Array(placed[(i * 3)..<(i * 3 + 3)]) == [0, 0, 255], "\(i)") }
        // A missing position sits evenly between its neighbours: 20, (55), 90.
        #expect(TintGradient(colors: [Self.red, Self.blue, Self.yellow], positions: [20, nil, 90]).stops.map(\.position) == [20, 55, 90])
        // One colour: from black to it, as the plain tint.
        let one = TintGradient(colors: [Self.yellow]).lookupTable()
        #expect(Array(one[0..<3]) == [0, 0, 0] && Array(one[765..<768]) == [255, 255, 0])
    }
}

/// `cs_cmyk` and `cs_keep_cmyk` in strings and JSON, and the formats that hold CMYK.
@Suite struct CMYKLanguageTests {
    @Test(arguments: [("cs_cmyk", "cs_cmyk"), ("f_jpg,cs_keep_cmyk", "f_jpeg,cs_keep_cmyk"), ("c_scale,w_100/f_tiff,cs_cmyk", "c_scale,w_100/f_tiff,cs_cmyk")])
    func roundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    @Test func jsonSaysTheSame() throws {
        let json = try canonical(json: #"{"source": "https://x/a.jpg", "outputs": [{"name": "default", "format": "jpeg", "colorSpace": "cmyk", "chain": []}]}"#)
        #expect(json.identity == (try canonical(string: "f_jpg,cs_cmyk")).identity)
        #expect(throws: ValidationError.self) { try TransformationInput.parse(#"{"source": "https://x/a.jpg", "outputs": [{"name": "a", "chain": [], "colorSpace": "lab"}]}"#) }
    }

    static func plan(_ text: String, source: SourceFacts = SourceFacts(format: .jpeg, width: 400, height: 300)) throws -> Plan {
        try Planner().plan(JobResolver().resolve(TransformationInput.parse(text)), source: source)
    }

    @Test(arguments: ["f_png,cs_cmyk", "f_auto,cs_cmyk", "f_webp,cs_cmyk"])
    func cmykNeedsJPEGOrTIFF(text: String) {
        #expect(throws: ValidationError.self) { try Self.plan(text) }
        do { _ = try Self.plan(text) } catch let error as ValidationError {
            #expect(error.issues.first?.reason.contains("known to Cloudinary, not supported by Derive: only JPEG and TIFF hold CMYK") == true, "\(error.issues)")
        } catch {}
    }

    @Test func keepResolvesOnTheSource() throws {
        var cmyk = SourceFacts(format: .jpeg, width: 400, height: 300)
        cmyk.isCMYK = true
        #expect(try Self.plan("cs_keep_cmyk", source: cmyk).outputs[0].encoding.cmyk == .convert)
        let rgb = try Self.plan("cs_keep_cmyk")
        #expect(rgb.outputs[0].encoding.cmyk == nil)
        #expect(rgb.outputs[0].notes.contains { $0.contains("the source is not CMYK") })
        #expect(try Self.plan("f_png,cs_keep_cmyk", source: cmyk).outputs[0].encoding.cmyk == nil)
        #expect(try Self.plan("cs_cmyk").outputs[0].encoding.cmyk == .convert)
    }
}
