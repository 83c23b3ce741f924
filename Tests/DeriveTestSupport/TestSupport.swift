import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

public enum Paths {
    /// The repository root (this file is Tests/DeriveTestSupport/TestSupport.swift).
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/fixtures` beside the repository, or `DERIVE_FIXTURES`.
    public static let fixtures: URL = {
        if let override = ProcessInfo.processInfo.environment["DERIVE_FIXTURES"] { return URL(fileURLWithPath: override) }
        return repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()

    public static func fixture(_ relative: String) -> URL { fixtures.appendingPathComponent(relative) }
}

/// SplitMix64: small, fast and reproducible, so a failing fuzz case can be replayed by seed.
public struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RandomNumberGenerator {
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    public mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &self)] }
}


/// Runs reference tools written in Python (jsonschema, Pillow, blurhash) for cross-checks.
/// The test script installs them; outside it, a test that needs one says so and skips.
public enum Python {
    /// Whether `python3` can import every module named.
    public static func has(_ modules: String...) -> Bool {
        (try? run("import " + modules.joined(separator: ", ")).status) == 0
    }

    /// True when the README's test command is running, which guarantees the reference tools.
    public static var required: Bool { ProcessInfo.processInfo.environment["DERIVE_TEST_SUITE"] != nil }

    public static func run(_ script: String, arguments: [String] = [], input: String = "") throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

/// The built `derive` binary, run as a user runs it.
public enum DeriveBinary {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The test bundle sits beside the products in the build folder.
    public static let url: URL = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments.first { $0.hasSuffix(".xctest") } ?? CommandLine.arguments[0])
        return bundle.deletingLastPathComponent().appendingPathComponent("derive")
    }()

    /// Runs each argument list as its own process, all at once; returns their results in order.
    public static func runConcurrently(_ argumentLists: [[String]], executable: String = "derive") -> [Result] {
        final class Slots: @unchecked Sendable {
            var results: [DeriveBinary.Result?]
            init(_ count: Int) { results = Array(repeating: nil, count: count) }
        }
        let slots = Slots(argumentLists.count)
        let lock = NSLock()
        let threads = argumentLists.enumerated().map { index, arguments in
            Thread {
                let result = (try? run(arguments, executable: executable))
                    ?? Result(status: -1, stdout: "", stderr: "could not start \(executable)")
                lock.withLock { slots.results[index] = result }
            }
        }
        threads.forEach { $0.start() }
        while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.01) }
        return slots.results.map { $0! }
    }

    /// Runs `derive`, or another product built beside it (`executable: "queue-drain"`).
    public static func run(_ arguments: [String], environment: [String: String] = [:], executable: String = "derive") throws -> Result {
        let process = Process()
        process.executableURL = url.deletingLastPathComponent().appendingPathComponent(executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes while the process runs, so a full pipe cannot stall it.
        nonisolated(unsafe) var stderr = Data()
        let reader = Thread { stderr = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.005) }
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// The real servers `Scripts/test.sh` starts on loopback, found through the environment.
public enum TestServers {
    static var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Whether the integration tests can run: the servers are up, or the project's test command
    /// is running (then a missing server is a failure, not a skip).
    public static var available: Bool { environment["DERIVE_TEST_ORIGIN"] != nil || Python.required }

    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The HTTP origin, `http://127.0.0.1:<port>`.
    public static func origin() throws -> String {
        guard let origin = environment["DERIVE_TEST_ORIGIN"] else {
            throw Missing(description: "DERIVE_TEST_ORIGIN is not set: run the tests with Scripts/test.sh, which starts the HTTP origin")
        }
        return origin
    }

    public struct S3: Sendable {
        public var endpoint: String
        public var bucket: String
        public var accessKey: String
        public var secretKey: String
    }

