import DeriveLanguage
import Foundation
import Synchronization

/// Archives finished runs in batches: a worker's slots hand their completions here and go on to
/// the next job, and one transaction archives everything that finished within a few
/// milliseconds of each other, so the database does little work per job.
///
/// A batch that fails for a passing reason (the database restarting) is tried again with
/// backoff. A completion that is never recorded is not lost: its lease expires, the job is
/// rescued and runs again.
public final class CompletionBatcher: Sendable {
    public struct Settings: Sendable, Hashable {
        /// The most runs archived in one transaction.
        public var maxBatch: Int
        /// How long the first completion in a batch waits for others to join it.
        public var maxDelay: Double
        /// Batches archived at once, each in its own transaction.
        public var concurrency: Int
        /// Completions waiting beyond this make `add` wait: when the database falls behind,
        /// the worker slows down rather than piling up finished work it has not recorded.
        public var maxPending: Int
        /// Tries per batch while the database is unavailable.
        public var attempts: Int
        public var backoff: Backoff

        public init(maxBatch: Int = 500, maxDelay: Double = 0.005, concurrency: Int = 2, maxPending: Int = 2000, attempts: Int = 8,
                    backoff: Backoff = Backoff(base: 0.1, factor: 2, maximum: 5)) {
            self.maxBatch = maxBatch
            self.maxDelay = maxDelay
            self.concurrency = max(1, concurrency)
            self.maxPending = max(maxBatch, maxPending)
            self.attempts = attempts
            self.backoff = backoff
        }
    }

    /// Called on the batcher's thread after each batch: the completions, and the ids archived
    /// (the others no longer held their jobs) or the error that stopped the batch.
    public typealias Report = @Sendable ([Completion], Result<Set<JobID>, DeriveError>) -> Void

    private struct State {
        var pending: [Completion] = []
        var closing = false
        /// Completions ever queued: the next one's sequence number.
        var added = 0
        /// The first sequence number of each batch being archived.
        var archiving: [Int] = []

        /// The sequence number of the oldest completion neither archived nor given up on.
        var oldestUnsettled: Int? {
            let waiting = pending.isEmpty ? nil : added - pending.count
            return [waiting, archiving.min()].compactMap { $0 }.min()
        }
    }

    private let store: any JobStore
    private let settings: Settings
    private let report: Report
    private let state = Mutex(State())
    /// Signalled when the first completion of a batch arrives, and at close.
    private let arrived = DispatchSemaphore(value: 0)
    /// Signalled when a batch fills up, so it need not wait out the delay.
    private let filled = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Room for completions not yet archived (see `Settings.maxPending`).
    private let room: DispatchSemaphore

    /// `startsThreads`: the batcher archives on `settings.concurrency` threads of its own;
    /// false leaves that to the host, which calls `archive()` that many times, each on a
    /// thread that may block (the worker does, as child tasks of its run).
    public init(store: any JobStore, settings: Settings = Settings(), startsThreads: Bool = true, report: @escaping Report = { _, _ in }) {
        self.store = store
        self.settings = settings
        self.report = report
        room = DispatchSemaphore(value: settings.maxPending)
        guard startsThreads else { return }
        for index in 0..<settings.concurrency {
            let thread = Thread { [self] in archive() }
            thread.name = "derive-completions-\(index)"
            thread.start()
        }
    }

    /// How many archivers it runs (or the host must run: see `init`).
    public var archivers: Int { settings.concurrency }

    /// Queues a finished run; waits only while `maxPending` completions are already waiting.
    /// After `close()` nothing is queued (returns false): the worker released that run when it
    /// stopped, and its late completion would be refused anyway. (Queuing it would also keep a
    /// slot of `room` taken for ever, and libdispatch stops a process that frees a semaphore
    /// below its initial value.)
    @discardableResult
    public func add(_ completion: Completion) -> Bool {
        room.wait()
        let queued = state.withLock { state -> (first: Bool, full: Bool)? in
            guard !state.closing else { return nil }
            state.pending.append(completion)
            state.added += 1
            return (state.pending.count == 1, state.pending.count == settings.maxBatch)
        }
        guard let queued else {
            room.signal()
            return false
        }
        if queued.first { arrived.signal() }
        if queued.full { filled.signal() }
        return true
    }

    /// Archives everything added so far and stops the archivers.
    public func close() {
        let alreadyClosing = state.withLock { state in
            defer { state.closing = true }
            return state.closing
        }
        guard !alreadyClosing else { return }
        for _ in 0..<settings.concurrency {
            arrived.signal()
            filled.signal()
        }
        for _ in 0..<settings.concurrency { finished.wait() }
    }

    /// One archiver: takes batches and archives them until `close()` has been called and
    /// nothing is left. Blocks; run `settings.concurrency` of them (see `init`).
    public func archive() {
        while true {
            arrived.wait()
            let closing = state.withLock { $0.closing }
            if !closing { _ = filled.wait(timeout: .now() + settings.maxDelay) }
            while let (batch, first, more) = take() {
                // Another thread can archive the rest meanwhile.
                if more { arrived.signal() }
                archive(batch)
                state.withLock { state in
                    if let index = state.archiving.firstIndex(of: first) { state.archiving.remove(at: index) }
                }
                for _ in batch { room.signal() }
            }
            if state.withLock({ $0.closing && $0.pending.isEmpty }) { break }
        }
        finished.signal()
        // Pass the close on to any thread still waiting.
        arrived.signal()
    }

    private func take() -> (batch: [Completion], first: Int, more: Bool)? {
        state.withLock { state in
            guard !state.pending.isEmpty else { return nil }
            let batch = Array(state.pending.prefix(settings.maxBatch))
            let first = state.added - state.pending.count
            state.pending.removeFirst(batch.count)
            state.archiving.append(first)
            return (batch, first, !state.pending.isEmpty)
        }
    }

    /// Waits (up to `timeout` seconds) until every completion queued so far has been archived
    /// or given up on; later ones are not waited for. Returns whether they were. The worker
    /// calls it before starting a job that may crash it, so the crash takes nothing finished.
    @discardableResult
    public func waitUntilRecorded(timeout: Double) -> Bool {
        let mark = state.withLock { $0.added }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if state.withLock({ ($0.oldestUnsettled ?? mark) >= mark }) { return true }
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    private func archive(_ batch: [Completion]) {
        var attempt = 1
        while true {
            do {
                report(batch, .success(try store.complete(batch)))
                return
            } catch {
                guard error.isRetryable, attempt < settings.attempts else {
                    report(batch, .failure(error))
                    return
                }
                Thread.sleep(forTimeInterval: settings.backoff.delay(attempt: attempt))
                attempt += 1
            }
        }
    }
}
