@testable import DeriveLanguage
import Foundation
import DeriveTestSupport
import Testing

/// The parsers never crash: random and mutated inputs each yield a chain or a validation error
/// (a crash would take the whole test process down). Whatever parses must also mean the same
/// after printing and parsing again, and must plan or fail with a validation error.
@Suite struct FuzzTests {
    static let alphabet = Array("c_fill,w_h_ar:gxyz/e_sepia:blur-0123456789.abcdfklmnopqrstuvtx%#_lpadrgbautoitextfetch:layer_apply,")

    struct Tally {
        var accepted = 0
        var rejected = 0
    }

    /// Parses a string; on success checks print → parse → same identity, and plans it.
    static func exercise(_ text: String, tally: inout Tally, random: inout SeededRandom) {
        let parsed = CloudinaryParser().parse(text)
        guard parsed.issues.isEmpty else {
            #expect(parsed.issues.allSatisfy { !$0.reason.isEmpty })
            tally.rejected += 1
            return
        }
        let output = OutputSpec(name: "f", chain: parsed.steps, settings: parsed.settings)
        let resolved: ResolvedJob
        do {
            resolved = try JobResolver().resolve(JobSpec(source: nil, outputs: [output]))
        } catch let error as ValidationError {
            #expect(!error.issues.isEmpty)
            tally.rejected += 1
            return
        } catch {
            Issue.record("unexpected error \(error) for \(text)")
            return
        }
        tally.accepted += 1
        let model = resolved.outputs[0]
        if let printed = try? CloudinaryPrinter.string(for: model) {
            let again = try? canonical([TransformationInput.output(named: "f", transformation: printed)])
            #expect(again?.first?.identity == model.identity, "\(text) → \(printed)")
        }
        plan(resolved, random: &random)
    }

