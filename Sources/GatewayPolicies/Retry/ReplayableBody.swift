import GatewayCore
import NIOCore

/// Makes a request body sendable more than once, within a memory bound.
enum ReplayableBody {
    /// The body to send, and whether it can be sent again.
    ///
    /// - Empty and in-memory bodies are replayable as they are.
    /// - A stream with a declared length above `limit` is left untouched (not a
    ///   byte read): it streams once.
    /// - A stream with a declared length within `limit` is collected into memory.
    /// - A stream of unknown length (chunked) is read up to `limit`; if it ends
    ///   in time it becomes in-memory, else the bytes read so far are put back in
    ///   front of the rest of the stream (``PrefixedBodySource``) and it streams once.
    static func prepare(_ body: ProxyBody, limit: Int) async throws -> (body: ProxyBody, replayable: Bool) {
        guard case .stream(let source) = body.storage else { return (body, true) }
        if let declared = body.declaredLength {
            guard declared <= limit else { return (body, false) }
            let buffer = try await body.collect(upTo: limit)
            return (ProxyBody(storage: .bytes(buffer), declaredLength: buffer.readableBytes), true)
        }
        var chunks: [ByteBuffer] = []
        var total = 0
        do {
            while let chunk = try await source.next() {
                chunks.append(chunk)
                total += chunk.readableBytes
                if total > limit {
                    let rest = PrefixedBodySource(prefix: chunks, rest: source)
                    return (ProxyBody(storage: .stream(rest), declaredLength: nil), false)
                }
            }
        } catch {
            source.cancel()
            throw error
        }
        var buffer = ByteBuffer()
        buffer.reserveCapacity(total)
        for var chunk in chunks { buffer.writeBuffer(&chunk) }
        return (ProxyBody(storage: .bytes(buffer), declaredLength: buffer.readableBytes), true)
    }
}
