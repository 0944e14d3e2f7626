import Foundation
import GatewayCore
import GatewayTesting
import GatewayUpstream
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Testing

// MARK: - Recorders

/// Records pin failures reported through `GatewayEvents`.
final class RecordingEvents: GatewayEvents {
    struct PinFailure: Equatable, Sendable {
        var host: String
        var upstream: String?
        var mode: PinMode
    }

    private let box = NIOLockedValueBox<[PinFailure]>([])

    var pinFailures: [PinFailure] { box.withLockedValue { $0 } }

    func pinFailure(host: String, upstream: String?, mode: PinMode) {
        box.withLockedValue { $0.append(PinFailure(host: host, upstream: upstream, mode: mode)) }
    }
}

/// A log handler that keeps every message, for assertions on what was logged.
struct RecordingLogHandler: LogHandler {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    final class Store: Sendable {
        private let box = NIOLockedValueBox<[Entry]>([])
        var entries: [Entry] { box.withLockedValue { $0 } }
        func append(_ entry: Entry) { box.withLockedValue { $0.append(entry) } }
        func messages(at level: Logger.Level) -> [String] { entries.filter { $0.level == level }.map(\.message) }
    }

    let store: Store
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        store.append(
            Entry(level: event.level, message: event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
    }

    static func logger() -> (Logger, Store) {
        let store = Store()
        let logger = Logger(label: "test.tls") { _ in RecordingLogHandler(store: store) }
        return (logger, store)
    }
}

// MARK: - Client handshakes through the factory

/// The end of a client connection made through `PinningTLSHandlerFactory`.
struct HandshakeOutcome: Sendable {
    var error: (any Error)?
    var report: TLSVerificationReport
    /// The start of what the server answered to `GET /`, when the handshake succeeded.
    var response: String?

    var succeeded: Bool { error == nil }
    var failure: GatewayError? { report.failure }
}

/// Completes when the handshake is done and the server's answer to a `GET /` has arrived (or the peer closed).
private final class ProbeClientHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let promise: EventLoopPromise<String>
    private let received = NIOLockedValueBox<String>("")
    private let handshakeDone = NIOLockedValueBox<Bool>(false)

    init(promise: EventLoopPromise<String>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls {
            handshakeDone.withLockedValue { $0 = true }
            let request = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: request)), promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        let text = buffer.readString(length: buffer.readableBytes) ?? ""
        let complete = received.withLockedValue {
            $0 += text
            return $0.contains("\r\n\r\n")
        }
        if complete {
            promise.succeed(received.withLockedValue { $0 })
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if handshakeDone.withLockedValue({ $0 }) {
            promise.succeed(received.withLockedValue { $0 })
        } else {
            promise.fail(NIOSSLError.uncleanShutdown)
        }
        context.fireChannelInactive()
    }

    /// A channel that never became active (its connect timed out, on a
    /// loaded machine) leaves without `channelInactive`: the promise is failed
    /// here, not dropped (NIO traps on a promise that was never completed).
    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(ChannelError.ioOnClosedChannel)
    }
}

enum TLSClient {
    /// Connects to 127.0.0.1:`port`, lets the factory make the TLS handler for
    /// `serverHostname` (as the pool does: on the channel's event loop), waits
    /// for the handshake and the answer to a `GET /`.
    static func handshake(
        port: Int,
        serverHostname: String = "localhost",
        settings: UpstreamTLSSettings,
        factory: any UpstreamTLSHandlerFactory,
        upstreamName: String? = "test-upstream",
        connectHost: String = "127.0.0.1"
    ) async throws -> HandshakeOutcome {
        let reportBox = NIOLockedValueBox<TLSVerificationReport?>(nil)
        let probeBox = NIOLockedValueBox<ProbeClientHandler?>(nil)
        let group = MultiThreadedEventLoopGroup.singleton
        let channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let (handler, report) = try factory.makeClientHandler(
                        serverHostname: serverHostname, settings: settings, upstreamName: upstreamName)
                    reportBox.withLockedValue { $0 = report }
                    try channel.pipeline.syncOperations.addHandler(handler)
                    let probe = ProbeClientHandler(promise: channel.eventLoop.makePromise())
                    probeBox.withLockedValue { $0 = probe }
                    try channel.pipeline.syncOperations.addHandler(probe)
                }
            }
            .connect(host: connectHost, port: port)
            .get()
        let probe = probeBox.withLockedValue { $0 }!
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(15)) {
            probe.promise.fail(ChannelError.connectTimeout(.seconds(15)))
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        let report = reportBox.withLockedValue { $0 }!
        do {
            let response = try await probe.promise.futureResult.get()
            try? await channel.close()
            return HandshakeOutcome(error: nil, report: report, response: response)
        } catch {
            try? await channel.close()
            return HandshakeOutcome(error: error, report: report, response: nil)
        }
    }
}

// MARK: - Peers: an in-process NIO TLS server and `openssl s_server`

/// Which TLS server the client talks to.
enum PeerKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case nio
    case openssl

    var testDescription: String { rawValue }

    /// The kinds usable on this machine (openssl only when its CLI is installed).
    static var available: [PeerKind] {
        OpenSSLCLI.isAvailable ? [.nio, .openssl] : [.nio]
    }
}

