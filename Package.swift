// swift-tools-version: 6.0
import Foundation
import PackageDescription

/// dlib's HOG features and filters vectorise with AVX2: detection on a 12-megapixel photo takes
/// about a third less time built for x86-64-v3 (AVX2, FMA: every x86 server CPU since about
/// 2015). Like dlib's own CMake build, use it when the building machine has it; the binary then
/// needs it too (the detector checks, and says so instead of crashing). DERIVE_PORTABLE=1 builds
/// for any x86-64.
let faceDetectorForAVX2: Bool = {
    #if arch(x86_64)
    guard ProcessInfo.processInfo.environment["DERIVE_PORTABLE"] != "1",
          let cpu = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
          let flags = cpu.split(separator: "\n").first(where: { $0.hasPrefix("flags") })?.split(separator: " ")
    else { return false }
    return ["avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"].allSatisfy { flags.contains(Substring($0)) }
    #else
    return false
    #endif
}()

let package = Package(
    name: "Derive",
    products: [
        .executable(name: "derive", targets: ["derive"]),
        .library(name: "DeriveLanguage", targets: ["DeriveLanguage"]),
        .library(name: "DeriveJobs", targets: ["DeriveJobs"]),
        // The face detector's OpenCV half, opened with dlopen on the first detection (see
        // Sources/CFaceNet): build it beside derive with `swift build --product DeriveFaceNet`.
        .library(name: "DeriveFaceNet", type: .dynamic, targets: ["CFaceNet"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        // Metrics through swift-metrics, exposed in Prometheus' format by swift-prometheus.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Every HTTP server (derive serve, the dashboard, /metrics) on Hummingbird 2 over SwiftNIO,
        // chosen by measurement (issue 39; Benchmarks/RESULTS.md, "The HTTP layer"; Docs/design.md,
        // "Dependencies, measured").
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // The worker as a Service: graceful shutdown, the grace period's escalation to
        // cancellation, and signals (no SwiftNIO; it brings swift-async-algorithms).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
    ],
    targets: [
        // The language, pure: the chain model, Cloudinary strings and JSON, validation, canonical
        // form and identity, the geometry planner, the engine's protocol and the pixel
        // algorithms that need no C library (the metric's loops are plain C). No queue, no
        // storage, no I/O, so it is tested exhaustively without any server.
        .target(name: "DeriveLanguage", dependencies: ["CMetricKernels"], exclude: ["Schema"]),
        // Jobs: the queue's and the store's seams (and the in-memory queue), settings,
        // scheduling, fetching rules, and the application layer every front end shares: one
        // job's flow (JobPipeline), reprocessing, source checks. The CLI, the worker and the
        // dashboard build on it; content hashes come from DeriveDigest.
        .target(name: "DeriveJobs", dependencies: ["DeriveLanguage", "DeriveDigest"]),
        // SSIMULACRA 2's loops over pixels, in C so that each is built for x86-64-v3 (AVX2, FMA)
        // beside a copy for any CPU, one chosen when called (q_auto scores every candidate with
        // them). No library; always optimised, as the debug builds' q_auto tests run them too.
        .target(name: "CMetricKernels", cSettings: [.unsafeFlags(["-O3"])]),
        // libvips (Debian's libvips-dev), and the few C helpers Swift cannot express itself.
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        .target(name: "CVipsShim", dependencies: ["CVips"]),
        // libjpeg-turbo (Debian's libjpeg62-turbo-dev): the q_auto search's JPEG candidates on a
        // sample, coded without libvips' pipeline around them (see CJpegShim.h).
        .target(name: "CJpegShim", linkerSettings: [.linkedLibrary("jpeg")]),
        // Fast SHA-256 of content over OpenSSL's libcrypto (Debian's libssl-dev).
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "DeriveDigest", dependencies: ["CCrypto"]),
        // libcurl (Debian's libcurl4-openssl-dev) and the helpers for its variadic API.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // Fetching sources (http, https, s3, file, data) safely, and the S3 store.
        .target(name: "DeriveCurl", dependencies: ["DeriveJobs", "DeriveLanguage", "DeriveDigest", "CCurl", "CCurlShim"]),
        // potrace (Debian's libpotrace-dev, no pkg-config file): traces e_vectorize's colour
        // layers into the curves of an SVG output.
        .systemLibrary(name: "CPotrace", providers: [.apt(["libpotrace-dev"])]),
        // The image engine: decode at size, every operation, every encoder, the metadata.
        .target(name: "DeriveVips", dependencies: ["DeriveLanguage", "DeriveDigest", "CVips", "CVipsShim", "CJpegShim", "CPotrace"]),
        // Face detection: dlib's HOG detector (Debian's libdlib-dev) behind a C interface, linked
        // from dlib's static library so that processes that never detect do not load libdlib,
        // BLAS, LAPACK and gfortran at start (4 ms each run); the shim uses dlib's own SVD.
        // Always optimised: at -Onone detection is ten times slower, and debug builds run the
        // same tests.
        .target(name: "CFaceShim",
                cSettings: faceDetectorForAVX2 ? [.define("DERIVE_FACE_X86_64_V3")] : [],
                cxxSettings: [.unsafeFlags(["-O3", "-w"] + (faceDetectorForAVX2 ? ["-march=x86-64-v3"] : []))],
                linkerSettings: [.linkedLibrary(":libdlib.a")]),
        // CenterFace through OpenCV's dnn (Debian's libopencv-dnn-dev, linked dynamically), built
        // only into the DeriveFaceNet shared object so that derive loads OpenCV on its first face.
        .target(name: "CFaceNet",
                cxxSettings: [.unsafeFlags(["-O2", "-I/usr/include/opencv4"])],
                linkerSettings: [.linkedLibrary("opencv_dnn"), .linkedLibrary("opencv_core")]),
        // Seeing faces in pixels, behind DeriveLanguage's FaceDetector protocol.
        .target(name: "DeriveVision", dependencies: ["DeriveLanguage", "CFaceShim"]),
        // The production queue on PostgreSQL over libpq (Debian's libpq-dev), and `derive migrate`.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "DerivePostgres", dependencies: ["DeriveJobs", "DeriveLanguage", "CLibPQ"]),
        // The embedded queue on SQLite (Debian's libsqlite3-dev): Derive with no server.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "DeriveSQLite", dependencies: ["DeriveJobs", "DeriveLanguage", "CSQLite"]),
        // The run loop: slots, leases and heartbeats, graceful shutdown, metrics and structured
        // logs, schedules. DeriveJobs' protocols only (and content hashes): the CLI wires the
        // implementations in.
        .target(name: "DeriveWorker", dependencies: [
            "DeriveJobs", "DeriveLanguage", "DeriveDigest", "DeriveHTTP", .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"), .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
        ]),
        // The one HTTP adapter: requests, responses and routes as plain values, served by
        // Hummingbird (the only module that imports it), started and stopped the way Derive's
        // servers need.
        .target(name: "DeriveHTTP", dependencies: [
            .product(name: "Logging", package: "swift-log"), .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // `derive dashboard`: the operator's pages, server-rendered over DeriveHTTP, reading
        // through DeriveJobs' seams (and counting a reprocess with its Reprocessor), not the
        // worker's runtime.
        .target(name: "DeriveDashboard", dependencies: [
            "DeriveJobs", "DeriveLanguage", "DeriveDigest", "DeriveHTTP", .product(name: "Logging", package: "swift-log"),
        ]),
        // `derive serve`: Cloudinary's upload API, delivery URLs and admin read over the queue
        // and the store, served through DeriveHTTP.
        .target(name: "DeriveServe", dependencies: [
            "DeriveJobs", "DeriveLanguage", "DeriveDigest", "DeriveHTTP", .product(name: "Logging", package: "swift-log"),
        ]),
        // What a person sees of a long command at a terminal: progress lines, the summary
        // tables, colour (NO_COLOR honoured). Pure Swift over Foundation, tested without one.
        .target(name: "DeriveTerminal"),
        .executableTarget(
            name: "derive",
            dependencies: [
                "DeriveTerminal",
                "DeriveLanguage",
                "DeriveJobs",
                "DeriveVips",
                "DeriveVision",
                "DeriveCurl",
                "DerivePostgres",
                "DeriveSQLite",
                "DeriveWorker",
                "DeriveDashboard",
                "DeriveServe",
                "DeriveDigest",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The untrusted inputs as functions of bytes, for libFuzzer and for the tests that replay
        // the fuzz corpus (Tests/Fuzz); and the fuzzer's executable (Scripts/fuzz.sh).
        .target(name: "DeriveFuzzTargets", dependencies: ["DeriveLanguage", "DeriveJobs", "DeriveHTTP", "DeriveServe"]),
        .executableTarget(name: "derive-fuzz", dependencies: ["DeriveFuzzTargets"]),
        // Submits and drains no-op jobs: the queue benchmark, and the multi-process test.
        .executableTarget(name: "queue-drain", dependencies: ["DeriveJobs", "DeriveLanguage", "DerivePostgres", "DeriveSQLite"],
                          path: "Benchmarks/QueueDrain"),
        // Fixture paths and seeded randomness shared by the test targets.
        .target(name: "DeriveTestSupport", dependencies: ["DeriveJobs", "DeriveLanguage", "DerivePostgres", "DeriveSQLite"], path: "Tests/DeriveTestSupport"),
        // One test target per module, and one for the CLI and whatever crosses modules.
        .testTarget(name: "DeriveLanguageTests", dependencies: ["DeriveLanguage", "DeriveTestSupport"], exclude: ["IdentityRecord"]),
        .testTarget(name: "DeriveTerminalTests", dependencies: ["DeriveTerminal"]),
        .testTarget(name: "DeriveJobsTests", dependencies: ["DeriveJobs", "DeriveLanguage", "DeriveTestSupport"]),
        .testTarget(name: "DeriveVipsTests", dependencies: ["DeriveVips", "DeriveVision", "DeriveLanguage", "DeriveJobs", "DeriveDigest", "DeriveTestSupport"]),
        // The two queue backends held to one conformance suite.
        .testTarget(name: "DeriveQueueTests", dependencies: ["DeriveJobs", "DeriveLanguage", "DerivePostgres", "DeriveSQLite", "DeriveTestSupport"]),
        .testTarget(name: "DeriveCurlTests", dependencies: ["DeriveCurl", "DeriveJobs", "DeriveLanguage", "DeriveTestSupport"]),
        // The worker in process, on the in-memory queue or SQLite, with the real engine and fetcher.
        .testTarget(name: "DeriveWorkerTests", dependencies: [
            "DeriveWorker", "DeriveJobs", "DeriveLanguage", "DeriveDigest", "DeriveVips", "DeriveCurl", "DeriveSQLite", "DeriveTestSupport",
            .product(name: "Logging", package: "swift-log"), .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "DeriveDashboardTests", dependencies: [
            "DeriveDashboard", "DeriveJobs", "DeriveLanguage", "DerivePostgres", "DeriveSQLite", "DeriveCurl", "DeriveVips", "DeriveTestSupport",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The built `derive` as a user runs it, and tests that need several modules at once.
        .testTarget(name: "DeriveIntegrationTests", dependencies: [
            "DeriveLanguage", "DeriveJobs", "DeriveWorker", "DeriveDashboard", "DeriveServe", "DerivePostgres", "DeriveSQLite", "DeriveCurl",
            "DeriveVips", "DeriveVision", "DeriveDigest", "DeriveTestSupport", "DeriveFuzzTargets", "DeriveHTTP",
            .product(name: "Logging", package: "swift-log"), .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
