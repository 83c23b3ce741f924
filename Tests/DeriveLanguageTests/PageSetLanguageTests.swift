@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// `pg_` page ranges and lists: read, printed canonically, and planned as an animation of the
/// pages selected.
@Suite struct PageSetLanguageTests {
    static let animation = SourceFacts(format: .webp, width: 80, height: 80, pages: 9)
    static let document = SourceFacts(format: .tiff, width: 100, height: 50, pages: 3)

    /// String → model → string: the canonical spelling, and the same identity for every
    /// spelling of the same pages in the same order.
    @Test(arguments: [
        ("pg_2-4,f_gif", "f_gif,pg_2-4"),
        ("pg_2;3;4,f_gif", "f_gif,pg_2-4"),
        ("pg_2-3;4,f_gif", "f_gif,pg_2-4"),
        ("pg_1;3;5,f_webp", "f_webp,pg_1;3;5"),
        ("pg_1-3;6,f_webp", "f_webp,pg_1-3;6"),
        ("pg_5-,f_webp", "f_webp,pg_5-"),
        ("pg_2-4;5-,f_webp", "f_webp,pg_2-"),
        ("pg_4;2;3,f_gif", "f_gif,pg_4;2-3"),
        ("pg_3;3,f_gif", "f_gif,pg_3;3"),
        // One page, however written, is pg_<n>.
        ("pg_3-3", "pg_3"),
        ("pg_3", "pg_3"),
    ])
    func printsCanonically(text: String, printed: String) throws {
        let model = try canonical(string: text)
        #expect(try CloudinaryPrinter.string(for: model) == printed)
        #expect(try canonical(string: printed).identity == model.identity)
    }

    @Test func differentPagesOrOrderAreDifferentOutputs() throws {
        let identities = try ["pg_2-4,f_gif", "pg_2-5,f_gif", "pg_4;3;2,f_gif", "pg_2-,f_gif", "f_gif"].map { try canonical(string: $0).identity }
        #expect(Set(identities).count == identities.count)
    }

