import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// Inputs a worker must survive: each gets a classified error quickly, with bounded memory,
/// and nothing crashes.
@Suite(.serialized) struct HostileInputTests {
    static func peakResidentKilobytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }

    @Test(arguments: [
        ("hostile/crafted_empty-zero-bytes.jpg", DeriveError.Code.unsupportedFormat),
        ("hostile/crafted_text-file-named.jpg", .unsupportedFormat),
        ("hostile/crafted_jpeg-photo-cut-in-half.jpg", .corruptImage),
        ("hostile/crafted_png-declared-30000x30000-one-row.png", .limitExceeded),
        ("hostile/crafted_gif-screen-65535x65535-1px-frame.gif", .limitExceeded),
        ("hostile/bomb_sharp-giant-20000x14000.jpg", .limitExceeded),
        ("hostile/trunc_vips-truncated.svgz", .unsupportedFormat),
    ])
    func hostileFilesFailFastWithAClassifiedError(fixture: String, code: DeriveError.Code) throws {
        let before = Self.peakResidentKilobytes()
        let started = Date()
        // Every loader allowed: the checks must not depend on blocking.
        #expect(throws: DeriveError.self) {
            do {
                _ = try Harness.render(fixture, "c_fill,w_200,h_200/f_jpg")
            } catch let error as DeriveError {
                #expect(error.code == code, "\(fixture): \(error)")
                #expect(!error.isRetryable)
                throw error
            }
        }
        #expect(Date().timeIntervalSince(started) < 1, "\(fixture) took too long")
        #expect(Self.peakResidentKilobytes() - before < 100_000, "\(fixture) grew memory")
    }

    @Test func untrustedLoadersAreBlockedByDefault() throws {
        let engine = try VipsEngine(settings: EngineSettings())
        for (fixture, loader) in [("formats/svg-logo.svg", "svg"), ("formats/pdf-page-boxes.pdf", "pdf"), ("formats/jxl-alpha.jxl", "jxl")] {
            #expect(throws: DeriveError(.blockedLoader, "\(fixture.hasSuffix("svg") ? "svg" : fixture.hasSuffix("pdf") ? "pdf" : "jxl") sources need libvips' \(loader) loader, which is blocked by default as untrusted; allow it with DERIVE_ALLOW_LOADERS=\(loader)")) {
                try engine.inspect(Harness.source(fixture))
            }
        }
        // Allowed, they decode (and SVG renders at the size asked for).
        let (plan, result) = try Harness.render("formats/svg-logo.svg", "c_scale,w_1472/f_png")
        #expect(plan.decode.scale == 2 && result.outputs[0].metadata.width == 1472)
    }

    /// An SVG naming external resources renders without reaching them: nothing connects to the
    /// loopback port it names.
    @Test func svgExternalReferencesAreNotFetched() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(9).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let (_, result) = try Harness.render("hostile/crafted_svg-external-refs-ssrf.svg", "c_scale,w_100/f_png")
        #expect(result.outputs.count == 1)
        try #require(bound == 0 && listen(listener, 4) == 0, "could not listen on 127.0.0.1:9 to watch for the SVG's request")
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        _ = try Harness.render("hostile/crafted_svg-external-refs-ssrf.svg", "c_scale,w_120/f_png")
        #expect(accept(listener, nil, nil) < 0, "the SVG renderer connected to a URL the SVG named")
    }

    /// Damaged copies of real files: each one renders or fails with a DeriveError, never a crash.
    @Test func mutatedFilesNeverCrashTheEngine() throws {
        var random = SeededRandom(seed: 11)
        let engine = try Harness.engine()
        var outcomes: [DeriveError.Code?: Int] = [:]
        for fixture in ["photos/grace_hopper_noexif.jpg", "formats/png-palette-trns.png", "formats/gif-animated-cogs.gif",
                        "formats/webp-lossless-alpha.webp", "formats/avif-alpha.avif", "formats/tiff-multipage-3pages.tif"] {
            let original = try Harness.source(fixture).bytes
            for _ in 0..<25 {
                var bytes = original
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    for _ in 0..<Int.random(in: 1...20, using: &random) {
                        bytes[Int.random(in: 0..<bytes.count, using: &random)] = .random(in: 0...255, using: &random)
                    }
                case 1:
                    bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
                default:
                    let start = Int.random(in: 0..<bytes.count, using: &random)
                    bytes.insert(contentsOf: (0..<Int.random(in: 1...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: start)
                }
                do {
                    _ = try Harness.render(SourceImage(bytes: bytes, location: fixture), "c_fit,w_64,h_64/f_png", engine: engine)
                    outcomes[nil, default: 0] += 1
                } catch let error as DeriveError {
                    #expect(!error.detail.isEmpty)
                    outcomes[error.code, default: 0] += 1
                }
            }
        }
        #expect(outcomes.values.reduce(0, +) == 150)
        #expect(outcomes[.corruptImage, default: 0] + outcomes[.decodeFailed, default: 0] > 0)
    }

    @Test func limitsAreConfigurable() throws {
        let tight = try VipsEngine(settings: EngineSettings(sourceLimits: SourceLimits(maxInputBytes: 10_000)))
        #expect(throws: DeriveError.self) { try tight.inspect(Harness.source("photos/grace_hopper_noexif.jpg")) }
        let frames = try VipsEngine(settings: EngineSettings(sourceLimits: SourceLimits(maxFrames: 4)))
        #expect(throws: DeriveError(.limitExceeded, "the source has 5 pages or frames; the limit is 4 (DERIVE_MAX_FRAMES)")) {
            try frames.inspect(Harness.source("formats/gif-animated-cogs.gif"))
        }
    }
}