    public static func s3() throws -> S3 {
        guard let endpoint = environment["DERIVE_TEST_S3_ENDPOINT"], let bucket = environment["DERIVE_TEST_S3_BUCKET"],
              let key = environment["DERIVE_TEST_S3_ACCESS_KEY"], let secret = environment["DERIVE_TEST_S3_SECRET_KEY"] else {
            throw Missing(description: "DERIVE_TEST_S3_* are not set: run the tests with Scripts/test.sh, which starts the S3 server")
        }
        return S3(endpoint: endpoint, bucket: bucket, accessKey: key, secretKey: secret)
    }

    /// The throwaway PostgreSQL cluster's URL (as its superuser): tests create their own
    /// databases in it.
    public static func postgres() throws -> String {
        guard let url = environment["DERIVE_TEST_DATABASE_URL"] else {
            throw Missing(description: "DERIVE_TEST_DATABASE_URL is not set: run the tests with Scripts/test.sh, which starts PostgreSQL")
        }
        return url
    }

    /// Whether the PostgreSQL tests can run: the cluster is up, or the test command is running
    /// (then a missing cluster is a failure, not a skip).
    public static var postgresAvailable: Bool { environment["DERIVE_TEST_DATABASE_URL"] != nil || Python.required }

    /// A PUT with an empty body (to steer the test origin); returns the status.
    public static func put(_ url: String) throws -> Int {
        final class Box: @unchecked Sendable { var result: Result<Int, Error> = .failure(Missing(description: "no response")) }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "PUT"
        request.httpBody = Data()
        URLSession.shared.dataTask(with: request) { _, response, error in
            box.result = (response as? HTTPURLResponse).map { .success($0.statusCode) } ?? .failure(error ?? Missing(description: "no response"))
            done.signal()
        }.resume()
        done.wait()
        return try box.result.get()
    }

    /// A GET's body as text.
    public static func fetch(_ url: String) throws -> String {
        String(decoding: try get(URL(string: url)!), as: UTF8.self)
    }

    /// A GET over URLSession, waited for (test helpers run outside the code under test).
    static func get(_ url: URL) throws -> Data {
        final class Box: @unchecked Sendable { var result: Result<Data, Error> = .failure(Missing(description: "no response")) }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: url) { data, _, error in
            box.result = data.map { .success($0) } ?? .failure(error ?? Missing(description: "no data from \(url)"))
            done.signal()
        }.resume()
        done.wait()
        return try box.result.get()
    }

    /// What the origin has received so far on paths starting with `prefix`.
    public static func requests(_ prefix: String) throws -> (requests: [[String: String]], bigSent: Int?) {
        let origin = try origin()
        var components = URLComponents(string: origin + "/requests")!
        components.queryItems = [URLQueryItem(name: "path", value: prefix)]
        let data = try get(components.url!)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let list = object["requests"] as? [[String: Any]] else { return ([], nil) }
        let requests = list.map { entry -> [String: String] in
            var flat = (entry["headers"] as? [String: String]) ?? [:]
            flat[":path"] = entry["path"] as? String
            flat[":method"] = entry["method"] as? String
            return flat
        }
        return (requests, object["bigSent"] as? Int)
    }
}

/// Real files of the further source formats (BigTIFF, JPEG 2000, Netpbm, Radiance HDR,
/// OpenEXR, SVGZ, ICO, TGA, PSD, BMP) from public test suites: Scripts/test.sh puts them in a
/// cache folder (Tests/Fixtures/formats.py, from pinned packages) and names it in
/// `DERIVE_FORMAT_FIXTURES`. A test that reads one fails, never skips, when it is missing.
public enum FormatFixtures {
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The file's bytes; throws when the folder is not set or the file is not in it.
    public static func bytes(_ name: String) throws -> [UInt8] {
        guard let folder = ProcessInfo.processInfo.environment["DERIVE_FORMAT_FIXTURES"], !folder.isEmpty else {
            throw Missing(description: "DERIVE_FORMAT_FIXTURES is not set: run Scripts/test.sh, or `export DERIVE_FORMAT_FIXTURES=$(python3 Tests/Fixtures/formats.py | tail -1)`")
        }
        let url = URL(fileURLWithPath: folder).appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw Missing(description: "\(url.path) is missing: Tests/Fixtures/formats.py did not provide \(name)")
        }
        return [UInt8](data)
    }
}
