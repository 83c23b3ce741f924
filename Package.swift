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
    ],
    targets: [
        // Pure Swift: the transformation language, validation, canonical identity and the
        // geometry planner. No C library, so it is tested exhaustively without any server.
        .target(name: "DeriveCore", exclude: ["Schema"]),
        .executableTarget(
            name: "derive",
            dependencies: [
                "DeriveCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "DeriveCoreTests",
            dependencies: ["DeriveCore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
