import GatewayCore
import NIOCore
import Testing

/// A connection writes each head into the buffer of the one before (no
/// allocation per head), never into bytes a pending write still holds.
struct ByteBufferSpareTests {
    private static func base(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { UnsafeRawPointer($0.baseAddress) }
    }

    @Test func aWrittenHeadsBufferIsClearedAndReused() {
        var spare: ByteBuffer? = ByteBufferAllocator().buffer(capacity: 512)
        spare!.writeString("GET / HTTP/1.1\r\n\r\n")
        let storage = spare!.withVeryUnsafeBytes { UnsafeRawPointer($0.baseAddress) }
        var head = ByteBuffer.reusing(&spare, capacity: 512, allocator: ByteBufferAllocator())
        #expect(spare == nil, "taken: the connection keeps no second reference")
        #expect(head.readableBytes == 0)
        head.writeString("POST /x HTTP/1.1\r\n\r\n")
        #expect(head.withVeryUnsafeBytes { UnsafeRawPointer($0.baseAddress) } == storage, "the same storage, no allocation")
        #expect(head.readableBytesView.elementsEqual("POST /x HTTP/1.1\r\n\r\n".utf8))
    }

    @Test func aPendingWriteKeepsItsBytes() {
        var spare: ByteBuffer? = ByteBuffer(string: "GET /first HTTP/1.1\r\n\r\n")
        let pending = spare!  // as a write the socket has not taken yet
        var head = ByteBuffer.reusing(&spare, capacity: 512, allocator: ByteBufferAllocator())
        head.writeString("GET /second HTTP/1.1\r\n\r\n")
        #expect(String(buffer: pending) == "GET /first HTTP/1.1\r\n\r\n")
        #expect(String(buffer: head) == "GET /second HTTP/1.1\r\n\r\n")
        #expect(Self.base(head) != Self.base(pending))
    }

    @Test func withoutASpareANewBufferIsMade() {
        var spare: ByteBuffer? = nil
        let head = ByteBuffer.reusing(&spare, capacity: 300, allocator: ByteBufferAllocator())
        #expect(head.capacity >= 300)
        #expect(head.readableBytes == 0)
    }

    @Test func onlyASmallHeadIsKeptAsTheSpare() {
        // Memory stays bounded: a connection keeps at most one small head's buffer.
        let small = ByteBufferAllocator().buffer(capacity: 512)
        let large = ByteBufferAllocator().buffer(capacity: ByteBuffer.maxSpareHeadBytes + 1)
        #expect(ByteBuffer.spare(after: small) != nil)
        #expect(ByteBuffer.spare(after: large) == nil)
    }
}
