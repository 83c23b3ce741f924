import Foundation
import Synchronization

/// Threads for blocking C calls (libvips, libcurl, libpq). Swift's cooperative pool has one
/// thread per core and stalls every task when one of them waits in C, so the worker's tasks
/// hand such calls here: a fixed number of named threads, started with the pool and ended by
/// `close()`, which `joined()` waits for.
final class BlockingPool: Sendable {
    private struct State {
        var queue: [@Sendable () -> Void] = []
        var closed = false
    }

    private let state = Mutex(State())
    /// One signal per queued call, and one per thread at `close()`.
    private let available = DispatchSemaphore(value: 0)
    private let exited = DispatchGroup()
    let threads: Int

    /// `name` names the threads for `top -H`, gdb and /proc (`name-0`, `name-1`...).
    init(name: String, threads: Int) {
        self.threads = max(1, threads)
        for index in 0..<self.threads {
            exited.enter()
            let thread = Thread { [self] in
                // Linux keeps 15 characters; Foundation's Thread.name does not reach the kernel.
                try? String("\(name)-\(index)".prefix(15)).write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                while let call = next() { call() }
                exited.leave()
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    private func next() -> (@Sendable () -> Void)? {
        while true {
            available.wait()
            let (call, closed) = state.withLock { state in
                state.queue.isEmpty ? (nil, state.closed) : (state.queue.removeFirst(), false)
            }
            if let call { return call }
            if closed { return nil }
        }
    }

    /// Queues `call` for a thread; false when the pool is closed (nothing will run it).
    func submit(_ call: @escaping @Sendable () -> Void) -> Bool {
        let queued = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.queue.append(call)
            return true
        }
        if queued { available.signal() }
        return queued
    }

    /// Runs `body` on one of the pool's threads and returns what it returned. Cancelled while
    /// it waits or runs, a `cancellable` call returns nil at once and the thread finishes
    /// `body` on its own (a C call cannot be interrupted); what it returns then is dropped.
    /// Nil too when the pool is closed.
    func run<T: Sendable>(cancellable: Bool = true, _ body: @escaping @Sendable () -> T) async -> T? {
        let answer = Answer<T>()
        let call: @Sendable (CheckedContinuation<T?, Never>) -> Void = { [self] continuation in
            guard answer.wait(continuation, cancelled: cancellable && Task.isCancelled) else { return }
            if !submit({ answer.give(body()) }) { answer.give(nil) }
        }
        guard cancellable else { return await withCheckedContinuation(call) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation(call)
        } onCancel: {
            answer.give(nil)
        }
    }

    /// No more calls; each thread ends after the calls already queued.
    func close() {
        let wasOpen = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard wasOpen else { return }
        for _ in 0..<threads { available.signal() }
    }

    /// Whether every thread had ended within `timeout` seconds of being asked (after `close()`).
    func joined(timeout: Double) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            // Whichever comes first answers: the threads' end, or the timeout.
            let once = Mutex<CheckedContinuation<Bool, Never>?>(continuation)
            let finish: @Sendable (Bool) -> Void = { ended in
                once.withLock { pending in
                    pending?.resume(returning: ended)
                    pending = nil
                }
            }
            exited.notify(queue: .global()) { finish(true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { finish(false) }
        }
    }

    /// Returns when every thread has ended (after `close()`).
    func joined() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            exited.notify(queue: .global()) { continuation.resume() }
        }
    }

    /// Waits, blocking the calling thread, until every thread has ended (after `close()`).
    func join() {
        exited.wait()
    }
}

/// One call's answer, given once: by its thread, or as nil by cancellation or a closed pool,
/// whichever comes first; the continuation may arrive before or after it.
private final class Answer<T: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<T?, Never>)
        case given(T?)
        case done
    }

    private let state = Mutex<State>(.empty)

    /// Keeps the continuation until the answer comes; false (and resumed) when it already
    /// came or the task was already cancelled, so the call need not be queued.
    func wait(_ continuation: CheckedContinuation<T?, Never>, cancelled: Bool) -> Bool {
        let early: T?? = state.withLock { state in
            switch state {
            case .given(let value):
                state = .done
                return .some(value)
            case .empty where cancelled:
                state = .done
                return .some(nil)
            case .empty:
                state = .waiting(continuation)
                return .none
            case .waiting, .done:
                return .some(nil)
            }
        }
        guard let early else { return true }
        continuation.resume(returning: early)
        return false
    }

    func give(_ value: T?) {
        let waiting: CheckedContinuation<T?, Never>? = state.withLock { state in
            switch state {
            case .empty:
                state = .given(value)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .given, .done:
                return nil
            }
        }
        waiting?.resume(returning: value)
    }
}
