import NIOCore

/// A copy of the request body, kept as the body goes to the first attempt so
/// that a retry or a replay after a 401 can send it again: at most `limit`
/// bytes (`retry.buffer_limit`, or the OAuth2 replay limit, whichever is
/// larger). A body over the limit is not kept (a declared one is not copied
/// at all): it goes once. A pure value: parts in, what can be sent again out.
struct RequestReplayBuffer: Equatable {
    /// Whether the body can go on another attempt, for a given limit.
    enum Availability: Equatable {
        /// The whole body, within the limit: it can go at once.
        case ready(ByteBuffer)
        /// Not all in yet, but its declared length is within the limit: it will be.
        case coming
        /// Not all in yet and of unknown length (chunked), within the limit so far.
        case unknown
        /// Over the limit: it cannot be sent again.
        case unavailable
    }

    /// The largest body kept.
    let limit: Int
    private let declaredLength: Int?
    /// The bytes so far; nil once the body is known to exceed `limit`.
    private var copy: ByteBuffer?
    /// Bytes the client sent so far (also those past the limit).
    private(set) var received = 0
    /// The client's body ended.
    private(set) var complete = false

    /// - Parameters:
    ///   - limit: the largest body kept.
    ///   - declaredLength: `Content-Length`, nil when chunked.
    init(limit: Int, declaredLength: Int?) {
        self.limit = limit
        self.declaredLength = declaredLength
        if let declaredLength {
            guard declaredLength <= limit else { return }
            // Sized for the declared body, up to 64 KiB: a client that announces
            // a large body and sends nothing does not hold its size in memory.
            var buffer = ByteBuffer()
            buffer.reserveCapacity(Swift.min(declaredLength, 64 * 1024))
            copy = buffer
        } else {
            copy = ByteBuffer()
        }
    }

    /// A part of the body as it arrived from the client (copied, within the limit).
    mutating func append(_ part: ByteBuffer) {
        received += part.readableBytes
        guard copy != nil else { return }
        guard received <= limit else {
            copy = nil  // the body goes once: its copy is freed at once
            return
        }
        copy?.writeImmutableBuffer(part)
    }

    /// The client's body ended.
    mutating func end() {
        complete = true
    }

    /// Whether the body can be sent again by something that allows at most `limit` bytes (≤ the buffer's).
    func availability(within limit: Int) -> Availability {
        guard let copy, received <= limit else { return .unavailable }
        if complete { return .ready(copy) }
        guard let declaredLength else { return .unknown }
        return declaredLength <= limit ? .coming : .unavailable
    }
}

extension RequestReplayBuffer.Availability {
    /// The body is or will surely be all there: a response may be turned down for it.
    var isCertain: Bool {
        switch self {
        case .ready, .coming: return true
        case .unknown, .unavailable: return false
        }
    }

    /// The body may still be all there: a failed attempt (no response to give instead) may wait for it.
    var isPossible: Bool {
        self != .unavailable
    }
}
