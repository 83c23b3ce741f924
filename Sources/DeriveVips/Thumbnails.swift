internal import CVips
internal import CVipsShim
import DeriveLanguage

/// Small pictures of Derive's own outputs, for the dashboard: libvips' thumbnail (shrink on
/// load where the format allows it), upright, in sRGB, without metadata, as WebP (which keeps
/// an alpha channel and is about a third smaller than JPEG at this size).
public enum Thumbnails {
    /// `bytes` as a WebP that fits within `width`×`height`, never enlarged.
    public static func webp(_ bytes: [UInt8], width: Int, height: Int, settings: EngineSettings,
                            quality: Int = 75) throws(DeriveError) -> [UInt8] {
        guard width > 0, height > 0, width <= 4096, height <= 4096 else {
            throw DeriveError(.invalidJob, "a thumbnail's box must be 1...4096 on each side, got \(width)×\(height)", retryable: false)
        }
        try VipsRuntime.start(settings)
        return try withBytes(bytes) { buffer throws(DeriveError) in
            let small = try VipsCall("thumbnail_buffer").blob("buffer", buffer).int("width", width).int("height", height)
                .enumeration("size", "down").run(failing: .corruptImage).image("out")
            let srgb = try VipsDecoder.sRGB(small)
            return try VipsEncoder.save(VipsCall("webpsave_buffer").image("in", srgb).int("Q", quality).bool("strip", true))
        }
    }
}
