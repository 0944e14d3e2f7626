public import NIOCore

extension Optional where Wrapped == ByteBuffer {
    /// Adds bytes read to those not framed yet (both framers keep them so): a
    /// read that finds none waiting is kept as it is, with no copy; only bytes
    /// split across reads are joined.
    public mutating func appendUnframed(_ bytes: ByteBuffer) {
        guard bytes.readableBytes > 0 else { return }
        guard var pending = self, pending.readableBytes > 0 else {
            self = bytes
            return
        }
        var bytes = bytes
        pending.writeBuffer(&bytes)
        self = pending
    }
}
