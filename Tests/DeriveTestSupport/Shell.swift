import Foundation

/// Shell commands for test set-up (servers, namespaces, mounts), run in the repository.
public enum Shell {
    /// Runs `command` with bash and waits for it; throws with its standard error when it fails.
    /// posix_spawn and waitpid rather than Foundation's Process: commands such as pg_ctl leave a
    /// daemon behind, and Process then sometimes never notices the shell has exited (seen as a
    /// zombie the test waited on for ever).
    public static func run(_ command: String) throws {
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("derive-shell-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: errors) }
        let script = "set -e; cd '\(Paths.repository.path)'; { \(command); } > /dev/null 2> '\(errors.path)' < /dev/null"
        let words: [String] = ["/bin/bash", "-c", script]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/bash", nil, nil, arguments, environ) == 0 else { throw Failed(description: "could not start bash") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw Failed(description: "waitpid: \(errno)") }
        }
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let message = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw Failed(description: "\(command): exit \(status >> 8): \(message.suffix(400))")
        }
    }

    public struct Failed: Error, CustomStringConvertible {
        public var description: String
    }
}
