import NIOPosix

/// Trace and span ids, made on the event loop without a lock: each thread has
/// its own xoshiro256** generator, seeded once from the system's random
/// source (`SystemRandomNumberGenerator`) the first time that thread makes an
/// id. Ids are never zero, as the W3C specification requires.
///
/// Not for secrets: ids only need to be unique and spread evenly (the
/// trace-id ratio sampler reads their low bits).
enum TraceIDGenerator {
    private static let generators = ThreadSpecificVariable<ThreadGenerator>()

    /// A new trace id, not all zero.
    static func traceID() -> TraceID {
        let generator = current()
        while true {
            let id = TraceID(high: generator.next(), low: generator.next())
            if id.high != 0 || id.low != 0 { return id }
        }
    }

    /// A new span id, not zero.
    static func spanID() -> SpanID {
        let generator = current()
        while true {
            let value = generator.next()
            if value != 0 { return SpanID(value: value) }
        }
    }

    private static func current() -> ThreadGenerator {
        if let generator = generators.currentValue { return generator }
        let generator = ThreadGenerator()
        generators.currentValue = generator
        return generator
    }
}

/// One thread's xoshiro256** state (Blackman and Vigna). Only ever used by
/// the thread that holds it (``TraceIDGenerator``'s thread-specific
/// variable), hence unchecked.
final class ThreadGenerator: @unchecked Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    init() {
        var system = SystemRandomNumberGenerator()
        var seed: [UInt64] = [0, 0, 0, 0]
        while seed.allSatisfy({ $0 == 0 }) {
            seed = [system.next(), system.next(), system.next(), system.next()]
        }
        s0 = seed[0]
        s1 = seed[1]
        s2 = seed[2]
        s3 = seed[3]
    }

    func next() -> UInt64 {
        let result = rotate(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotate(s3, 45)
        return result
    }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 {
        (x << k) | (x >> (64 - k))
    }
}
