import GatewayCore
import Synchronization

/// Short unique ids for exchanges: a per-process random prefix and a counter,
/// `prefix-n`. One atomic add and no formatting machinery per id: the count's
/// digits are appended to the prefix (``LoggedText/appendDecimal(_:to:)``),
/// and the id is short enough to be stored inline (no allocation).
final class RequestIDGenerator: Sendable {
    /// The prefix and a dash.
    private let prefix: String
    private let counter = Atomic<Int>(0)

    init() {
        prefix = String(UInt32.random(in: 0...UInt32.max), radix: 36) + "-"
    }

    func next() -> String {
        Self.id(prefix: prefix, counter.add(1, ordering: .relaxed).newValue)
    }

    /// `prefix` followed by `n` in decimal.
    static func id(prefix: String, _ n: Int) -> String {
        var id = prefix
        LoggedText.appendDecimal(n, to: &id)
        return id
    }
}
