public import NIOCore

extension ByteBuffer {
    /// Writes `value` in decimal ASCII (``DecimalDigits``), without making a
    /// string of it first (a `Content-Length`, a status code: once per head).
    /// Returns the number of bytes written.
    @inlinable
    @discardableResult
    public mutating func writeDecimal(_ value: Int) -> Int {
        DecimalDigits.withDigits(of: value) { writeBytes($0) }
    }
}
