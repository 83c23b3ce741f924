internal import CVips
internal import CVipsShim
import DeriveLanguage
import Synchronization

/// libvips is initialised once per process, before any concurrent use, and configured from
/// Derive's settings. Untrusted loaders are blocked in libvips except those some engine in the
/// process allows; each engine also refuses formats its own settings block before libvips sees
/// them, so the process-wide list is a second wall, not the only one. Savers are never blocked
/// (libvips marks the JPEG XL saver untrusted only because its loader is, and the ImageMagick
/// saver, which writes BMP and ICO here, because its loader is).
enum VipsRuntime {
    private struct State {
        var settings: EngineSettings?
        var allowed: Set<UntrustedLoader> = []
    }

    private static let state = Mutex(State())

    static func start(_ settings: EngineSettings) throws(DeriveError) {
        try state.withLock { (current: inout State) throws(DeriveError) in
            if current.settings == nil {
                guard dvips_init("derive", Int32(settings.mallocArenas)) == 0 else {
                    throw DeriveError(.internalError, "libvips failed to start: \(VipsRuntime.takeError())")
                }
                dvips_block_untrusted(1)
                _ = dvips_block_operation("VipsForeignSaveJxl", 0)
                _ = dvips_block_operation("VipsForeignSaveMagick", 0)
            }
            if current.settings != settings {
                dvips_configure(Int32(settings.concurrency), Int32(settings.cacheMaxOperations), settings.cacheMaxMemory, 0)
                current.allowed.formUnion(settings.allowedLoaders)
                for loader in UntrustedLoader.allCases {
                    _ = dvips_block_operation(loaderClass(loader), current.allowed.contains(loader) ? 0 : 1)
                }
                current.settings = settings
            }
        }
    }

    static func loaderClass(_ loader: UntrustedLoader) -> String {
        switch loader {
        case .svg: "VipsForeignLoadSvg"
        case .pdf: "VipsForeignLoadPdf"
        case .jxl: "VipsForeignLoadJxl"
        case .jp2k: "VipsForeignLoadJp2k"
        case .ppm: "VipsForeignLoadPpm"
        case .rad: "VipsForeignLoadRad"
        case .openexr: "VipsForeignLoadOpenexr"
        case .magick: "VipsForeignLoadMagick"
        }
    }

    /// The process-wide error text, cleared. Diagnostic only: another thread may have added to it.
    static func takeError() -> String {
        guard let message = dvips_error_copy() else { return "" }
        defer { g_free(message) }
        return String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
