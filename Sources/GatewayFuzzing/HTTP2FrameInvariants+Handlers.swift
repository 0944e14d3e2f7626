import GatewayListener
import NIOCore
import NIOHPACK
import NIOHTTP2

/// The handlers around `NIOHTTP2Handler` in the `http2-frames` fuzz target,
/// standing for the gateway's own: a recorder per stream (a child channel of
/// NIOHTTP2's multiplexer here) where the gateway has its `ClientHTTP2Stream`
/// (driven by its connection's handler, no multiplexer), and one behind the
/// connection where it has its `ClientHTTP2ConnectionHandler` (which closes the
/// connection on a connection error, and counts streams). What is fuzzed is
/// NIOHTTP2 with the gateway's settings and the translation of its requests.
/// All of them run on the channel's `EmbeddedEventLoop`, on the thread that
/// feeds the bytes.
extension HTTP2FrameInvariants {
    /// What the handlers of one run saw.
    final class Recording {
        var outcome = Outcome()
        var openStreams = 0
        var mostOpenStreams = 0
    }

    /// One stream's recorder: its first HEADERS through `HTTP2Translation.request`
    /// (as `ClientHTTP2Stream.startExchange` does), then the body bytes, the
    /// trailers, the end and a reset.
    final class StreamRecorder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload

        let recording: Recording
        /// Where its stream is in `recording.outcome.streams`.
        let index: Int

        init(recording: Recording, index: Int) {
            self.recording = recording
            self.index = index
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var stream = recording.outcome.streams[index]
            switch unwrapInboundIn(data) {
            case .headers(let headers):
                if stream.translated == nil {
                    stream.translated = Self.translate(headers.headers)
                } else {
                    stream.trailers += 1
                }
                if headers.endStream { stream.ended = true }
            case .data(let data):
                stream.bodyBytes += data.data.readableBytes
                if data.endStream { stream.ended = true }
            case .rstStream:
                stream.reset = true
            default:
                break  // WINDOW_UPDATE and the like: NIOHTTP2's business
            }
            recording.outcome.streams[index] = stream
        }

        static func translate(_ fields: HPACKHeaders) -> Translated {
            do throws(HTTP2Translation.Refusal) {
                let request = try HTTP2Translation.request(fields)
                return .request(request.head, acceptsTrailers: request.acceptsTrailers, declaredLength: request.declaredLength)
            } catch {
                return .refused(error)
            }
        }
    }

    /// Behind `NIOHTTP2Handler`: takes the root stream's frames, and on the
    /// first error NIOHTTP2 raises (it has written its GOAWAY or RST_STREAM),
    /// notes it and closes the connection, as the gateway does.
    final class ConnectionRecorder: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame

        let recording: Recording

        init(recording: Recording) {
            self.recording = recording
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            // SETTINGS, PING, GOAWAY, PRIORITY, WINDOW_UPDATE: nothing for the gateway to do.
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // Once closed, errors are the close's, not the input's.
            guard context.channel.isActive else { return }
            // As the gateway: a stream's error resets that stream only.
            if HTTP2StreamErrors.isStreamError(error) { return }
            if recording.outcome.error == nil {
                recording.outcome.error = String(reflecting: type(of: error))
            }
            context.close(promise: nil)
        }
    }

    /// NIOHTTP2's stream delegate, as the gateway's: counts the streams open at once.
    struct StreamCounter: NIOHTTP2StreamDelegate {
        let recording: NIOLoopBound<Recording>

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            let recording = self.recording.value
            recording.openStreams += 1
            recording.mostOpenStreams = max(recording.mostOpenStreams, recording.openStreams)
        }

        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            let recording = self.recording.value
            recording.openStreams -= 1
        }
    }
}
