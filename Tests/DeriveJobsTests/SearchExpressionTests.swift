import DeriveJobs
import DeriveLanguage
import Foundation
import Testing

/// Cloudinary's search expressions (issue 38): the tree each form reads as, what it selects
/// among recorded assets, and a clear refusal of what it cannot read.
@Suite struct SearchExpressionTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func term(_ field: SearchTerm.Field, _ condition: SearchTerm.Condition) -> SearchExpression {
        .term(SearchTerm(field: field, condition: condition))
    }

    static func parse(_ text: String) throws -> SearchExpression {
        try SearchExpression.parse(text, now: now)
    }

    @Test func termsReadAsTheirFieldsAndConditions() throws {
        #expect(try Self.parse("tags:cat") == Self.term(.tags, .equals("cat")))
        #expect(try Self.parse("tags=cat") == Self.term(.tags, .equals("cat")))
        #expect(try Self.parse("public_id:shop/shoes/*") == Self.term(.publicID, .prefix("shop/shoes/")))
        #expect(try Self.parse("public_id:\"a*b:c\"") == Self.term(.publicID, .equals("a*b:c")))
        #expect(try Self.parse("context.alt:*") == Self.term(.context("alt"), .present))
        #expect(try Self.parse("context.alt=\"six people\"") == Self.term(.context("alt"), .equals("six people")))
        #expect(try Self.parse("bytes>1mb") == Self.term(.bytes, .compare(.greater, 1_048_576)))
        #expect(try Self.parse("bytes<=2.5k") == Self.term(.bytes, .compare(.lessOrEqual, 2_560)))
        #expect(try Self.parse("width:[100 TO 2000]") == Self.term(.width, .range(100, 2000, inclusive: true)))
        #expect(try Self.parse("height:{1 TO 10}") == Self.term(.height, .range(1, 10, inclusive: false)))
        #expect(try Self.parse("created_at>1d") == Self.term(.createdAt, .compare(.greater, 1_700_000_000 - 86_400)))
        #expect(try Self.parse("uploaded_at:1w") == Self.term(.createdAt, .compare(.greater, 1_700_000_000 - 7 * 86_400)))
        #expect(try Self.parse("created_at<2023-11-14") == Self.term(.createdAt, .compare(.less, 1_699_920_000)))
        #expect(try Self.parse("created_at>=\"2023-11-14T22:13:20Z\"") == Self.term(.createdAt, .compare(.greaterOrEqual, 1_700_000_000)))
        #expect(try Self.parse("created_at:[2023-11-01 TO 1d]") == Self.term(.createdAt, .range(1_698_796_800, 1_700_000_000 - 86_400, inclusive: true)))
        #expect(try Self.parse("shoes") == Self.term(.anyText, .equals("shoes")))
        #expect(try Self.parse("") == .all([]))
        #expect(try Self.parse("   ") == .all([]))
    }

    @Test func andBindsTighterThanOrAndNotTightest() throws {
        let a = Self.term(.tags, .equals("a")), b = Self.term(.tags, .equals("b")), c = Self.term(.tags, .equals("c"))
        #expect(try Self.parse("tags:a OR tags:b AND tags:c") == .any([a, .all([b, c])]))
        #expect(try Self.parse("tags:a OR tags:b tags:c") == .any([a, .all([b, c])]))
        #expect(try Self.parse("(tags:a OR tags:b) AND tags:c") == .all([.any([a, b]), c]))
        #expect(try Self.parse("NOT tags:a AND tags:b") == .all([.not(a), b]))
        #expect(try Self.parse("-tags:a tags:b") == .all([.not(a), b]))
        #expect(try Self.parse("- (tags:a || tags:b) && tags:c") == .all([.not(.any([a, b])), c]))
        #expect(try Self.parse("NOT NOT tags:a") == .not(.not(a)))
    }

    static func asset(_ id: String, tags: [String] = [], context: [String: String] = [:], format: String = "jpg", bytes: Int = 1000,
                      width: Int = 100, height: Int = 100, age: Double = 0) -> ServedAsset {
        ServedAsset(cloud: "demo", publicID: id, version: 1, format: format, width: width, height: height, bytes: bytes,
                    sha256: String(repeating: "a", count: 64), originalKey: "o", createdAt: now.addingTimeInterval(-age), tags: tags,
                    context: context)
    }

    @Test func expressionsSelectTheAssetsTheyDescribe() throws {
        let assets = [
            Self.asset("shop/shoes/red", tags: ["sale", "shoes"], context: ["alt": "red shoes"], bytes: 2_000_000, width: 2400, height: 1600,
                       age: 3600),
            Self.asset("shop/shoes/blue", tags: ["shoes"], format: "png", bytes: 500_000, width: 800, height: 800, age: 3 * 86400),
            Self.asset("shop/hats/cap", tags: ["sale"], context: ["alt": "a cap"], bytes: 40_000, width: 300, height: 200, age: 40 * 86400),
            Self.asset("logo", format: "png", bytes: 900, width: 64, height: 64, age: 400 * 86400),
        ]
        func ids(_ expression: String) throws -> [String] {
            let tree = try Self.parse(expression)
            return assets.filter { tree.matches($0) }.map(\.publicID)
        }
        #expect(try ids("tags:sale") == ["shop/shoes/red", "shop/hats/cap"])
        #expect(try ids("tags:sale AND NOT folder:shop/hats") == ["shop/shoes/red"])
        #expect(try ids("folder:shop/*") == ["shop/shoes/red", "shop/shoes/blue", "shop/hats/cap"])
        #expect(try ids("folder=\"\"") == ["logo"])
        #expect(try ids("filename:c*") == ["shop/hats/cap"])
        #expect(try ids("format:png bytes<1kb") == ["logo"])
        #expect(try ids("bytes>1mb OR width:[700 TO 900]") == ["shop/shoes/red", "shop/shoes/blue"])
        #expect(try ids("pixels>=640000") == ["shop/shoes/red", "shop/shoes/blue"])
        #expect(try ids("created_at>1d") == ["shop/shoes/red"])
        #expect(try ids("uploaded_at>1w") == ["shop/shoes/red", "shop/shoes/blue"])
        #expect(try ids("created_at<1y") == ["logo"])
        #expect(try ids("context.alt:*") == ["shop/shoes/red", "shop/hats/cap"])
        #expect(try ids("context.alt=\"a cap\"") == ["shop/hats/cap"])
        #expect(try ids("shoes") == ["shop/shoes/red", "shop/shoes/blue"])
        #expect(try ids("red OR logo") == ["shop/shoes/red", "logo"])
        #expect(try ids("resource_type:image AND type:upload").count == 4)
        #expect(try ids("").count == 4)
        // A range written backwards is empty, not a trap (the search fuzzer's find, stop 46).
        #expect(try ids("width:[900 TO 100]").isEmpty)
        #expect(try ids("created_at:{1d TO 1y}").isEmpty)
    }

    @Test(arguments: [
        ("tags:\"open", "the quote at 6 is not closed"),
        ("colour:red", "\"colour\" is not a field Derive searches"),
        ("(tags:a OR tags:b", "a ')' is missing at its end"),
        ("tags:a)", "unexpected \")\" at character 7"),
        ("width:abc", "\"abc\" is not a number at character 7"),
        ("bytes>lots", "(bytes take kb, mb, gb)"),
        ("created_at>yesterday", "is not a date"),
        ("tags>3", "\">\" compares numbers and dates, not text"),
        ("width:[1 2]", "a range is [low TO high]"),
        ("width:[1 TO 2}", "the range is not closed with ]"),
        ("tags:[a TO b]", "a range needs a number or date field"),
        ("AND tags:a", "a term is missing before \"AND\""),
        ("tags:a OR", "a term is missing at its end"),
        ("tags:", "a value is missing"),
    ])
    func malformedExpressionsAreRefusedSayingWhere(expression: String, expected: String) {
        do {
            _ = try Self.parse(expression)
            Issue.record("\(expression) was read")
        } catch let error as DeriveError {
            #expect(error.code == .invalidJob)
            #expect(error.detail.contains("the search expression cannot be read") || error.detail.contains("at most"))
            #expect(error.detail.contains(expected), "\(error.detail)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func hostileExpressionsAreRefusedAtOnce() {
        let deep = String(repeating: "(", count: 200) + "tags:a" + String(repeating: ")", count: 200)
        #expect(throws: DeriveError.self) { try Self.parse(deep) }
        let negations = String(repeating: "NOT ", count: 200) + "tags:a"
        #expect(throws: DeriveError.self) { try Self.parse(negations) }
        let long = String(repeating: "tags:a ", count: 1000)
        #expect(throws: DeriveError.self) { try Self.parse(long) }
        // Within the bounds, deep is fine.
        #expect(throws: Never.self) { try Self.parse(String(repeating: "(", count: 20) + "tags:a" + String(repeating: ")", count: 20)) }
    }
}
