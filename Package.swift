// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Derive",
    products: [
        .executable(name: "derive", targets: ["derive"]),
        .library(name: "DeriveCore", targets: ["DeriveCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        // Pure Swift: the transformation language, validation, canonical identity and the
        // geometry planner. No C library, so it is tested exhaustively without any server.
        .target(name: "DeriveCore", exclude: ["Schema"]),
        // libvips (Debian's libvips-dev), and the few C helpers Swift cannot express itself.
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        .target(name: "CVipsShim", dependencies: ["CVips"]),
        // Fast SHA-256 of content over OpenSSL's libcrypto (Debian's libssl-dev).
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "DeriveDigest", dependencies: ["CCrypto"]),
        // libcurl (Debian's libcurl4-openssl-dev) and the helpers for its variadic API.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // Fetching sources (http, https, s3, file, data) safely, and the S3 store.
        .target(name: "DeriveCurl", dependencies: ["DeriveCore", "DeriveDigest", "CCurl", "CCurlShim"]),
        // The image engine: decode at size, every operation, every encoder, the metadata.
        .target(name: "DeriveVips", dependencies: ["DeriveCore", "DeriveDigest", "CVips", "CVipsShim"]),
        // Face detection: dlib's HOG detector (Debian's libdlib-dev, with BLAS and LAPACK, which
        // dlib's headers call) behind a C interface. Always optimised: at -Onone detection is
        // ten times slower, and debug builds run the same tests.
        .target(name: "CFaceShim",
                cxxSettings: [.unsafeFlags(["-O3", "-w"])],
                linkerSettings: [.linkedLibrary("dlib"), .linkedLibrary("lapack"), .linkedLibrary("blas")]),
        // Seeing faces in pixels, behind DeriveCore's FaceDetector protocol.
        .target(name: "DeriveVision", dependencies: ["DeriveCore", "CFaceShim"]),
        // The production queue on PostgreSQL over libpq (Debian's libpq-dev), and `derive migrate`.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "DerivePostgres", dependencies: ["DeriveCore", "CLibPQ"]),
        // The embedded queue on SQLite (Debian's libsqlite3-dev): Derive with no server.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "DeriveSQLite", dependencies: ["DeriveCore", "CSQLite"]),
        // The run loop: the job pipeline, slots, leases and heartbeats, graceful shutdown,
        // metrics and structured logs, schedules and reprocessing. DeriveCore's protocols only
        // (and content hashes): the CLI wires the implementations in.
        .target(name: "DeriveWorker", dependencies: ["DeriveCore", "DeriveDigest", .product(name: "Logging", package: "swift-log")]),
        .executableTarget(
            name: "derive",
            dependencies: [
                "DeriveCore",
                "DeriveVips",
                "DeriveVision",
                "DeriveCurl",
                "DerivePostgres",
                "DeriveSQLite",
                "DeriveWorker",
                "DeriveDigest",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Submits and drains no-op jobs: the queue benchmark, and the multi-process test.
        .executableTarget(name: "queue-drain", dependencies: ["DeriveCore", "DerivePostgres", "DeriveSQLite"],
                          path: "Benchmarks/QueueDrain"),
        // Fixture paths and seeded randomness shared by the test targets.
        .target(name: "DeriveTestSupport", dependencies: ["DeriveCore", "DerivePostgres", "DeriveSQLite"], path: "Tests/DeriveTestSupport"),
        .testTarget(
            name: "DeriveCoreTests",
            dependencies: ["DeriveCore", "DeriveTestSupport"]
        ),
        .testTarget(
            name: "DeriveVipsTests",
            dependencies: ["DeriveVips", "DeriveVision", "DeriveCore", "DeriveDigest", "DeriveTestSupport"]
        ),
        .testTarget(
            name: "DeriveQueueTests",
            dependencies: ["DeriveCore", "DerivePostgres", "DeriveSQLite", "DeriveTestSupport"]
        ),
        .testTarget(
            name: "DeriveWorkerTests",
            dependencies: ["DeriveCore", "DeriveWorker", "DerivePostgres", "DeriveSQLite", "DeriveCurl", "DeriveVips", "DeriveVision", "DeriveDigest",
                           "DeriveTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "DeriveCurlTests",
            dependencies: ["DeriveCurl", "DeriveCore", "DeriveTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
