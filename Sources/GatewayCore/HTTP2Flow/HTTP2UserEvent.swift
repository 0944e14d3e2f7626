package import NIOHTTP2

/// The user events `NIOHTTP2Handler` fires at the connection handler above it
/// (a stream created or closed, a window changed: several per stream, on both
/// sides of every exchange), told apart by their dynamic type, a pointer
/// compare, before the one cast that then succeeds. A chain of `as?` made the
/// runtime's cast machinery fail once for each kind tried before the right one.
package enum HTTP2UserEvent {
    case windowUpdated(NIOHTTP2WindowUpdatedEvent)
    case streamClosed(StreamClosedEvent)
    case streamCreated(NIOHTTP2StreamCreatedEvent)
    /// Any other event: passed on.
    case other

    package init(_ event: Any) {
        let type = Swift.type(of: event)
        if type == NIOHTTP2WindowUpdatedEvent.self, let window = event as? NIOHTTP2WindowUpdatedEvent {
            self = .windowUpdated(window)
        } else if type == StreamClosedEvent.self, let closed = event as? StreamClosedEvent {
            self = .streamClosed(closed)
        } else if type == NIOHTTP2StreamCreatedEvent.self, let created = event as? NIOHTTP2StreamCreatedEvent {
            self = .streamCreated(created)
        } else {
            self = .other
        }
    }
}
