@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// Cloudinary's artistic and shape effects (issue 16, item 2): each in its string and JSON
/// forms, its canonical round trip, and the refusals of what Cloudinary would not read either.
@Suite struct ArtisticEffectTests {
    static func art(_ filter: String) -> Effect { .declared(DeclaredEffect(name: "art", values: [.choice(filter)])) }

    @Test(arguments: [
        ("e_art:incognito", #"{"art": "incognito"}"#, ArtisticEffectTests.art("incognito")),
        ("e_art:al_dente", #"{"art": {"filter": "al_dente"}}"#, ArtisticEffectTests.art("al_dente")),
        ("e_art:red_rock", #"{"art": "red_rock"}"#, ArtisticEffectTests.art("red_rock")),
        ("e_art:zorro", #"{"art": {"filter": "zorro"}}"#, ArtisticEffectTests.art("zorro")),
        ("e_cartoonify", #"{"cartoonify": true}"#, .cartoonify(50, colors: .auto)),
        ("e_vectorize", #"{"vectorize": true}"#, .vectorize(10)),
        ("e_vectorize:2", #"{"vectorize": 2}"#, .vectorize(2)),
        ("e_vectorize:30", #"{"vectorize": {"colors": 30}}"#, .vectorize(30)),
        ("e_cartoonify:70", #"{"cartoonify": 70}"#, .cartoonify(70, colors: .auto)),
        ("e_cartoonify:20:bw", #"{"cartoonify": {"lines": 20, "reduction": "bw"}}"#, .cartoonify(20, colors: .blackwhite)),
        ("e_cartoonify:50:80", #"{"cartoonify": {"reduction": 80}}"#, .cartoonify(50, colors: .reduction(80))),
        ("e_cartoonify:0:0", #"{"cartoonify": {"lines": 0, "reduction": 0}}"#, .cartoonify(0, colors: .reduction(0))),
    ])
    func stringAndJSONMeanTheSameEffect(text: String, json: String, effect: Effect) throws {
        #expect(try ToneEffectTests.step(text) == .effect(effect))
        #expect(try ToneEffectTests.step(json: json) == .effect(effect))
    }

    @Test(arguments: ArtFilter.allCases)
    func everyFilterRoundTrips(filter: ArtFilter) throws {
        try expectRoundTrip("e_art:" + filter.rawValue, printed: "e_art:" + filter.rawValue)
    }

    @Test(arguments: [
        ("e_vectorize", "e_vectorize"), ("e_vectorize:10", "e_vectorize"), ("e_vectorize:27", "e_vectorize:27"),
        ("e_cartoonify", "e_cartoonify"), ("e_cartoonify:50", "e_cartoonify"), ("e_cartoonify:70", "e_cartoonify:70"),
        ("e_cartoonify:20:bw", "e_cartoonify:20:bw"), ("e_cartoonify:50:80", "e_cartoonify:50:80"), ("e_cartoonify:0:0", "e_cartoonify:0:0"),
    ])
    func cartoonifyRoundTrips(text: String, printed: String) throws {
        try expectRoundTrip(text, printed: printed)
    }

    /// The colour levels: the line strength decides when no reduction is given, 0 keeps the
    /// colours, 100 leaves two levels, bw at least the levels of reduction 50.
    @Test func vectorizeLevelsKeepToTheColours() {
        #expect([2, 7, 8, 10, 26, 27, 30].map { Vectorize.levels(colors: $0) } == [2, 2, 2, 2, 2, 3, 3])
    }

    @Test func cartoonColourLevels() {
        #expect(CartoonColors.auto.levels(lineStrength: 50) == 9)
        #expect(CartoonColors.auto.levels(lineStrength: 0) == nil)
        #expect(CartoonColors.reduction(0).levels(lineStrength: 100) == nil)
        #expect(CartoonColors.reduction(100).levels(lineStrength: 0) == 2)
        #expect(CartoonColors.reduction(1).levels(lineStrength: 0) == 16)
        #expect(CartoonColors.blackwhite.levels(lineStrength: 10) == 9)
    }

    @Test(arguments: [
        ("e_vectorize:1", "e_vectorize:1: out of Cloudinary's range (e_vectorize colors must be between 2 and 30, got 1)"),
        ("e_vectorize:31", "e_vectorize:31: out of Cloudinary's range (e_vectorize colors must be between 2 and 30, got 31)"),
        ("e_cartoonify:101", "e_cartoonify:101: out of Cloudinary's range (e_cartoonify lines must be between 0 and 100, got 101)"),
        ("e_cartoonify:50:101", "e_cartoonify:50:101: out of Cloudinary's range (e_cartoonify reduction must be between 0 and 100, got 101)"),
        ("e_cartoonify:50:grey", #"e_cartoonify takes a whole-number colour reduction (0 to 100) or bw, got "grey""#),
        ("e_cartoonify:50:50:50", "e_cartoonify takes a line strength and a colour reduction (or bw)"),
        ("e_art", "e_art needs a filter: e_art:<filter>, one of al_dente, athena, audrey, aurora, daguerre, eucalyptus, fes, frost, hairspray, hokusai, incognito, linen, peacock, primavera, quartz, red_rock, refresh, sizzle, sonnet, ukulele, zorro"),
        ("e_art:incognit", #"e_art:incognit: unknown to Cloudinary (no art filter "incognit"); did you mean "incognito"?"#),
        ("e_art:zorro:50", "e_art:zorro:50: unknown to Cloudinary (e_art takes a filter)"),
    ])
    func stringsCloudinaryWouldNotReadAreRefused(text: String, reason: String) {
        #expect(CloudinaryParser().parse(text).issues.map(\.reason) == [reason])
    }

    @Test(arguments: [
        (#"{"cartoonify": {"reduction": "grey"}}"#, #"outputs[0].chain[0].cartoonify.reduction: expected a whole number (0 to 100) or "bw", got string "grey""#),
        (#"{"cartoonify": {"lines": 101}}"#, "outputs[0].chain[0].cartoonify.lines: must be between 0 and 100, got 101"),
        (#"{"cartoonify": {"reduction": -1}}"#, "outputs[0].chain[0].cartoonify.reduction: must be between 0 and 100, got -1"),
        (#"{"vectorize": {"colors": 31}}"#, "outputs[0].chain[0].vectorize.colors: must be between 2 and 30, got 31"),
        (#"{"art": true}"#, #"outputs[0].chain[0].art.filter: is required: one of "al_dente", "athena", "audrey", "aurora", "daguerre", "eucalyptus", "fes", "frost", "hairspray", "hokusai", "incognito", "linen", "peacock", "primavera", "quartz", "red_rock", "refresh", "sizzle", "sonnet", "ukulele", "zorro""#),
        (#"{"art": {}}"#, #"outputs[0].chain[0].art.filter: is required: one of "al_dente", "athena", "audrey", "aurora", "daguerre", "eucalyptus", "fes", "frost", "hairspray", "hokusai", "incognito", "linen", "peacock", "primavera", "quartz", "red_rock", "refresh", "sizzle", "sonnet", "ukulele", "zorro""#),
        (#"{"art": "mona_lisa"}"#, #"outputs[0].chain[0].art.filter: expected one of "al_dente", "athena", "audrey", "aurora", "daguerre", "eucalyptus", "fes", "frost", "hairspray", "hokusai", "incognito", "linen", "peacock", "primavera", "quartz", "red_rock", "refresh", "sizzle", "sonnet", "ukulele", "zorro", got "mona_lisa""#),
    ])
    func jsonCloudinaryWouldNotReadIsRefused(step: String, message: String) {
        expectStepRefused(step, message: message)
    }

    /// The grades as a user would describe them: audrey and daguerre are monochrome (every
    /// channel reads the same mix of the input), incognito and zorro are darker than the
    /// input at mid-grey, linen and fes lighter and flatter, red_rock and sizzle warm, frost cool.
    @Test func gradesLookAsNamed() {
        func apply(_ f: ArtFilter, _ rgb: [Double]) -> [Double] {
            let (m, o) = f.grade
            return (0..<3).map { r in (0..<3).reduce(o[r]) { $0 + m[r][$1] * rgb[$1] } }
        }
        for f in [ArtFilter.audrey, .daguerre] {
            let (m, _) = f.grade
            let normalised = m.map { row in row.map { $0 / row.reduce(0, +) } }
            #expect(normalised.allSatisfy { zip($0, normalised[0]).allSatisfy { abs($0 - $1) < 1e-9 } }, "\(f)")
        }
        let grey = [128.0, 128, 128]
        for f in [ArtFilter.incognito, .zorro] { #expect(apply(f, grey).reduce(0, +) < 3 * 128 - 10, "\(f)") }
        for f in [ArtFilter.linen, .fes] {
            #expect(apply(f, grey).reduce(0, +) > 3 * 128 + 10, "\(f)")
            let spread = apply(f, [230, 230, 230])[1] - apply(f, [25, 25, 25])[1]
            #expect(spread < 205 * 0.9, "\(f): contrast \(spread / 205)")
        }
        for f in [ArtFilter.redRock, .sizzle] { let g = apply(f, grey); #expect(g[0] > g[2] + 20, "\(f)") }
        let frost = apply(.frost, grey)
        #expect(frost[2] > frost[0] + 10)
    }
}
