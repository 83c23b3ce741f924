import DeriveFuzzTargets
import DeriveTestSupport
import Foundation
import Testing

/// Every seed and every input the fuzzers ever found a trap with (Tests/Fuzz), through its
/// target in process: a trap that comes back kills this test process, with the file named in
/// the log just before (Scripts/fuzz.sh searches further from the same inputs).
@Suite struct FuzzCorpusTests {
    static let fuzz = Paths.repository.appendingPathComponent("Tests/Fuzz")

    /// The inputs of a target kept in the repository: its seeds and its regressions.
    static func inputs(_ target: FuzzTarget) -> [(name: String, bytes: [UInt8])] {
        var found: [(String, [UInt8])] = []
        func lines(_ file: URL) -> [String] {
            ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { !$0.hasPrefix("#") }.map { String($0.split(separator: "\t").first ?? "") }.filter { !$0.isEmpty }
        }
        switch target {
        case .cloudinary:
            let files = ["Benchmarks/language/documentation-examples.tsv", "Benchmarks/language/issue-examples.tsv",
                         "Benchmarks/language/sdk-examples.tsv", "Benchmarks/language/cloudinary-refuses.tsv", "Tests/Fuzz/seeds/cloudinary.txt"]
            for file in files { found += lines(Paths.repository.appendingPathComponent(file)).map { ("\(file): \($0)", Array($0.utf8)) } }
        case .delivery, .search:
            let seeds = "seeds/\(target.rawValue).txt"
            found += lines(fuzz.appendingPathComponent(seeds)).map { ("\(seeds): \($0)", Array($0.utf8)) }
        case .json, .multipart, .form, .request:
            for file in FuzzFiles.list(fuzz.appendingPathComponent("seeds/\(target.rawValue)").path) {
                found.append((file, [UInt8](FileManager.default.contents(atPath: file) ?? Data())))
            }
        case .image:
            for file in FuzzFiles.list(Paths.fixtures.path) where !file.contains("bomb_") {
                found.append((file, [UInt8](FileManager.default.contents(atPath: file) ?? Data())))
            }
        case .psd:
            for file in FuzzFiles.list(Paths.repository.appendingPathComponent("Tests/Fixtures/psd").path) {
                found.append((file, [UInt8](FileManager.default.contents(atPath: file) ?? Data())))
            }
        }
        for file in FuzzFiles.list(fuzz.appendingPathComponent("regressions/\(target.rawValue)").path) {
            found.append((file, [UInt8](FileManager.default.contents(atPath: file) ?? Data())))
        }
        return found
    }

    /// The inputs run on a thread of their own, as libFuzzer runs them: the `request` target
    /// waits for serve's async handler, which must not wait for a thread of the cooperative pool
    /// that this test holds (two threads on two cores, shared by every test and server here).
    @Test(arguments: FuzzTarget.allCases)
    func everyKeptInputIsAnswered(_ target: FuzzTarget) async {
        let inputs = Self.inputs(target)
        #expect(!inputs.isEmpty, "no kept inputs for \(target.rawValue)")
        // Each input is named in a file before it runs: if it traps, the file says which.
        let last = FileManager.default.temporaryDirectory.appendingPathComponent("derive-fuzz-replay-\(target.rawValue).txt")
        FileHandle.standardError.write(Data("FuzzCorpusTests: \(inputs.count) \(target.rawValue) inputs; the one running is named in \(last.path)\n".utf8))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                for input in inputs {
                    try? Data(input.name.utf8).write(to: last)
                    target.run(input.bytes)
                }
                done.resume()
            }.start()
        }
    }
}
