import DeriveTerminal
import Testing

@Suite struct RunSummaryTests {
    static func outputs(_ source: String) -> [RunSummary.Output] {
        [RunSummary.Output(name: "thumb", width: 400, height: 400, format: "webp", quality: "80", bytes: 21_400, location: "derived/\(source)/thumb.webp"),
         RunSummary.Output(name: "card", width: 800, height: source.count % 2 == 0 ? 533 : 600, format: "avif", quality: "auto:good → \(60 + source.count % 7)",
                           bytes: 48_000, location: "derived/\(source)/card.avif")]
    }

    @Test func aShortRunListsEveryOutputThenTheTotalsAndEachFailure() {
        let summary = RunSummary(sources: [RunSummary.Source(name: "coffee.png", outputs: Self.outputs("coffee"))],
                                 failures: [RunSummary.Failure(source: "notes.jpg", code: "unsupported_format", detail: "not an image")], seconds: 1.5)
        #expect(summary.lines(width: 100, height: 40) == [
            "source      output     size  format  quality           bytes  written to",
            "coffee.png  thumb   400x400  webp    80              21.4 kB  derived/coffee/thumb.webp",
            "            card    800x533  avif    auto:good → 66  48.0 kB  derived/coffee/card.avif",
            "",
            "1 source, 2 outputs (69.4 kB) in 1.50 s (1.3/s), 1 failed",
            "failed  notes.jpg  unsupported_format: not an image",
        ])
    }

    @Test func aLongRunFitsOneScreen() {
        let sources = (1...200).map { RunSummary.Source(name: "IMG_\($0).jpg", outputs: Self.outputs("IMG_\($0)")) }
        let failures = (1...12).map { RunSummary.Failure(source: "bad-\($0).jpg", code: "corrupt_image", detail: "the file ends early") }
        let lines = RunSummary(sources: sources, failures: failures, seconds: 95).lines(width: 100, height: 40)
        #expect(lines.count <= 38, "\(lines.joined(separator: "\n"))")
        #expect(lines.allSatisfy { $0.count < 100 })
        #expect(lines[0] == "output  files             size  format  quality              bytes  written to")
        #expect(lines[1] == "thumb     200          400x400  webp    80                 4.28 MB  derived/*/thumb.webp")
        // The q_auto outputs chose 60 to 66: the range is shown.
        #expect(lines[2] == "card      200  800x533…800x600  avif    auto:good → 60…66  9.60 MB  derived/*/card.avif")
        #expect(lines[4] == "200 sources, 400 outputs (13.9 MB) in 1m35s (2.2/s), 12 failed")
        #expect(lines.filter { $0.hasPrefix("failed  ") }.count == 8)
        #expect(lines.last == "… and 4 more failures (every one is in --json's report)")
    }

    @Test func nothingMadeIsJustTheTotals() {
        let summary = RunSummary(sources: [], failures: [RunSummary.Failure(source: "a.jpg", code: "fetch_failed", detail: "404")], seconds: 0.2)
        #expect(summary.lines(width: 80, height: nil, style: Style(enabled: true)) == [
            "0 sources, 0 outputs (0 B) in 0.20 s, \u{1B}[31m1 failed\u{1B}[0m",
            "\u{1B}[31mfailed  a.jpg  fetch_failed: 404\u{1B}[0m",
        ])
    }

    @Test func aLongSourceIsShownByItsFileName() {
        #expect(RunSummary.shortName("/work/shared/fixtures/photos/jolla-phone.jpg", to: 24) == "…/jolla-phone.jpg")
        #expect(RunSummary.shortName("photos/IMG_0001.jpg", to: 24) == "photos/IMG_0001.jpg")
        #expect(RunSummary.shortName("/srv/a-very-long-file-name-indeed-for-a-photo.jpg", to: 16) == "a-very-…hoto.jpg")
    }

    @Test func locationsAreShownRelativeToWhereThePersonIs() {
        #expect(RunSummary.relative("/home/ann/photos/derived/a/thumb.webp", to: "/home/ann/photos") == "derived/a/thumb.webp")
        #expect(RunSummary.relative("/srv/derived/a/thumb.webp", to: "/home/ann") == "/srv/derived/a/thumb.webp")
        #expect(RunSummary.relative("s3://bucket/key.webp", to: "/home/ann") == "s3://bucket/key.webp")
    }
}
