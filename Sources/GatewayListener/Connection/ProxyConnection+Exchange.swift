import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

extension ProxyConnection {
    /// Largest leftover request body read and discarded to keep a connection alive.
    static let drainLimit = 64 * 1024

    /// One request/response exchange (or a tunnel). Reads the request's body parts
    /// from `iterator`; returns it for the next request, or `.close`. `origin` is
    /// set inside an intercepted `CONNECT`: every request goes to it over TLS.
    func exchange(head: HTTPRequestHead, iterator: Inbound.AsyncIterator, outbound: Outbound, origin: InterceptedOrigin? = nil) async -> Next {
        let active = liveConfig.current
        let config = active.config
        let started = ContinuousClock.now
        var iterator = iterator
        var logger = self.logger
        logger[metadataKey: "request"] = "\(requestIDs.next())"
        let clientWantsKeepAlive = head.isKeepAlive

        // 1. Framing and headers: refuse anything ambiguous before reading a body byte.
        let framing: RequestHeadValidator.BodyFraming
        let target: ClientTarget
        do {
            try RequestHeadValidator.checkHeaders(of: head)
            framing = try RequestHeadValidator.framing(of: head)
            guard let parsed = ClientTarget.parse(head.uri, isConnect: head.method == .CONNECT) else {
                throw GatewayError(.badRequest, "malformed request target")
            }
            target = parsed
        } catch {
            await refuse(error, head: head, started: started, logger: logger, outbound: outbound)
            return .close
        }

        // 2. Proxy authentication (inside an intercepted tunnel, the CONNECT was authenticated).
        if origin == nil, let auth = config.proxyAuth {
            let authenticator = ProxyAuthenticator(config: auth)
            if !authenticator.isAuthorized(head.headers) {
                let keepAlive = framing == .none && clientWantsKeepAlive
                if framing == .none { _ = try? await iterator.next() }
                _ = try? await write(authenticator.challenge(), requestMethod: head.method, requestVersion: head.version, keepAlive: keepAlive, outbound: outbound)
                ExchangeLogLine.log(logger, method: "\(head.method)", url: head.uri, status: 407, started: started, bytesIn: 0, bytesOut: 0, upstream: nil, error: .proxyAuthRequired)
                return keepAlive ? .readNext(iterator) : .close
            }
        }

        // 3. Where to.
        switch origin.map({ $0.resolve(target) }) ?? target {
        case .origin:
            let error = GatewayError(.unsupportedTarget, "this is a proxy: send absolute-form requests (curl -x http://HOST:PORT http://example.com/); metrics and health are on the admin port")
            await refuse(error, head: head, started: started, logger: logger, outbound: outbound)
            return .close
        case .authority(let host, let port):
            guard origin == nil else {
                let error = GatewayError(.unsupportedTarget, "CONNECT inside an intercepted tunnel is not supported")
                await refuse(error, head: head, started: started, logger: logger, outbound: outbound)
                return .close
            }
            return await tunnel(head: head, host: host, port: port, iterator: iterator, active: active, started: started, logger: logger, outbound: outbound)
        case .absolute(let scheme, let host, let port, let path):
            guard config.access.isAllowed(host: host) else {
                let error = GatewayError(.hostNotAllowed, "the gateway's access rules do not allow \(host)", upstream: "\(host):\(port)")
                await refuse(error, head: head, started: started, logger: logger, outbound: outbound)
                return .close
            }
            return await forward(
                head: head, scheme: scheme, host: host, port: port, target: path, framing: framing,
                iterator: iterator, active: active, started: started, logger: logger, outbound: outbound
            )
        }
    }

    /// The exchange was cancelled before its response started. When that is the
    /// drain timeout (not the client going away), the client still gets an answer:
    /// 503 `shutting_down`. The write runs in a task of its own: this one is
    /// cancelled, and a cancelled task's writes are refused.
    func answerIfDrainTimedOut(head: HTTPRequestHead, started: ContinuousClock.Instant, logger: Logger, outbound: Outbound) async {
        guard tracker.isDraining, channel.isActive else { return }
        let error = GatewayError(.shuttingDown, "the gateway is shutting down and this request did not finish within limits.drain_timeout")
        let connection = self
        await Task {
            await connection.refuse(error, head: head, started: started, logger: logger, outbound: outbound)
        }.value
    }

