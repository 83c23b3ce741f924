/// The thread the worker's own tasks (dispatcher, slots, periodic tasks) run on, so the
/// worker never waits for Swift's cooperative pool, whose few threads a host program may keep
/// busy (an HTTP server; a test runner's synchronous tests). Those tasks only coordinate:
/// every blocking call goes to another `BlockingPool`, so one thread serves them all.
final class WorkerExecutor: TaskExecutor {
    private let thread: BlockingPool

    init(name: String) {
        thread = BlockingPool(name: name, threads: 1)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        // Closed only after the worker's last task has returned: nothing is enqueued then.
        _ = thread.submit { job.runSynchronously(on: executor) }
    }

    /// Ends the thread once the jobs already queued have run, and returns when it has ended.
    func close() async {
        thread.close()
        await thread.joined()
    }

    /// `close()` for a caller on another thread.
    func closeAndWait() {
        thread.close()
        thread.join()
    }
}
