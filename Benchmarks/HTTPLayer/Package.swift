// swift-tools-version: 6.0
// The HTTP layers issue 39 asks to choose between, each serving the same bytes from memory at
// /f and "ok" at /healthz on a loopback port, with nothing else in the request path: what each
// layer costs per request before Derive does any work. Built and driven by
// Benchmarks/http-layer.sh (wrk beside nginx); not part of Derive's package.
import PackageDescription

let package = Package(
    name: "HTTPLayer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    ],
    targets: [
        .executableTarget(name: "flyingfox-file", dependencies: [.product(name: "FlyingFox", package: "FlyingFox")]),
        .executableTarget(name: "hummingbird-file", dependencies: [
            .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "nio-file", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
    ]
)
