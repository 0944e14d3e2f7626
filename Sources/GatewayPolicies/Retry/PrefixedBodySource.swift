public import GatewayCore
public import NIOCore
import NIOConcurrencyHelpers

/// A body that was partly read already: the chunks read so far, then the rest
/// of the original stream. Used when a request body of unknown length turned
/// out larger than the retry buffer: the bytes already taken from the client
/// must still go upstream, in order, followed by what the client still sends.
public final class PrefixedBodySource: BodySource, Sendable {
    private let prefix: NIOLockedValueBox<[ByteBuffer]>
    private let rest: any BodySource

    public init(prefix: [ByteBuffer], rest: any BodySource) {
        self.prefix = NIOLockedValueBox(prefix.filter { $0.readableBytes > 0 })
        self.rest = rest
    }

    public func next() async throws -> ByteBuffer? {
        let buffered = prefix.withLockedValue { chunks -> ByteBuffer? in
            chunks.isEmpty ? nil : chunks.removeFirst()
        }
        if let buffered { return buffered }
        return try await rest.next()
    }

    public func cancel() {
        prefix.withLockedValue { $0.removeAll() }
        rest.cancel()
    }
}
