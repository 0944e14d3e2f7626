public import NIOCore
import NIOPosix

/// The client side of a raw TCP connection; the same type as ``RawTCPConnection``.
public typealias RawTCPClient = RawTCPConnection

/// A raw TCP connection with a small blocking-style API, for scripting malformed HTTP
/// (as a client, via ``connect(host:port:timeout:)``) or misbehaving upstreams (as handed to a
/// ``RawTCPServer`` handler). Every wait is bounded by a timeout.
///
/// Remote half-close is allowed: after the peer's FIN, ``send(_:)`` still works.
public final class RawTCPConnection: Sendable {
    /// The underlying NIO channel.
    public let channel: any Channel
    let inbox: RawTCPInbox

    init(channel: any Channel, inbox: RawTCPInbox) {
        self.channel = channel
        self.inbox = inbox
    }

    deinit {
        self.channel.close(promise: nil)
    }

    /// Installs the inbox handler on a fresh channel (whose `autoRead` must be off).
    static func configure(_ channel: any Channel) throws -> RawTCPConnection {
        let inbox = RawTCPInbox()
        try installHandlers(on: channel, inbox: inbox)
        return RawTCPConnection(channel: channel, inbox: inbox)
    }

    private static func installHandlers(on channel: any Channel, inbox: RawTCPInbox) throws {
        try channel.pipeline.syncOperations.addHandler(AbruptCloseHandler())
        try channel.pipeline.syncOperations.addHandler(RawTCPInboxHandler(inbox: inbox))
    }

