internal import CVips
internal import CVipsShim
import DeriveCore
import Synchronization

/// libvips is initialised once per process, before any concurrent use, and configured from
/// Derive's settings. Untrusted loaders are blocked except those the settings allow; savers are
/// never blocked (libvips marks the JPEG XL saver untrusted only because its loader is).
enum VipsRuntime {
    private static let started = Mutex<EngineSettings?>(nil)

    static func start(_ settings: EngineSettings) throws(DeriveError) {
        try started.withLock { (current: inout EngineSettings?) throws(DeriveError) in
            if current == nil {
                guard dvips_init("derive") == 0 else {
                    throw DeriveError(.internalError, "libvips failed to start: \(VipsRuntime.takeError())")
                }
            }
            if current != settings {
                apply(settings)
                current = settings
            }
        }
    }

    private static func apply(_ settings: EngineSettings) {
        dvips_configure(Int32(settings.concurrency), Int32(settings.cacheMaxOperations), settings.cacheMaxMemory, 0)
        dvips_block_untrusted(1)
        for loader in UntrustedLoader.allCases {
            let allowed = settings.allowedLoaders.contains(loader)
            _ = dvips_block_operation(loaderClass(loader), allowed ? 0 : 1)
        }
        _ = dvips_block_operation("VipsForeignSaveJxl", 0)
    }

    static func loaderClass(_ loader: UntrustedLoader) -> String {
        switch loader {
        case .svg: "VipsForeignLoadSvg"
        case .pdf: "VipsForeignLoadPdf"
        case .jxl: "VipsForeignLoadJxl"
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
