/// One side of a blind tunnel as a pure value: what it does with what it reads
/// and with its peer's state. Bytes read on this side go to the peer; this side
/// reads only while the peer can take more (back-pressure); an EOF read here
/// shuts the peer's output (half-close); either side closing, an error, or the
/// idle limit closes both. No I/O: the handler runs the actions.
struct TunnelStateMachine: Equatable {
    enum State: Equatable {
        /// Both directions open.
        case open
        /// This side sent EOF: the peer's output is shut; the other direction goes on.
        case inputClosed
        case closed
    }

    enum ReadAction: Equatable {
        /// Let the read go to the socket.
        case read
        /// Hold it until the peer is writable again.
        case hold
        /// Nothing to read any more.
        case ignore
    }

    enum CloseAction: Equatable {
        /// Shut the peer's output (EOF), keep the other direction.
        case shutdownPeerOutput
        /// Close this side and the peer.
        case closeBoth
        case none
    }

    private(set) var state = State.open
    /// A read asked for while the peer was not writable.
    private(set) var readPending = false
    /// Bytes read on this side (and forwarded to the peer).
    private(set) var bytesRead = 0

    /// The channel asks to read.
    mutating func readRequested(peerWritable: Bool) -> ReadAction {
        guard state != .closed else { return .ignore }
        guard peerWritable else {
            readPending = true
            return .hold
        }
        return .read
    }

    /// The peer became writable: a held read goes out.
    mutating func peerBecameWritable() -> ReadAction {
        guard readPending, state != .closed else { return .ignore }
        readPending = false
        return .read
    }

    /// Bytes arrived on this side; true: forward them to the peer.
    mutating func bytesArrived(_ count: Int) -> Bool {
        guard state != .closed else { return false }
        bytesRead += count
        return true
    }

    /// This side read EOF.
    mutating func inputClosed() -> CloseAction {
        guard state == .open else { return .none }
        state = .inputClosed
        return .shutdownPeerOutput
    }

    /// This side closed or failed, or the tunnel was idle too long.
    mutating func closed() -> CloseAction {
        guard state != .closed else { return .none }
        state = .closed
        readPending = false
        return .closeBoth
    }
}