    static func plan(_ job: ResolvedJob, random: inout SeededRandom) {
        let facts = SourceFacts(format: random.pick(ImageFormat.allCases), width: Int.random(in: 1...9000, using: &random),
                                height: Int.random(in: 1...9000, using: &random), orientation: Int.random(in: 0...9, using: &random),
                                pages: Int.random(in: 0...5, using: &random), hasAlpha: random.chance(0.5))
        do {
            let plan = try Planner().plan(job, source: facts)
            #expect(plan.decode.size.width >= 1 && plan.decode.size.height >= 1)
            for output in plan.outputs {
                if let size = output.size { #expect(size.width >= 1 && size.height >= 1) }
            }
        } catch {
            #expect(!error.issues.isEmpty)
        }
    }

    @Test func randomTransformationStrings() {
        var random = SeededRandom(seed: 1)
        var tally = Tally()
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...60, using: &random)
            let text = String((0..<length).map { _ in random.pick(Self.alphabet) })
            Self.exercise(text, tally: &tally, random: &random)
        }
        #expect(tally.accepted + tally.rejected == 20_000)
        #expect(tally.rejected > 0)
    }

    @Test func mutatedValidTransformationStrings() throws {
        var random = SeededRandom(seed: 2)
        var generator = ChainGenerator(random: SeededRandom(seed: 3), jsonOnly: false)
        var tally = Tally()
        for _ in 0..<20_000 {
            let model = try canonical([generator.output()])[0]
            var chars = Array(try CloudinaryPrinter.string(for: model))
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = chars.isEmpty ? 0 : Int.random(in: 0..<chars.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !chars.isEmpty: chars.remove(at: position)
                case 1: chars.insert(random.pick(Self.alphabet), at: position)
                case 2 where !chars.isEmpty: chars[position] = random.pick(Self.alphabet)
                default:
                    // Swap two components.
                    var parts = String(chars).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                    if parts.count > 1 { parts.swapAt(0, Int.random(in: 1..<parts.count, using: &random)) }
                    chars = Array(parts.joined(separator: "/"))
                }
            }
            Self.exercise(String(chars), tally: &tally, random: &random)
        }
        #expect(tally.accepted > 1000 && tally.rejected > 1000)
    }

    /// The grammar issue 15 added last — w_auto's forms, dpr_auto, fl_relative, t_a.b, t_ beside
    /// other parameters, Cloudinary's text styles, numbers out of range — mutated the same way.
    @Test func mutatedStringsOfTheNewGrammar() {
        let seeds = [
            "w_auto", "c_limit,w_auto:250", "c_fill,w_auto:20:350", "c_scale,w_auto:breakpoints_50_1000_20_20:json",
            "c_crop,w_100/c_scale,w_auto:breakpoints", "e_sepia/f_webp,w_auto:breakpoints_100_1900_20_15",
            "c_scale,w_100/dpr_auto", "c_fill,w_200,h_100,dpr_auto", "dpr_auto,w_auto",
            "c_scale,w_2000/l_logo,c_scale,w_0.25,fl_relative,g_north_east", "l_logo/c_scale,w_0.25/fl_layer_apply,fl_relative",
            "t_a.b", "c_scale,t_a,w_50", "$v_3,t_a,r_$v", "t_a,e_sepia/t_b.c",
            "l_text:Verdana_50_bold_underline_letter_spacing_14:Style", "l_text:hello", "e_sepia:-10", "w_iw_pow_2", "b_frames",
            "c_limit,w_300,h_300,l_bike/e_sepia,fl_layer_apply",
        ]
        var random = SeededRandom(seed: 8)
        var tally = Tally()
        for i in 0..<5_000 {
            var chars = Array(seeds[i % seeds.count])
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let position = chars.isEmpty ? 0 : Int.random(in: 0..<chars.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0 where !chars.isEmpty: chars.remove(at: position)
                case 1: chars.insert(random.pick(Self.alphabet + Array("$!:;.-")), at: position)
                default: if !chars.isEmpty { chars[position] = random.pick(Self.alphabet) }
                }
            }
            Self.exercise(String(chars), tally: &tally, random: &random)
        }
        #expect(tally.accepted > 500 && tally.rejected > 500, "\(tally)")
    }

    @Test func mutatedJSONJobs() throws {
        var random = SeededRandom(seed: 4)
        var generator = ChainGenerator(random: SeededRandom(seed: 5), jsonOnly: true)
        let noise: [UInt8] = Array("{}[],:\"0123456789.-eE truefalsenull\\u".utf8)
        var outcomes = 0
        for _ in 0..<10_000 {
            let job = JobSpec(source: "https://example.com/a.jpg", outputs: [generator.output()])
            var bytes = Array(JSONWriter.canonical(ChainEncoder.json(job)).utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.remove(at: position)
                case 1: bytes.insert(random.pick(noise), at: position)
                default: bytes[position] = random.chance(0.1) ? UInt8.random(in: 0...255, using: &random) : random.pick(noise)
                }
            }
            do {
                let value = try JSONParser().parse(bytes)
                let decoded = try JSONChainDecoder().decodeJob(value)
                let resolved = try JobResolver().resolve(decoded)
                Self.plan(resolved, random: &random)
            } catch let error as JSONParseError {
                #expect(error.line >= 1 && error.column >= 1)
            } catch let error as ValidationError {
                #expect(!error.issues.isEmpty)
            }
            outcomes += 1
        }
        #expect(outcomes == 10_000)
    }

    /// Structural mutations: values replaced by values of other types, keys dropped or added.
    @Test func mutatedJSONTrees() throws {
        var random = SeededRandom(seed: 6)
        var generator = ChainGenerator(random: SeededRandom(seed: 7), jsonOnly: true)
        let replacements: [JSONValue] = [.null, .bool(true), .int(0), .int(-1), .int(Int.max), .decimal(0.5), .string(""),
                                         .string("x"), .string("50%"), .array([]), .object([]), .number(JSONNumber(text: "1e400"))]
        func mutate(_ value: JSONValue) -> JSONValue {
            if random.chance(0.08) { return random.pick(replacements) }
            switch value {
            case .array(let items):
                var items = items.map(mutate)
                if random.chance(0.05), !items.isEmpty { items.remove(at: 0) }
                return .array(items)
            case .object(let members):
                var members = members.map { JSONMember(key: $0.key, value: mutate($0.value)) }
                if random.chance(0.05), !members.isEmpty { members.removeLast() }
                if random.chance(0.05) { members.append(JSONMember(key: random.pick(["mode", "widht", "chain", "x", "$schema"]), value: random.pick(replacements))) }
                return .object(members)
            default:
                return value
            }
        }
        for _ in 0..<10_000 {
            let job = mutate(ChainEncoder.json(JobSpec(source: "s3://bucket/a.png", outputs: [generator.output(), generator.output()])))
            do {
                let decoded = try JSONChainDecoder().decodeJob(job)
                Self.plan(try JobResolver().resolve(decoded), random: &random)
            } catch let error as ValidationError {
                #expect(error.issues.allSatisfy { !$0.reason.isEmpty })
            }
        }
    }

    @Test func randomBytesIntoTheJSONParser() throws {
        var random = SeededRandom(seed: 8)
        for _ in 0..<10_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                random.chance(0.7) ? random.pick(Array("{[\"a\\u00:1,.e-]} ".utf8)) : UInt8.random(in: 0...255, using: &random)
            }
            if let value = try? JSONParser().parse(bytes) {
                // Whatever parses writes back to text that parses to the same value.
                #expect(try JSONParser().parse(JSONWriter.compact(value)) == value)
            }
        }
    }

    @Test func headerSnifferOnRandomAndTruncatedFiles() throws {
        var random = SeededRandom(seed: 9)
        var headers: [[UInt8]] = []
        for name in ["photos/jolla-phone.jpg", "formats/png-palette-trns.png", "formats/gif-animated-cogs.gif",
                     "formats/webp-animated-9frames.webp", "formats/tiff-multipage-3pages.tif", "formats/avif-alpha.avif",
                     "formats/jxl-alpha.jxl", "formats/heic-1440x960.heic"] {
            let data = try Data(contentsOf: Paths.fixture(name))
            headers.append(Array(data.prefix(4096)))
        }
        for _ in 0..<20_000 {
            var bytes = random.pick(headers)
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
            for _ in 0..<Int.random(in: 0...6, using: &random) where !bytes.isEmpty {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if let facts = ImageSniffer.facts(of: bytes) {
                #expect(facts.width >= 1 && facts.height >= 1 && (1...8).contains(facts.orientation))
            }
        }
    }
}
