import ArgumentParser
import DeriveTerminal

/// `--quiet`, for every command that can run long and shows its progress on a terminal.
struct ProgressOption: ParsableArguments {
    @Flag(name: .long, help: "Show no progress line (one is shown on standard error only when it is a terminal).")
    var quiet = false

    /// A progress line for `state`, drawn only when standard error is a terminal and not `--quiet`.
    func reporter(_ state: ProgressState) -> ProgressReporter {
        ProgressReporter(state, quiet: quiet)
    }
}
