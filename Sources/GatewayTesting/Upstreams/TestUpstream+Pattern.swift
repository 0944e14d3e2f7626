public import NIOCore

extension TestUpstream {
    /// The period of the `/bytes` pattern: byte `i` is `UInt8(i % 251)`.
    public static let patternPeriod = 251

    /// The first `count` bytes of the `/bytes/{n}` pattern (byte `i` is `UInt8(i % 251)`).
    public static func pattern(count: Int) -> [UInt8] {
        Self.pattern(offset: 0, count: count)
    }

    /// `count` bytes of the pattern starting at absolute position `offset`.
    public static func pattern(offset: Int, count: Int) -> [UInt8] {
        precondition(count >= 0 && offset >= 0)
        var bytes = [UInt8](repeating: 0, count: count)
        var value = offset % patternPeriod
        for index in 0..<count {
            bytes[index] = UInt8(truncatingIfNeeded: value)
            value += 1
            if value == patternPeriod { value = 0 }
        }
        return bytes
    }

    /// Sum of all bytes modulo 2^32 (the `/upload` checksum).
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var sum: UInt32 = 0
        for byte in bytes {
            sum &+= UInt32(byte)
        }
        return sum
    }

    /// Sum of all bytes modulo 2^32, eight bytes at a time.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { raw in
            Self.checksum(raw, continuing: 0)
        }
    }

    /// Adds the bytes of `buffer` to `sum` (fast path for large bodies).
    public static func checksum(_ buffer: ByteBuffer, continuing sum: UInt32 = 0) -> UInt32 {
        buffer.withUnsafeReadableBytes { raw in
            Self.checksum(raw, continuing: sum)
        }
    }

    /// Adds `raw` to `sum`, eight bytes at a time (SWAR), so debug builds stay fast on 1 GiB bodies.
    static func checksum(_ raw: UnsafeRawBufferPointer, continuing sum: UInt32) -> UInt32 {
        var total = UInt64(sum)
        let wordCount = raw.count / 8
        let mask: UInt64 = 0x00FF_00FF_00FF_00FF
        var wordIndex = 0
        while wordIndex < wordCount {
            // 16-bit lanes: each word adds at most 2 * 255 per lane, so 128 words cannot overflow.
            let blockEnd = min(wordIndex + 128, wordCount)
            var lanes: UInt64 = 0
            while wordIndex < blockEnd {
                let word = raw.loadUnaligned(fromByteOffset: wordIndex &* 8, as: UInt64.self)
                lanes &+= (word & mask) &+ ((word >> 8) & mask)
                wordIndex &+= 1
            }
            total &+= (lanes & 0xFFFF) &+ ((lanes >> 16) & 0xFFFF) &+ ((lanes >> 32) & 0xFFFF) &+ (lanes >> 48)
        }
        var byteIndex = wordCount * 8
        while byteIndex < raw.count {
            total &+= UInt64(raw[byteIndex])
            byteIndex &+= 1
        }
        return UInt32(truncatingIfNeeded: total)
    }

    /// A buffer holding `length + patternPeriod` pattern bytes: a slice of `length` bytes at
    /// `offset % patternPeriod` is the pattern at `offset`, without copying.
    static func patternBuffer(chunkLength: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: chunkLength + patternPeriod)
        buffer.writeBytes(Self.pattern(count: chunkLength + patternPeriod))
        return buffer
    }
}
