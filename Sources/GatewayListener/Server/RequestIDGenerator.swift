import NIOConcurrencyHelpers

/// Short unique ids for exchanges: a per-process random prefix and a counter.
final class RequestIDGenerator: Sendable {
    private let prefix: String
    private let counter = NIOLockedValueBox(0)

    init() {
        prefix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
    }

    func next() -> String {
        let n = counter.withLockedValue { value -> Int in
            value += 1
            return value
        }
        return "\(prefix)-\(n)"
    }
}