    /// Answers with a gateway error, logs it, and leaves the connection to be closed.
    func refuse(_ error: any Error, head: HTTPRequestHead, started: ContinuousClock.Instant, logger: Logger, outbound: Outbound) async {
        let gatewayError = (error as? GatewayError) ?? GatewayError(.badRequest, "bad request", cause: error)
        _ = try? await write(gatewayError.response(), requestMethod: head.method, requestVersion: head.version, keepAlive: false, outbound: outbound)
        ExchangeLogLine.log(
            logger, method: "\(head.method)", url: head.uri, status: Int(gatewayError.status.code), started: started,
            bytesIn: 0, bytesOut: 0, upstream: gatewayError.upstream, error: gatewayError.code
        )
    }

    private func forward(
        head: HTTPRequestHead,
        scheme: UpstreamScheme,
        host: String,
        port: Int,
        target: String,
        framing: RequestHeadValidator.BodyFraming,
        iterator: Inbound.AsyncIterator,
        active: ActiveConfig,
        started: ContinuousClock.Instant,
        logger: Logger,
        outbound: Outbound
    ) async -> Next {
        var iterator = iterator
        let requestBody: ClientRequestBody?
        let body: ProxyBody
        switch framing {
        case .none:
            // The parser emits `.end` right after a bodyless head.
            guard case .end = try? await iterator.next() else { return .close }
            requestBody = nil
            body = .empty
        case .length(let length):
            let source = ClientRequestBody(iterator: iterator, expectsContinue: head.expectsContinue, outbound: outbound)
            requestBody = source
            body = .stream(source, declaredLength: length)
        case .chunked:
            let source = ClientRequestBody(iterator: iterator, expectsContinue: head.expectsContinue, outbound: outbound)
            requestBody = source
            body = .stream(source, declaredLength: nil)
        }

        let request = RequestRouter(config: active.config).route(head: head, scheme: scheme, host: host, port: port, target: target, body: body)
        let context = RequestContext(id: logger[metadataKey: "request"]?.description ?? "-", clientAddress: clientAddress, startedAt: started, logger: logger)
        context.record.upstreamName = request.upstreamName

        var response: ProxyResponse
        var errorCode: GatewayError.Code?
        do {
            response = try await active.handler.handle(request, context: context)
        } catch {
            if error is CancellationError || Task.isCancelled {
                await answerIfDrainTimedOut(head: head, started: started, logger: logger, outbound: outbound)
                return .close
            }
            let gatewayError = (error as? GatewayError) ?? GatewayError(.internalError, "the gateway failed to forward the request", cause: error)
            if gatewayError.code == .internalError {
                logger.error("forwarding failed", metadata: ["error": "\(error)"])
            }
            errorCode = gatewayError.code
            response = gatewayError.response()
        }
        if Task.isCancelled {
            // The drain timeout (or the client leaving) came just after the answer: it is not sent.
            response.body.discard()
            await answerIfDrainTimedOut(head: head, started: started, logger: logger, outbound: outbound)
            return .close
        }
        requestBody?.responseWillStart()
        HopByHopHeaders.addVia(to: &response.headers, version: .http1_1, pseudonym: RequestRouter.viaPseudonym)

        var keepAlive = head.isKeepAlive && errorCode == nil && !tracker.isDraining
        if let requestBody, requestBody.isHoldingBackBody { keepAlive = false }
        let bytesOut: Int
        do {
            bytesOut = try await write(response, requestMethod: head.method, requestVersion: head.version, keepAlive: keepAlive, outbound: outbound)
        } catch {
            logger.info("\(head.method) \(ExchangeLogLine.withoutQueryValues(request.url)) aborted: \(error)")
            return .close
        }
        ExchangeLogLine.log(
            logger, method: "\(head.method)", url: request.url, status: Int(response.status.code), started: started,
            bytesIn: requestBody?.bytesRead ?? 0, bytesOut: bytesOut, upstream: request.upstreamName, error: errorCode
        )
        guard keepAlive else { return .close }
        if let requestBody {
            guard let reclaimed = await requestBody.finish(drainingUpTo: Self.drainLimit) else { return .close }
            iterator = reclaimed
        }
        return .readNext(iterator)
    }
}