    /// Connects to `host:port`. The inbox is in the pipeline before the connection
    /// is: a peer that closes at once (an idle timeout) is seen. NIO reads an EOF
    /// as soon as it is signalled, even with `autoRead` off, and with half-closure
    /// allowed the channel stays open, so an inbox added after that would wait forever.
    public static func connect(
        host: String = "127.0.0.1",
        port: Int,
        timeout: Duration = .seconds(10)
    ) async throws -> RawTCPConnection {
        let inbox = RawTCPInbox()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(timeout))
            .channelOption(ChannelOptions.autoRead, value: false)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try installHandlers(on: channel, inbox: inbox) }
            }
            .connect(host: host, port: port)
            .get()
        return RawTCPConnection(channel: channel, inbox: inbox)
    }

    /// The local port of this connection.
    public var localPort: Int? { self.channel.localAddress?.port }
    /// The remote port of this connection.
    public var remotePort: Int? { self.channel.remoteAddress?.port }

    // MARK: Sending

    /// Writes `bytes` and waits until they reached the socket.
    public func send(_ bytes: some Sequence<UInt8>) async throws {
        let buffer = self.channel.allocator.buffer(bytes: Array(bytes))
        try await self.channel.writeAndFlush(buffer)
    }

    /// Writes `text` as UTF-8 (use `\r\n` explicitly for HTTP).
    public func send(_ text: String) async throws {
        try await self.send(Array(text.utf8))
    }

    /// Sends FIN (half-close); reading still works.
    public func shutdownOutput() async throws {
        try await self.channel.close(mode: .output)
    }

    /// Closes the connection (FIN). Harmless if already closed.
    public func close() async {
        try? await self.channel.close()
    }

    /// Closes the connection with a TCP RST.
    public func reset() async {
        await self.channel.resetConnection()
    }

    // MARK: Receiving

    /// True once the peer closed (FIN or RST) or the connection was closed.
    public var isClosed: Bool {
        self.inbox.take { $0.isClosed }.result
    }

    /// The error that ended the connection, if any (e.g. a connection reset).
    public var closeError: (any Error)? {
        self.inbox.take { $0.error }.result
    }

    /// Reads until the peer closes or `timeout` passes; returns everything received (and
    /// not yet consumed) either way.
    public func receive(timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        _ = await self.wait(timeout: timeout) { $0.isClosed }
        return self.consume { snapshot in
            defer { snapshot.bytes.removeAll() }
            return snapshot.bytes
        }
    }

    /// Like ``receive(timeout:)``, decoded as UTF-8 (invalid bytes replaced).
    public func receiveString(timeout: Duration = .seconds(10)) async throws -> String {
        String(decoding: try await self.receive(timeout: timeout), as: UTF8.self)
    }

    /// Reads until `marker` arrives and returns the bytes up to and including it; the rest stays
    /// buffered. Throws ``RawTCPError`` if the peer closes first or on timeout.
    public func receiveUntil(_ marker: [UInt8], timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        precondition(!marker.isEmpty, "empty marker")
        let found = await self.wait(timeout: timeout) { $0.bytes.firstRange(of: marker) != nil || $0.isClosed }
        let result: [UInt8]? = self.consume { snapshot in
            guard let range = snapshot.bytes.firstRange(of: marker) else { return nil }
            defer { snapshot.bytes.removeSubrange(..<range.upperBound) }
            return Array(snapshot.bytes[..<range.upperBound])
        }
        if let result { return result }
        let received = self.consume { $0.bytes }
        throw found ? RawTCPError.closedBeforeMarker(received: received) : RawTCPError.timedOut(received: received)
    }

    /// ``receiveUntil(_:timeout:)-([UInt8],_)`` with a UTF-8 marker, e.g. `"\r\n\r\n"`.
    public func receiveUntil(_ marker: String, timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        try await self.receiveUntil(Array(marker.utf8), timeout: timeout)
    }

    /// Reads exactly `count` bytes. Throws ``RawTCPError`` if the peer closes first or on timeout.
    public func receive(count: Int, timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        let satisfied = await self.wait(timeout: timeout) { $0.bytes.count >= count || $0.isClosed }
        let result: [UInt8]? = self.consume { snapshot in
            guard snapshot.bytes.count >= count else { return nil }
            defer { snapshot.bytes.removeFirst(count) }
            return Array(snapshot.bytes[..<count])
        }
        if let result { return result }
        let received = self.consume { $0.bytes }
        throw satisfied ? RawTCPError.closedBeforeMarker(received: received) : RawTCPError.timedOut(received: received)
    }

    /// Waits for some bytes and returns all buffered ones; nil once the peer closed and nothing
    /// is left. Throws ``RawTCPError/timedOut(received:)`` if nothing arrives in time.
    public func read(timeout: Duration = .seconds(10)) async throws -> [UInt8]? {
        _ = await self.wait(timeout: timeout) { !$0.bytes.isEmpty || $0.isClosed }
        let (bytes, closed) = self.consume { snapshot in
            defer { snapshot.bytes.removeAll() }
            return (snapshot.bytes, snapshot.isClosed)
        }
        if !bytes.isEmpty { return bytes }
        if closed { return nil }
        throw RawTCPError.timedOut(received: [])
    }

    /// Waits until the peer closes; returns false on timeout.
    public func waitForClose(timeout: Duration = .seconds(10)) async -> Bool {
        await self.wait(timeout: timeout) { $0.isClosed }
    }

    private func wait(timeout: Duration, _ isSatisfied: @escaping (RawTCPInbox.Snapshot) -> Bool) async -> Bool {
        await self.inbox.wait(until: .now + timeout, eventLoop: self.channel.eventLoop, isSatisfied)
    }

    private func consume<Result>(_ body: (inout RawTCPInbox.Snapshot) -> Result) -> Result {
        let (result, resumeReading) = self.inbox.take(body)
        if resumeReading {
            self.channel.read()
        }
        return result
    }
}

/// Failures of ``RawTCPConnection`` reads.
public enum RawTCPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The deadline passed; `received` is what was buffered (not consumed).
    case timedOut(received: [UInt8])
    /// The peer closed before the awaited marker or count arrived.
    case closedBeforeMarker(received: [UInt8])

    public var description: String {
        switch self {
        case .timedOut(let received):
            return "timed out after receiving \(received.count) bytes: \(String(decoding: received.prefix(512), as: UTF8.self))"
        case .closedBeforeMarker(let received):
            return "peer closed after \(received.count) bytes: \(String(decoding: received.prefix(512), as: UTF8.self))"
        }
    }
}
