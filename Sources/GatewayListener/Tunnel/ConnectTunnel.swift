import GatewayCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// A blind `CONNECT` tunnel: connect to the target, answer 200, then copy bytes
/// both ways (never read) until both sides are done.
struct ConnectTunnel {
    let host: String
    let port: Int
    let connectTimeout: TimeAmount

    struct Outcome {
        var bytesFromClient: Int
        var bytesFromUpstream: Int
    }

    /// Connects to the target. Errors are `GatewayError`s fit for the client.
    func connect(on eventLoop: any EventLoop) async throws -> any Channel {
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelOption(ChannelOptions.autoRead, value: false)
        do {
            return try await bootstrap.connect(host: host, port: port).get()
        } catch {
            throw ConnectErrorMapping.gatewayError(for: error, host: host, port: port)
        }
    }

    /// Replaces the HTTP handlers of the client channel with a glue to `peer`
    /// (the 200 response must already be written), then waits until both close.
    func splice(
        client: any Channel,
        httpHandlers: ProxyChannelSetup.HTTPHandlers,
        peer: any Channel
    ) async throws -> Outcome {
        typealias Glues = (client: NIOLoopBound<GlueHandler>, peer: NIOLoopBound<GlueHandler>)
        let glues: Glues = try await client.eventLoop.flatSubmit { () -> EventLoopFuture<Glues> in
            let (clientGlue, peerGlue) = GlueHandler.matchedPair()
            let glues = (client: NIOLoopBound(clientGlue, eventLoop: client.eventLoop), peer: NIOLoopBound(peerGlue, eventLoop: client.eventLoop))
            let pipeline = client.pipeline
            do {
                try pipeline.syncOperations.addHandler(clientGlue, position: .after(httpHandlers.observer))
                try peer.pipeline.syncOperations.addHandler(peerGlue)
            } catch {
                return client.eventLoop.makeFailedFuture(error)
            }
            return pipeline.syncOperations.removeHandler(httpHandlers.observer)
                .flatMap { pipeline.syncOperations.removeHandler(httpHandlers.decoder) }
                .flatMap { pipeline.syncOperations.removeHandler(httpHandlers.encoder) }
                .flatMap { pipeline.syncOperations.removeHandler(httpHandlers.timeouts) }
                .flatMap {
                    // Bytes the client sent right after CONNECT were forwarded by the
                    // decoder without a read-complete; flush them now.
                    pipeline.fireChannelReadComplete()
                    return client.setOption(ChannelOptions.allowRemoteHalfClosure, value: true)
                }
                .flatMap { peer.setOption(ChannelOptions.autoRead, value: true) }
                .map {
                    peer.read()
                    return glues
                }
        }.get()
        try? await client.closeFuture.get()
        try? await peer.closeFuture.get()
        return try await client.eventLoop.submit {
            Outcome(bytesFromClient: glues.client.value.bytesRead, bytesFromUpstream: glues.peer.value.bytesRead)
        }.get()
    }
}

/// Maps socket-level connect errors to gateway errors with a cause.
enum ConnectErrorMapping {
    static func gatewayError(for error: any Error, host: String, port: Int) -> GatewayError {
        let upstream = "\(host):\(port)"
        if let error = error as? GatewayError { return error }
        if error is ChannelError, case .connectTimeout = error as! ChannelError {
            return GatewayError(.connectTimeout, "timed out connecting to \(upstream)", upstream: upstream, cause: error)
        }
        if let error = error as? NIOConnectionError {
            if error.dnsAError != nil || error.dnsAAAAError != nil, error.connectionErrors.isEmpty {
                return GatewayError(.dnsFailure, "could not resolve \(host)", upstream: upstream, causeDescription: "DNS lookup failed")
            }
            let cause = error.connectionErrors.first.map { String(describing: $0.error) } ?? String(describing: error)
            return GatewayError(.connectFailed, "could not connect to \(upstream)", upstream: upstream, causeDescription: cause)
        }
        return GatewayError(.connectFailed, "could not connect to \(upstream)", upstream: upstream, cause: error)
    }
}
