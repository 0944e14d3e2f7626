import GatewayCore
import NIOConcurrencyHelpers

/// The task that writes a streamed request body, and how to stop it: `abort`
/// (called by the connection handler when the exchange ends early) cancels the
/// task and the client's body source, even if the task has not started yet.
final class RequestBodyWriter: Sendable {
    private enum State {
        case idle
        case running(Task<Void, Never>)
        case aborted
    }

    private let state = NIOLockedValueBox(State.idle)
    private let source: (any BodySource)?

    init(source: (any BodySource)?) {
        self.source = source
    }

    func start(_ body: @escaping @Sendable () async -> Void) {
        let task = Task { await body() }
        let abortedEarly = state.withLockedValue { state -> Bool in
            if case .aborted = state { return true }
            state = .running(task)
            return false
        }
        if abortedEarly { task.cancel() }
    }

    var abort: @Sendable () -> Void {
        { [self] in
            let task: Task<Void, Never>? = state.withLockedValue { state in
                defer { state = .aborted }
                if case .running(let task) = state { return task }
                return nil
            }
            task?.cancel()
            source?.cancel()
        }
    }
}
