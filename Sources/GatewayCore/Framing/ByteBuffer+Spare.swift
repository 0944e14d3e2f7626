public import NIOCore

extension ByteBuffer {
    /// A buffer to write a head into: `spare` (the connection's previous head,
    /// taken: `spare` is nil after) cleared, or a new one of `capacity`. Once
    /// the previous head's write is done the spare is the only reference to
    /// its storage, and clearing it allocates nothing; while the write is still
    /// pending, clearing allocates fresh storage and the pending bytes stay as
    /// they were.
    @inlinable
    public static func reusing(_ spare: inout ByteBuffer?, capacity: Int, allocator: ByteBufferAllocator) -> ByteBuffer {
        guard var buffer = spare.take() else { return allocator.buffer(capacity: capacity) }
        buffer.clear(minimumCapacity: capacity)
        return buffer
    }

    /// Heads larger than this are not kept for the connection's next head.
    public static let maxSpareHeadBytes = 4096

    /// `head`, just handed to a write, kept as the spare for the connection's
    /// next head; nil when it is too large to keep.
    @inlinable
    public static func spare(after head: ByteBuffer) -> ByteBuffer? {
        head.capacity <= maxSpareHeadBytes ? head : nil
    }
}
