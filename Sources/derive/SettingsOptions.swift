import ArgumentParser
import DeriveLanguage
import DeriveJobs
import Foundation

/// Settings shared by the commands that fetch, decode and store: the DERIVE_* environment,
/// overridden by these flags.
struct SettingsOptions: ParsableArguments {
    @Option(name: .long, help: "Allow an untrusted libvips loader: svg, pdf, jxl, jp2k, ppm, rad, openexr, magick (repeatable). Env: DERIVE_ALLOW_LOADERS.")
    var allowLoader: [String] = []

    @Option(name: .long, help: "Allow fetching from a host or address range that is not globally routable (repeatable). Env: DERIVE_FETCH_ALLOW.")
    var fetchAllow: [String] = []

    @Option(name: .long, help: "Largest source in bytes. Env: DERIVE_MAX_INPUT_BYTES.")
    var maxInputBytes: Int?

    @Option(name: .long, help: "Largest source in pixels per frame. Env: DERIVE_MAX_INPUT_PIXELS.")
    var maxInputPixels: Int?

    @Option(name: .long, help: "Most frames or pages in a source. Env: DERIVE_MAX_FRAMES.")
    var maxFrames: Int?

    @Option(name: .long, help: "Most pixels in all frames of an animation. Env: DERIVE_MAX_ANIMATION_PIXELS.")
    var maxAnimationPixels: Int?

    @Option(name: .long, help: "libvips threads per image (0: one per core). Env: DERIVE_VIPS_CONCURRENCY.")
    var vipsConcurrency: Int?

    func configuration(store: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Configuration {
        var environment = environment
        apply(to: &environment)
        if let store { environment["DERIVE_STORE"] = store }
        return try Configuration.load(environment)
    }

    /// Sets the variables these flags override.
    func apply(to environment: inout [String: String]) {
        if !allowLoader.isEmpty { environment["DERIVE_ALLOW_LOADERS"] = allowLoader.joined(separator: ",") }
        if !fetchAllow.isEmpty {
            environment["DERIVE_FETCH_ALLOW"] = ([environment["DERIVE_FETCH_ALLOW"] ?? ""] + fetchAllow).joined(separator: ",")
        }
        for (flag, name) in [(maxInputBytes, "DERIVE_MAX_INPUT_BYTES"), (maxInputPixels, "DERIVE_MAX_INPUT_PIXELS"),
                             (maxFrames, "DERIVE_MAX_FRAMES"), (maxAnimationPixels, "DERIVE_MAX_ANIMATION_PIXELS"),
                             (vipsConcurrency, "DERIVE_VIPS_CONCURRENCY")] {
            if let flag { environment[name] = String(flag) }
        }
    }
}
