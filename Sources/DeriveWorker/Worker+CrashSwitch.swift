#if DEBUG
import Foundation
import Logging

/// A test-only switch, compiled into debug builds alone: `DERIVE_TEST_CRASH_ON=<text>` makes the
/// worker process kill itself (`SIGKILL`, as a trap or the kernel's OOM killer would end it) when
/// it starts a job whose source contains the text. The fault suite's poison job uses it to
/// prove that one job that keeps killing its workers is failed by the lease rule while the
/// fleet goes on. Release builds (`swift build -c release`) have no such switch.
extension Worker {
    static let crashSwitch: String? = ProcessInfo.processInfo.environment["DERIVE_TEST_CRASH_ON"].flatMap { $0.isEmpty ? nil : $0 }

    /// Ends the process if the switch names `source`.
    func crashIfSwitched(source: String, log: Logger) {
        guard let text = Self.crashSwitch, source.contains(text) else { return }
        log.critical("DERIVE_TEST_CRASH_ON: killing this worker process at the start of the job (a debug build's test switch)")
        raise(SIGKILL)
    }
}
#endif
