import Synchronization

/// Wakes the dispatcher before its next poll: a slot freed, a notification arrived, a stop was
/// asked for. A ring while nobody waits is kept for the next wait. One waiter at a time.
final class Doorbell: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func ring() {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil as CheckedContinuation<Void, Never>?
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when rung (or already rung since the last wait), after `timeout` on `clock`, or
    /// when the task is cancelled.
    func wait(timeout: Duration, clock: WorkerClock) async {
        if state.withLock({ state in
            defer { state.rung = false }
            return state.rung
        }) { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(timeout) }
            group.addTask { await self.rung() }
            await group.next()
            group.cancelAll()
        }
    }

    private func rung() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.rung || Task.isCancelled {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
