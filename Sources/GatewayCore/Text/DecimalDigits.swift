/// An integer's decimal digits (and sign), as `String(value)` writes them,
/// made in a buffer on the stack: for the writers that put them straight into
/// their output (a log line, a head, a request id) without a string first.
public enum DecimalDigits {
    /// Calls `body` with `value`'s decimal ASCII bytes.
    @inlinable
    public static func withDigits<Result>(of value: Int, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        // A sign and 19 digits at most.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var magnitude = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "-")
            }
            return body(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: buffer[start...])))
        }
    }
}