    /// The JSON form is the same list as a string of the same grammar.
    @Test func theJSONFormIsTheSameOutput() throws {
        let json = try canonical(json: #"{"chain": [], "format": "gif", "pages": "2;3;4"}"#)
        #expect(json.identity == (try canonical(string: "pg_2-4,f_gif")).identity)
        #expect(try canonical(json: #"{"chain": [], "pages": "3-3"}"#).identity == (try canonical(string: "pg_3")).identity)
    }

    /// What the grammar refuses, naming the parameter.
    @Test(arguments: ["pg_4-2", "pg_1;;3", "pg_2-4-6", "pg_0-3", "pg_a-b", "pg_;", "pg_1-3;x"])
    func malformedSetsAreRefused(text: String) {
        let issues = CloudinaryParser().parse(text).issues.map(\.description)
        #expect(issues.count == 1)
        #expect(issues.first?.contains("\(text): unknown to Cloudinary") == true, "\(issues)")
    }

    @Test func malformedJSONIsRefusedAtItsPath() {
        #expect(throws: (any Error).self) { try canonical(json: #"{"chain": [], "pages": "4-2"}"#) }
        #expect(throws: (any Error).self) { try canonical(json: #"{"chain": [], "pages": [2, 3]}"#) }
        #expect(throws: (any Error).self) { try canonical(json: #"{"chain": [], "frame": 2, "pages": "2-3"}"#) }
    }

    /// The pages each set selects on a 9-frame animation, and the plan that takes them.
    @Test(arguments: [
        ("c_scale,w_40/pg_2-4,f_gif", [2, 3, 4]),
        ("pg_1;3;5,f_webp", [1, 3, 5]),
        ("pg_1-3;6,f_webp", [1, 2, 3, 6]),
        ("pg_7-,f_webp", [7, 8, 9]),
        ("pg_9;1,f_auto", [9, 1]),
        ("pg_2-4", [2, 3, 4]),  // the source's format (webp) animates
    ])
    func plansTheSelectedPages(text: String, pages: [Int]) throws {
        let plan = try plan([text], Self.animation)
        #expect(plan.decode.pages == .all)
        #expect(plan.outputs[0].keepsAnimation)
        #expect(plan.outputs[0].operations.first == .selectPages(pages))
        #expect(plan.outputs[0].operations.dropFirst().allSatisfy { if case .selectPage = $0 { false } else { true } })
    }

    /// A document's pages become an animation too; other outputs of the job still take one page.
    @Test func aDocumentsPagesAnimateBesideAStillOutput() throws {
        let plan = try plan(["pg_3;1,f_gif", "pg_2,f_jpg", "c_scale,w_50/f_png"], Self.document)
        #expect(plan.decode.pages == .all)
        #expect(plan.outputs[0].operations.first == .selectPages([3, 1]) && plan.outputs[0].keepsAnimation)
        #expect(plan.outputs[1].operations.first == .selectPage(2) && !plan.outputs[1].keepsAnimation)
        #expect(plan.outputs[2].operations.first == .selectPage(1) && !plan.outputs[2].keepsAnimation)
    }

    /// Pages beyond the source, and formats that hold one frame, are refused naming the page
    /// set (Cloudinary documents neither for images).
    @Test(arguments: [
        ("pg_2-12,f_gif", animation, #"outputs[0] ("o0").pages: pg_2-12: page 12 does not exist; the source has 9"#),
        ("pg_10-,f_gif", animation, #"outputs[0] ("o0").pages: pg_10-: page 10 does not exist; the source has 9"#),
        ("pg_1;4,f_gif", document, #"outputs[0] ("o0").pages: pg_1;4: page 4 does not exist; the source has 3"#),
        ("pg_2-4,f_jpg", animation, #"outputs[0] ("o0").pages: pg_2-4: known to Cloudinary, not supported by Derive with jpeg: Cloudinary makes a PDF of several pages, which Derive does not write, and jpeg holds one image; select one page (pg_<n>), or write a format that holds them: an animation (f_gif, f_webp or f_auto) or a multi-page TIFF (f_tiff)"#),
        ("pg_1;3,f_png", document, #"outputs[0] ("o0").pages: pg_1;3: known to Cloudinary, not supported by Derive with png: Cloudinary makes a PDF of several pages, which Derive does not write, and png holds one image; select one page (pg_<n>), or write a format that holds them: an animation (f_gif, f_webp or f_auto) or a multi-page TIFF (f_tiff)"#),
    ])
    func refusals(text: String, facts: SourceFacts, message: String) {
        #expect(planRefusal(text, facts).map(\.description) == [message])
    }

    /// A TIFF's own format is TIFF, which holds pages: pg_1-2 of it is a two-page TIFF, as f_tiff
    /// of an animation is.
    @Test func aTIFFHoldsThePagesOfASet() throws {
        let document = try plan(["pg_1-2", "pg_2-3,f_tiff"], Self.document)
        #expect(document.outputs[0].encoding.format == .tiff && document.outputs[0].keepsAnimation)
        #expect(document.outputs[0].operations.first == .selectPages([1, 2]))
        let animation = try plan(["pg_2-4,f_tiff"], Self.animation)
        #expect(animation.outputs[0].encoding.format == .tiff && animation.outputs[0].operations.first == .selectPages([2, 3, 4]))
    }

    /// Page numbers past Derive's limit are refused as Derive's, like pg_<n>.
    @Test func beyondDerivesLimit() {
        #expect(CloudinaryParser().parse("pg_2-20000,f_gif").issues.isEmpty)
        #expect(throws: (any Error).self) { try canonical(string: "pg_2-20000,f_gif") }
        do {
            _ = try canonical(string: "pg_2-20000,f_gif")
        } catch {
            #expect("\(error)" == "chain: pg must be between 1 and 10000, got 20000")
        }
    }

    /// Page sets are read now, not refused as unsupported.
    @Test func theSetIsNoLongerInTheUnsupportedList() {
        #expect(!CloudinaryVocabulary.unsupported.contains { $0.spelling.contains("pg_") && !$0.spelling.hasPrefix("$") })
        #expect(CloudinaryParser().parse("pg_2-4,f_gif").issues.isEmpty)
    }

    @Test(arguments: [("2-4;7", [2, 3, 4, 7]), ("5-", [5, 6]), ("3;1;3", [3, 1, 3]), ("1-6", [1, 2, 3, 4, 5, 6])])
    func resolvesOnASourcesPageCount(text: String, pages: [Int]) throws {
        #expect(try #require(PageSet.parse(text)).pages(count: 6, limit: PageSet.maxFrames) == pages)
    }

    /// `cp` is the first page of the set.
    @Test func currentPageIsTheSetsFirst() throws {
        let plan = try plan(["c_scale,w_cp_mul_10/pg_4-6,f_gif"], Self.animation)
        #expect(plan.outputs[0].size == Size(40, 40))
    }

    /// Random text of the grammar's characters: what parses prints back to the same pages.
    @Test func fuzzTheGrammar() {
        var random = SeededRandom(seed: 15)
        let alphabet = Array("0123456789;-;-x")
        for _ in 0..<20_000 {
            let text = String((0..<Int.random(in: 0...9, using: &random)).map { _ in random.pick(alphabet) })
            if let set = PageSet.parse(text) {
                #expect(set.runs.allSatisfy { $0.first >= 1 && ($0.last ?? $0.first) >= $0.first }, "\(text)")
                #expect(PageSet.parse(set.text) == set, "\(text)")
                #expect(PageSet.parse(set.normalised.text)?.normalised == set.normalised, "\(text)")
                #expect(set.normalised.pages(count: 1000, limit: PageSet.maxFrames) == set.pages(count: 1000, limit: PageSet.maxFrames), "\(text)")
            }
        }
    }

    @Test func aSetPastTheFrameLimitIsNotExpanded() throws {
        #expect(try #require(PageSet.parse("1-6;1-6")).pages(count: 6, limit: 10) == nil)
    }
}
