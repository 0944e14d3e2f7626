import GatewayCore
import NIOCore
import NIOHTTP2
import Testing

/// NIOHTTP2's user events, as both connection handlers read them: each kind by
/// its type, anything else passed on.
@Suite("HTTP2UserEvent")
struct HTTP2UserEventTests {
    @Test func eachKindIsToldApartAndKeepsItsFields() {
        let window = NIOHTTP2WindowUpdatedEvent(streamID: HTTP2StreamID(3), inboundWindowSize: 10, outboundWindowSize: 20)
        guard case .windowUpdated(let read) = HTTP2UserEvent(window) else { Issue.record("not a window event"); return }
        #expect(read.streamID == HTTP2StreamID(3) && read.inboundWindowSize == 10 && read.outboundWindowSize == 20)

        let closed = StreamClosedEvent(streamID: HTTP2StreamID(5), reason: .cancel)
        guard case .streamClosed(let gone) = HTTP2UserEvent(closed) else { Issue.record("not a close"); return }
        #expect(gone.streamID == HTTP2StreamID(5) && gone.reason == .cancel)

        let created = NIOHTTP2StreamCreatedEvent(streamID: HTTP2StreamID(7), localInitialWindowSize: 100, remoteInitialWindowSize: nil)
        guard case .streamCreated(let new) = HTTP2UserEvent(created) else { Issue.record("not a creation"); return }
        #expect(new.streamID == HTTP2StreamID(7) && new.localInitialWindowSize == 100)
    }

    @Test func otherEventsArePassedOn() {
        for event: Any in [ChannelEvent.inputClosed, "text", 42, Optional<StreamClosedEvent>.none as Any] {
            guard case .other = HTTP2UserEvent(event) else {
                Issue.record("\(event) read as an HTTP/2 event")
                continue
            }
        }
    }
}
