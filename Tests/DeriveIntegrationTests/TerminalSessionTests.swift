import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// `derive` in a real terminal (tmux), as a person sees it: the progress line advancing on
/// standard error and leaving one line, the summary table, and none of that in a pipe, where
/// the JSON report stays as it was.
@Suite(.enabled(if: TerminalSession.available, "needs tmux, which Scripts/test.sh installs"), .serialized)
final class TerminalSessionTests {
    let folder: URL
    let derive = DeriveBinary.url.path

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-terminal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    func session() throws -> TerminalSession {
        try TerminalSession(width: 120, height: 40, directory: folder, environment: ["VIPS_WARNING": "0", "NO_COLOR": "1"])
    }

    static let photos = ["grace_hopper_noexif.jpg", "jolla-phone.jpg", "kodak-pixpro-az521.jpg", "canon-sx60hs_orient6.jpg", "coffee_noexif.png"]

    /// `count` photographs in `photos/`: the fixtures made 640 wide once (by derive itself), then copied.
    func photographs(_ count: Int) throws -> [String] {
        let small = folder.appendingPathComponent("small")
        let made = try DeriveBinary.run(["run", "--json", "--out", small.path, "--chain", "w_640/f_jpg"] + Self.photos.map { Paths.fixture("photos/\($0)").path })
        #expect(made.status == 0, "\(made.stderr)")
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let originals = try FileManager.default.subpathsOfDirectory(atPath: small.path).filter { $0.hasSuffix(".jpg") }.sorted()
        #expect(originals.count == Self.photos.count)
        return try (0..<count).map { index in
            let name = String(format: "photos/IMG_%04d.jpg", index + 1)
            try FileManager.default.copyItem(at: small.appendingPathComponent(originals[index % originals.count]), to: folder.appendingPathComponent(name))
            return name
        }
    }

