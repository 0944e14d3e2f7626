public import NIOCore

/// A single-consumer source of body bytes with back-pressure: the producer reads
/// more from its socket only when the consumer asks for the next chunk.
public protocol BodySource: AnyObject, Sendable {
    /// The next chunk, or `nil` at the end of the body. Throws if the body was cut short.
    func next() async throws -> ByteBuffer?
    /// The consumer will read no more. The producer releases what it holds
    /// (for an upstream response: the connection is closed, not pooled).
    func cancel()
}

/// A request or response body: empty, fully buffered, or streamed.
public struct ProxyBody: Sendable {
    public enum Storage: Sendable {
        case empty
        case bytes(ByteBuffer)
        case stream(any BodySource)
    }

    public var storage: Storage
    /// The length announced by `Content-Length`, when there was one.
    public var declaredLength: Int?

    public init(storage: Storage, declaredLength: Int?) {
        self.storage = storage
        self.declaredLength = declaredLength
    }

    public static let empty = ProxyBody(storage: .empty, declaredLength: 0)

    public static func bytes(_ buffer: ByteBuffer) -> ProxyBody {
        ProxyBody(storage: .bytes(buffer), declaredLength: buffer.readableBytes)
    }

    public static func stream(_ source: any BodySource, declaredLength: Int?) -> ProxyBody {
        ProxyBody(storage: .stream(source), declaredLength: declaredLength)
    }

    public var isEmpty: Bool {
        if case .empty = storage { return true }
        return declaredLength == 0
    }

    /// Calls `body` for each chunk in order. A stream can be iterated once.
    public func forEachChunk(_ body: (ByteBuffer) async throws -> Void) async throws {
        switch storage {
        case .empty:
            return
        case .bytes(let buffer):
            if buffer.readableBytes > 0 { try await body(buffer) }
        case .stream(let source):
            do {
                while let chunk = try await source.next() {
                    try await body(chunk)
                }
            } catch {
                source.cancel()
                throw error
            }
        }
    }

    /// Reads the whole body into memory, failing with `GatewayError.bodyTooLarge` beyond `limit` bytes.
    public func collect(upTo limit: Int) async throws -> ByteBuffer {
        var result = ByteBuffer()
        try await forEachChunk { chunk in
            guard result.readableBytes + chunk.readableBytes <= limit else {
                throw GatewayError(.bodyTooLarge, "body exceeds \(limit) bytes")
            }
            var chunk = chunk
            result.writeBuffer(&chunk)
        }
        return result
    }
}

extension ProxyBody {
    /// A request body the listener passes straight to the upstream connection as
    /// it arrives (an exchange): its framing is known, its bytes are never
    /// read through this value.
    public static func passedThrough(declaredLength: Int?) -> ProxyBody {
        declaredLength == 0 ? .empty : ProxyBody(storage: .stream(PassedThroughBody.shared), declaredLength: declaredLength)
    }
}

/// The source of a passed-through body: nothing to read here.
public final class PassedThroughBody: BodySource {
    public static let shared = PassedThroughBody()

    public func next() async throws -> ByteBuffer? {
        throw GatewayError(.internalError, "a passed-through body is not read as a stream: the exchange writes it upstream as it arrives")
    }

    public func cancel() {}
}
