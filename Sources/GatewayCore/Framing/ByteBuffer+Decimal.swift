public import NIOCore

extension ByteBuffer {
    /// Writes a non-negative `value` in decimal ASCII, without making a string
    /// of it first (a `Content-Length`, a status code: once per head).
    @inlinable
    @discardableResult
    public mutating func writeDecimal(_ value: Int) -> Int {
        precondition(value >= 0, "writeDecimal writes non-negative values")
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        return writeWithUnsafeMutableBytes(minimumWritableBytes: digits) { out in
            var remaining = value
            var i = digits
            repeat {
                i -= 1
                out[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining > 0
            return digits
        }
    }
}