    @Test func aRunShowsItsProgressThenASummaryTable() throws {
        let sources = try photographs(3)
        let terminal = try session()
        let (screen, status) = try terminal.run("\(derive) run \(sources.joined(separator: " ")) --chain 'c_fill,w_200,h_200/f_webp' --out out")
        #expect(status == 0, "\(screen.joined(separator: "\n"))")
        let text = screen.joined(separator: "\n")
        // The progress line's last word stays, then the table.
        #expect(screen.contains { $0.hasPrefix("derived 3 sources in ") }, "\(text)")
        #expect(!text.contains("deriving ["), "\(text)")
        let header = try #require(screen.firstIndex { $0.hasPrefix("source ") }, "\(text)")
        #expect(screen[header].split(separator: " ", omittingEmptySubsequences: true)
            == ["source", "output", "size", "format", "quality", "bytes", "written", "to"])
        #expect(screen[header + 1].hasPrefix("photos/IMG_0001.jpg"))
        #expect(screen[header + 1].contains("200x200  webp") && screen[header + 1].hasSuffix("out/IMG_0001/default.webp"), "\(screen[header + 1])")
        #expect(screen.contains { $0.hasPrefix("3 sources, 3 outputs (") }, "\(text)")
        // No JSON on the terminal.
        #expect(!text.contains("\"sha256\""))
    }

    @Test func failuresSayTheirClassifiedErrorOnALineEach() throws {
        let sources = try photographs(1)
        let terminal = try session()
        let (screen, status) = try terminal.run("\(derive) run \(sources[0]) \(Paths.fixture("hostile/crafted_text-file-named.jpg").path) --chain w_100 --out out")
        #expect(status == 1)
        let text = screen.joined(separator: "\n")
        #expect(screen.contains { $0.hasPrefix("1 source, 1 output (") && $0.hasSuffix(", 1 failed") }, "\(text)")
        #expect(screen.contains { $0.hasPrefix("failed  ") && $0.contains("crafted_text-file-named.jpg  unsupported_format: ") }, "\(text)")
    }

    /// 200 photographs: the line advances (seen at several counts), ends, and the summary
    /// that follows fits on the 40-line screen; the same run piped still gives JSON.
    @Test func twoHundredPhotographsOnOneScreen() throws {
        _ = try photographs(200)
        let terminal = try session()
        var seen = Set<Int>()
        let outputs = #"{"outputs": [{"name": "thumb", "chain": "c_fill,w_160,h_160", "format": "webp"}, {"name": "card", "chain": "w_400", "format": "jpeg", "quality": 70}]}"#
        try Data(outputs.utf8).write(to: folder.appendingPathComponent("outputs.json"))
        let (screen, status) = try terminal.run("\(derive) run photos/*.jpg --chain outputs.json --out out", timeout: 600, each: { lines in
            for line in lines where line.hasPrefix("deriving [") {
                if let count = line.split(separator: " ").first(where: { $0.hasSuffix("/200") }).flatMap({ Int($0.dropLast(4)) }) { seen.insert(count) }
            }
        })
        let text = screen.joined(separator: "\n")
        #expect(status == 0, "\(text)")
        #expect(seen.count >= 3, "progress counts seen: \(seen.sorted())")
        #expect(screen.contains { $0.hasPrefix("derived 200 sources in ") }, "\(text)")
        // Everything from the last line of progress to the totals is on the screen at once.
        let header = try #require(screen.firstIndex { $0.hasPrefix("output ") }, "\(text)")
        #expect(screen[header...].contains { $0.hasPrefix("thumb") && $0.contains(" 200 ") && $0.contains("out/*/thumb.webp") }, "\(text)")
        #expect(screen.contains { $0.hasPrefix("200 sources, 400 outputs (") }, "\(text)")

        let piped = try terminal.run("\(derive) run photos/*.jpg --chain 'c_fill,w_160,h_160/f_webp' --out piped | python3 -m json.tool > report.json && echo parsed", timeout: 600)
        #expect(piped.status == 0 && piped.screen.contains("parsed"), "\(piped.screen.joined(separator: "\n"))")
        guard case .array(let reports) = try JSONParser().parse(String(decoding: try Data(contentsOf: folder.appendingPathComponent("report.json")), as: UTF8.self)) else {
            Issue.record("report.json is not a list")
            return
        }
        #expect(reports.count == 200)
    }

    /// Piped, nothing but the JSON: no carriage return, no escape, no progress, no table, on
    /// either stream, and the report has today's keys and nesting, as `--json` on a terminal has.
    @Test func pipedOutputIsTheReportAsBefore() throws {
        let sources = try photographs(2)
        let terminal = try session()
        let chain = "'c_fill,w_120,h_120/q_auto/f_webp'"
        let piped = try terminal.run("\(derive) run \(sources.joined(separator: " ")) --chain \(chain) --out out 2>&1 | cat > piped.txt")
        #expect(piped.status == 0)
        let text = String(decoding: try Data(contentsOf: folder.appendingPathComponent("piped.txt")), as: UTF8.self)
        #expect(!text.contains("\r") && !text.contains("\u{1B}") && !text.contains("deriving") && !text.contains("derived "), "\(text.prefix(300))")
        let pipedReport = try JSONParser().parse(text)

        let json = try terminal.run("\(derive) run \(sources.joined(separator: " ")) --chain \(chain) --out out --json > terminal.json")
        #expect(json.status == 0)
        #expect(json.screen.contains { $0.hasPrefix("derived 2 sources in ") }, "the progress goes to the terminal: \(json.screen.joined(separator: "\n"))")
        let terminalReport = try JSONParser().parse(String(decoding: try Data(contentsOf: folder.appendingPathComponent("terminal.json")), as: UTF8.self))
        #expect(Self.shape(pipedReport) == Self.shape(terminalReport))
        guard case .array(let reports) = terminalReport, let report = reports.first else { Issue.record("not a list of reports"); return }
        #expect(Self.keys(report) == ["outputs", "source", "timings"])
        #expect(Self.keys(report["source"]) == ["bytes", "colourSpace", "decode", "exif", "format", "hasAlpha", "hasLocation", "height", "iccDescription",
                                                "location", "orientation", "pages", "perceptualHash", "sha256", "width"])
        #expect(Self.keys(report["timings"]) == ["decode", "faces", "fetch", "header", "metadata", "plan", "store", "total"])
        guard case .array(let outputs)? = report["outputs"], let output = outputs.first else { Issue.record("no outputs"); return }
        #expect(Self.keys(output) == ["blurhash", "bytes", "choices", "crops", "dominantColor", "format", "frames", "hasAlpha", "height", "identity",
                                      "key", "location", "name", "privacy", "quality", "sha256", "timings", "transformation", "width"])
    }

    /// `--quiet` on a terminal: the summary, and no progress line at all.
    @Test func quietShowsNoProgress() throws {
        let sources = try photographs(2)
        let terminal = try session()
        let (screen, status) = try terminal.run("\(derive) run \(sources.joined(separator: " ")) --chain w_100 --out out --quiet")
        #expect(status == 0)
        #expect(!screen.contains { $0.hasPrefix("derived ") || $0.hasPrefix("deriving ") }, "\(screen.joined(separator: "\n"))")
        #expect(screen.contains { $0.hasPrefix("2 sources, 2 outputs (") })
    }

    /// `derive submit` and `derive work --until-idle` on the embedded queue: each shows its line
    /// on the terminal and leaves its last one.
    @Test func submitAndWorkShowTheirProgress() throws {
        let sources = try photographs(12)
        let terminal = try session()
        let submitted = try terminal.run("\(derive) submit \(sources.joined(separator: " ")) --chain w_100/f_webp > ids.txt")
        #expect(submitted.status == 0)
        #expect(submitted.screen.contains { $0.hasPrefix("submitted 12 jobs in ") && $0.contains("12 stored") }, "\(submitted.screen.joined(separator: "\n"))")
        var live = false
        let worked = try terminal.run("\(derive) work --until-idle --slots 1", each: { lines in
            if lines.contains(where: { $0.hasPrefix("working  ") && $0.contains(" done  ") && $0.contains(" waiting") }) { live = true }
        })
        let text = worked.screen.joined(separator: "\n")
        #expect(worked.status == 0, "\(text)")
        #expect(live, "no live line was seen")
        #expect(worked.screen.contains { $0.hasPrefix("worked ") && $0.contains(": 12 done (") && $0.hasSuffix(", 0 failed, 0 waiting") }, "\(text)")
        #expect(!worked.screen.contains { $0.hasPrefix("working  ") }, "the live line is replaced by the last one: \(text)")
    }

    /// Each value's keys and the shape of what is under them, without the values.
    static func shape(_ value: JSONValue?) -> String {
        switch value {
        case .object(let members)?: "{" + members.map { "\($0.key):\(shape($0.value))" }.joined(separator: ",") + "}"
        case .array(let items)?: "[" + items.map { shape($0) }.joined(separator: ",") + "]"
        case nil: "nil"
        default: "v"
        }
    }

    static func keys(_ value: JSONValue?) -> [String] {
        guard case .object(let members)? = value else { return [] }
        return members.map(\.key).sorted()
    }
}
