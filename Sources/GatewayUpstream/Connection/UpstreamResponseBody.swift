import GatewayCore
import NIOCore

/// The consumer's handle on an upstream response body: the `BodySource` inside
/// `ProxyResponse.body`. Dropping it before the end of the body closes the
/// connection, as `cancel()` does; the connection handler keeps only the stream.
final class UpstreamResponseBody: BodySource {
    private let stream: BodyStream

    init(_ stream: BodyStream) {
        self.stream = stream
    }

    deinit {
        stream.cancel()
    }

    /// The next chunk, nil at the end. Throws `GatewayError(.connectionReset)` when the
    /// upstream closed mid-body, `.requestTimeout` when it stalled, `CancellationError`
    /// when the task was cancelled (which closes the connection).
    func next() async throws -> ByteBuffer? {
        try await stream.next()
    }

    func cancel() {
        stream.cancel()
    }

    /// Bytes received from the upstream and not yet read (for tests and diagnostics).
    var bufferedBytes: Int { stream.bufferedBytes }
}
