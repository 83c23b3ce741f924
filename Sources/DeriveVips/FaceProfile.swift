import DeriveLanguage
import Glibc

/// Where face detection's time goes, for the benchmark (Benchmarks/faces-cost.sh, section 1d):
/// with `FaceDetectionSettings.profile` (DERIVE_FACE_PROFILE), each detection writes a line to
/// standard error, `derive-face-profile name=ms ...`: the stages of the copy made for the
/// detector (processor time of the whole process, since libvips works on threads of its own),
/// then the detector's own (`FaceDetector.lastStageTimings`). Off (the default), nothing is
/// written or stamped.
enum FaceProfile {
    /// Stages timed one after another (`name_cpu`, processor time of the whole process, and
    /// `name_wall`); nothing is read when profiling is off.
    struct Laps {
        let enabled: Bool
        private var cpu = 0.0, wall = 0.0
        private(set) var stages: [(name: String, milliseconds: Double)] = []

        init(enabled: Bool) {
            self.enabled = enabled
            guard enabled else { return }
            cpu = FaceProfile.clock(CLOCK_PROCESS_CPUTIME_ID)
            wall = FaceProfile.clock(CLOCK_MONOTONIC)
        }

        /// Ends the stage `name` (begun by the last lap, or by `init`).
        mutating func lap(_ name: String) {
            guard enabled else { return }
            let now = (cpu: FaceProfile.clock(CLOCK_PROCESS_CPUTIME_ID), wall: FaceProfile.clock(CLOCK_MONOTONIC))
            stages += [(name + "_cpu", now.cpu - cpu), (name + "_wall", now.wall - wall)]
            (cpu, wall) = now
        }
    }

    /// One line: `derive-face-profile source=WxH copy=WxH name=ms ...`, stages in the order given.
    static func write(source: Size, copy: Size, _ stages: [(name: String, milliseconds: Double)]) {
        var line = "derive-face-profile source=\(source.width)x\(source.height) copy=\(copy.width)x\(copy.height)"
        for (name, ms) in stages { line += " \(name)=\(Double(Int((ms * 1000).rounded())) / 1000)" }
        line += "\n"
        _ = line.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    /// Milliseconds on clock `id`.
    static func clock(_ id: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(id, &t)
        return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
    }
}