/// A running TLS server presenting a `TestCertificates` chain.
struct TLSPeer: Sendable {
    let port: Int
    private let stopAction: @Sendable () async -> Void

    init(port: Int, stop: @escaping @Sendable () async -> Void) {
        self.port = port
        self.stopAction = stop
    }

    func stop() async { await stopAction() }

    static func start(_ kind: PeerKind, pki: TestCertificates) async throws -> TLSPeer {
        switch kind {
        case .nio: return try await MiniTLSServer.start(context: pki.makeServerContext())
        case .openssl: return try await OpenSSLServer.start(pki: pki)
        }
    }

    /// Runs `body` against a fresh peer and stops it afterwards.
    static func with<T: Sendable>(
        _ kind: PeerKind, pki: TestCertificates, _ body: (TLSPeer) async throws -> T
    ) async throws -> T {
        let peer = try await start(kind, pki: pki)
        do {
            let result = try await body(peer)
            await peer.stop()
            return result
        } catch {
            await peer.stop()
            throw error
        }
    }
}

/// The smallest TLS server: answers any bytes with a fixed HTTP response and closes.
enum MiniTLSServer {
    private final class Responder: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let body = "ok"
            let response = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            let written = context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: response)))
            written.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // A client refusing our certificate ends here: nothing to do but close.
            context.close(promise: nil)
        }
    }

    static func start(context: NIOSSLContext) async throws -> TLSPeer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(Responder())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = channel.localAddress!.port!
        return TLSPeer(port: port) {
            try? await channel.close()
        }
    }
}

/// `openssl s_server` as a real, independent TLS peer.
enum OpenSSLServer {
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func start(pki: TestCertificates) async throws -> TLSPeer {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "s_server")
        let paths = try pki.write(to: dir)
        var arguments = ["s_server", "-cert", paths.leaf, "-key", paths.leafKey, "-www", "-no_dhe"]
        if pki.variant != .selfSigned {
            arguments += ["-cert_chain", paths.intermediate]
        }
        return try await start(arguments: arguments, cleanup: dir)
    }

    /// Starts `openssl <arguments> -accept 127.0.0.1:<free port>`; s_server cannot
    /// report a port it was given 0 for, so pick a free one and retry on collision.
    static func start(arguments: [String], cleanup dir: String?) async throws -> TLSPeer {
        var lastError = ""
        for _ in 0..<8 {
            let port = try await FreePort.find()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: OpenSSLCLI.path)
            process.arguments = arguments + ["-accept", "127.0.0.1:\(port)"]
            let errors = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            process.standardInput = Pipe()  // s_server reads commands from stdin; keep it open
            try process.run()
            if try await waitUntilListening(port: port, process: process) {
                let stdin = process.standardInput as! Pipe
                return TLSPeer(port: port) {
                    await stop(process)
                    try? stdin.fileHandleForWriting.close()
                    if let dir { try? FileManager.default.removeItem(atPath: dir) }
                }
            }
            await stop(process)
            lastError = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
        }
        throw StartFailure(description: "openssl s_server did not start: \(lastError)")
    }

    /// Kills the s_server we started (by its pid) without blocking a concurrency thread:
    /// `waitUntilExit()` would hold one of the few cooperative threads.
    static func stop(_ process: Process) async {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        while process.isRunning {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Polls with TCP connects until s_server accepts; false when it exited (port taken).
    private static func waitUntilListening(port: Int, process: Process) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { return false }
            if let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.milliseconds(200))
                .connect(host: "127.0.0.1", port: port).get()
            {
                try? await channel.close()
                return process.isRunning
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        return false
    }
}

enum FreePort {
    /// A port that was free a moment ago: bind port 0, read it back, close.
    static func find() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }
}

// MARK: - openssl CLI

enum OpenSSLCLI {
    static let path: String = {
        for candidate in ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        return "/usr/bin/openssl"
    }()

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: path) }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs a shell command line (pipelines allowed) and returns its standard output.
    @discardableResult
    static func shell(_ command: String, in dir: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.currentDirectoryURL = URL(fileURLWithPath: dir)
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(
                description: "`\(command)` exited \(process.terminationStatus): \(String(decoding: errorData, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The pin of the certificate in `certificatePath` by the openssl pipeline the docs give.
    static func pin(ofCertificateAt certificatePath: String, in dir: String) throws -> String {
        let base64 = try shell(
            "openssl x509 -pubkey -noout -in '\(certificatePath)' | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
            in: dir)
        return "sha256/\(base64)"
    }
}

// MARK: - Fixtures

extension TestCertificates {
    /// Pins of leaf, intermediate and root.
    var pins: (leaf: SPKIPin, intermediate: SPKIPin, root: SPKIPin) {
        get throws {
            (
                try SPKIHasher.pin(for: leaf.certificate),
                try SPKIHasher.pin(for: intermediate.certificate),
                try SPKIHasher.pin(for: root.certificate)
            )
        }
    }

    /// Writes the root bundle into a fresh directory and returns its path (for `caFile`).
    func caFile() throws -> String {
        try write(to: TestCertificates.makeTemporaryDirectory(prefix: "ca")).caBundle
    }
}

/// A pin no test certificate has.
let unrelatedPin = SPKIPin(digest: Array(repeating: 7, count: 32))
