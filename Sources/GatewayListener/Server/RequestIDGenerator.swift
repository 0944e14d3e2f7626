import Synchronization

/// Short unique ids for exchanges: a per-process random prefix and a counter,
/// `prefix-n`. One atomic add and no formatting machinery per id: the digits
/// are written straight into the string (short enough to be stored inline, so
/// no allocation either).
final class RequestIDGenerator: Sendable {
    /// The prefix's bytes and a dash.
    private let prefix: [UInt8]
    private let counter = Atomic<Int>(0)

    init() {
        prefix = Array(String(UInt32.random(in: 0...UInt32.max), radix: 36).utf8) + [UInt8(ascii: "-")]
    }

    func next() -> String {
        let n = counter.add(1, ordering: .relaxed).newValue
        return Self.id(prefix: prefix, n)
    }

    /// `prefix` followed by `n` in decimal.
    static func id(prefix: [UInt8], _ n: Int) -> String {
        var digits = 1
        var rest = n / 10
        while rest > 0 { digits += 1; rest /= 10 }
        return String(unsafeUninitializedCapacity: prefix.count + digits) { buffer in
            for (i, byte) in prefix.enumerated() { buffer[i] = byte }
            var value = n
            var i = prefix.count + digits
            repeat {
                i -= 1
                buffer[i] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            } while value > 0
            return prefix.count + digits
        }
    }
}
