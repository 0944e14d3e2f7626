import NIOConcurrencyHelpers

/// A value set once and awaited by any number of tasks (e.g. the bound address).
public final class OneShotValue<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiters: [CheckedContinuation<Value, any Error>] = []
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    public func succeed(_ value: Value) { complete(.success(value)) }
    public func fail(_ error: any Error) { complete(.failure(error)) }

    private func complete(_ result: Result<Value, any Error>) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Value, any Error>] in
            guard s.result == nil else { return [] }
            s.result = result
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume(with: result) }
    }

    /// The value once set, without waiting; nil before (or after a failure).
    public var value: Value? {
        state.withLockedValue { try? $0.result?.get() }
    }

    public func wait() async throws -> Value {
        try await withCheckedThrowingContinuation { c in
            let result = state.withLockedValue { s -> Result<Value, any Error>? in
                if let r = s.result { return r }
                s.waiters.append(c)
                return nil
            }
            if let result { c.resume(with: result) }
        }
    }
}
