import Foundation
import Synchronization

/// The thread the worker's own tasks (dispatcher, slots, periodic tasks) run on, so the
/// worker never waits for Swift's cooperative pool, whose few threads a host program may keep
/// busy (an HTTP server; a test runner's synchronous tests). Those tasks only coordinate:
/// every blocking call goes to a `BlockingPool`, so one thread serves them all.
final class WorkerExecutor: TaskExecutor {
    private struct State {
        var jobs: [UnownedJob] = []
        var closed = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let exited = DispatchGroup()

    init(name: String) {
        exited.enter()
        let thread = Thread { [self] in
            try? String(name.prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            while true {
                available.wait()
                let (job, closed) = state.withLock { state in
                    state.jobs.isEmpty ? (nil, state.closed) : (state.jobs.removeFirst(), false)
                }
                if let job { job.runSynchronously(on: asUnownedTaskExecutor()) } else if closed { break }
            }
            exited.leave()
        }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { $0.jobs.append(job) }
        available.signal()
    }

    /// Ends the thread once the jobs already queued have run, and returns when it has ended.
    func close() async {
        closeSoon()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            exited.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// `close()` for a caller on another thread.
    func closeAndWait() {
        closeSoon()
        exited.wait()
    }

    private func closeSoon() {
        state.withLock { $0.closed = true }
        available.signal()
    }
}
