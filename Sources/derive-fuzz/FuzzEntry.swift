import DeriveFuzzTargets
import Foundation

// Built two ways (Scripts/fuzz.sh):
// - `swift build --sanitize=fuzzer -Xswiftc -DFUZZING`: libFuzzer's own `main` drives
//   `LLVMFuzzerTestOneInput` with the target named by DERIVE_FUZZ_TARGET.
// - an ordinary build: `derive-fuzz <target> <file or folder>...` runs each file once through
//   the target (how a crash found by the fuzzer is reproduced under a debugger).

#if FUZZING
/// The target this process fuzzes, read once: libFuzzer calls the entry point millions of times.
nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard let name = ProcessInfo.processInfo.environment["DERIVE_FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("derive-fuzz: set DERIVE_FUZZ_TARGET to one of \(names)\n".utf8))
        exit(2)
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let target = selected else { return 0 }
    target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
    return 0
}
#else
@main
struct FuzzReplay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: derive-fuzz <\(names)> <file or folder>...\n".utf8))
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            for file in FuzzFiles.list(path) {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                target.run([UInt8](data))
                count += 1
            }
        }
        print("derive-fuzz: \(count) inputs through \(name), none trapped")
    }
}
#endif
