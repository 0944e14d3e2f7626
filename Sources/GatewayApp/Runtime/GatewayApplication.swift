public import GatewayConfig
import GatewayCore
public import GatewayListener
import GatewaySharedState
public import GatewayObservability
import GatewayTracing
public import GatewayUpstream
public import Logging
import NIOCore
public import NIOPosix
import ServiceLifecycle

/// The whole gateway wired together: proxy listener → policies → upstream
/// pool, the admin listener, SIGHUP reload. The CLI runs one; integration tests
/// run several in one process (each on port 0).
public final class GatewayApplication: Sendable {
    public let liveConfig: LiveConfig
    public let proxyServer: ProxyServer
    public let adminServer: AdminServer
    public let pool: UpstreamPool
    public let metrics: GatewayMetrics
    public let configPath: String?
    private let logger: Logger
    private let serviceGroup: ServiceGroup

    /// - Parameters:
    ///   - handleSignals: trap SIGTERM/SIGINT (graceful drain) and SIGHUP (reload). Off in tests.
    ///   - overrides: applied to every reloaded config (CLI flags such as `--debug`; `config` already has them).
    public init(
        config: GatewayConfig,
        configPath: String?,
        logger: Logger,
        handleSignals: Bool = true,
        eventLoopGroup: MultiThreadedEventLoopGroup = .singleton,
        overrides: @escaping @Sendable (inout GatewayConfig) -> Void = { _ in }
    ) {
        self.configPath = configPath
        self.logger = logger
        let metrics = GatewayMetrics(statsWindow: config.metrics.statsWindow)
        self.metrics = metrics
        let tls = PinningTLSHandlerFactory(events: metrics, logger: logger)
        self.tls = tls
        let deniedAddresses = DeniedAddresses()
        let ownListeners = OwnListeners()
        self.ownListeners = ownListeners
        let pool = UpstreamPool(
            configuration: UpstreamPoolConfiguration(config.pool, limits: config.limits),
            eventLoopGroup: eventLoopGroup,
            tls: tls,
            events: metrics,
            deniedAddresses: deniedAddresses,
            ownListeners: ownListeners,
            logger: logger
        )
        self.pool = pool
        let database = config.sharedState.map { SharedStateDatabase(config: $0.postgres, eventLoopGroup: eventLoopGroup, logger: logger) }
        // Tracing is set up once, from the config at start (a reload that changes it is told so).
        var tracingError: String?
        var tracing: GatewayTracer?
        if config.tracing.enabled {
            do {
                tracing = try GatewayTracer.start(config: config.tracing, metrics: metrics, logger: logger, transport: pool)
            } catch {
                tracingError = "tracing: cannot start the span exporter: \(error)"
            }
        }
        let shared = GatewayServices(pool: pool, metrics: metrics, logger: logger, sharedState: database, tracing: tracing)
        let startupSharedState = config.sharedState
        let startupTracing = config.tracing
        self.traceProxyAddress = shared.traceProxyAddress
        self.traceWriters = shared.traceWriters
        self.recorders = shared.recorders
        let makeActive: @Sendable (GatewayConfig) throws -> ActiveConfig = { config in
            if config.sharedState != startupSharedState {
                logger.warning("shared_state changed; the change takes effect when the gateway restarts")
            }
            if config.tracing != startupTracing {
                logger.warning("tracing changed; the change takes effect when the gateway restarts")
            }
            deniedAddresses.replace(with: config.access.deny.compactMap(\.network))
            metrics.setClientCertificateExpiries(config.clientCertificateExpiries)
            let interceptor = try shared.interceptors.interceptor(for: config, events: metrics, logger: logger)
            return ExchangePhases.activeConfig(config, services: shared, interceptor: interceptor)
        }
        let initial: ActiveConfig
        do {
            initial = try makeActive(config)
            self.startupError = tracingError
        } catch {
            // Reported by run(), which then refuses to start.
            initial = ExchangePhases.activeConfig(config, services: shared)
            self.startupError = "\(error)"
        }
        let liveConfig = LiveConfig(initial)
        self.liveConfig = liveConfig
        self.proxyServer = ProxyServer(
            liveConfig: liveConfig, eventLoopGroup: eventLoopGroup, logger: logger, events: shared.metrics, ownListeners: ownListeners
        )
        let ready = proxyServer
        let reloader = ConfigReloadService(liveConfig: liveConfig, configPath: configPath, makeActive: makeActive, adjust: overrides, logger: logger)
        self.adminServer = AdminServer(
            host: config.listen.admin.host,
            port: config.listen.admin.port,
            options: AdminServer.Options(config: config),
            eventLoopGroup: eventLoopGroup,
            logger: logger,
            routes: AdminRoutes(
                metrics: metrics, proxy: ready, traces: shared.traceWriters.recent, liveConfig: liveConfig,
                sharedState: shared.sharedState.map { SharedStateReadiness(health: $0.database.health, config: $0.database.config) },
                proxyProbe: ProxyReadinessProbe(eventLoopGroup: eventLoopGroup),
                switches: shared.injectionSwitches, rebuild: reloader.rebuild, logger: logger
            ).handle
        )
        // Shut down in reverse: the proxy drains first while the admin port still
        // answers, so `/readyz` says 503 and `/metrics` is scraped during the drain.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: adminServer, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: proxyServer, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
        ]
        if let sharedState = shared.sharedState {
            services.append(.init(service: sharedState, failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        if let tracing {
            // First, so shut down last: the spans of the exchanges the proxy drains are exported too.
            services.insert(.init(service: tracing.service, successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore), at: 0)
        }
        if handleSignals {
            services.append(.init(service: reloader))
        }
        var groupConfig = ServiceGroupConfiguration(services: services, logger: logger)
        groupConfig.gracefulShutdownSignals = handleSignals ? [.sigterm, .sigint] : []
        self.serviceGroup = ServiceGroup(configuration: groupConfig)
        self.reloader = reloader
    }

    private let reloader: ConfigReloadService
    /// The proxy and admin listeners as bound: never a target of the proxy.
    private let ownListeners: OwnListeners
    private let traceProxyAddress: TraceProxyAddress
    /// Flushed when `run()` ends: the records of the last exchanges reach the file.
    private let traceWriters: TraceWriterRegistry
    /// Flushed when `run()` ends too: the last recorded exchanges reach their HAR file.
    private let recorders: HARRecorders

    private let ownListenersKnown = OneShotValue<Void>()

    /// Returns once the bound proxy and admin addresses are known as the
    /// gateway's own (never a proxy target): a moment after both listen.
    public func ownListenersRecorded() async {
        try? await ownListenersKnown.wait()
    }

    /// Why the first config could not be applied (e.g. the interception CA); run() throws it.
    private let startupError: String?

    /// Runs until shut down (signal or `shutdown()`); then closes upstream
    /// connections and writes the trace records still queued.
    public func run() async throws {
        if let startupError { throw StartupError(description: startupError) }
        DescriptorLimit.prepare(for: liveConfig.current.config.limits, logger: logger)
        prepareTLS(for: liveConfig.current.config)
        // Trace curl lines name the bound proxy address (port 0 resolved).
        Task { [proxyServer, traceProxyAddress] in
            guard let address = try? await proxyServer.listeningAddress(), let port = address.port else { return }
            traceProxyAddress.set(host: address.ipAddress ?? "127.0.0.1", port: port)
        }
        Task { [proxyServer, adminServer, ownListeners, ownListenersKnown] in
            await ownListeners.record(proxy: proxyServer, admin: adminServer)
            ownListenersKnown.succeed(())
        }
        do {
            try await serviceGroup.run()
        } catch {
            await pool.shutdown()
            await traceWriters.flush()
            recorders.flush()
            throw error
        }
        await pool.shutdown()
        await traceWriters.flush()
        recorders.flush()
    }

    private let tls: PinningTLSHandlerFactory

    /// Loads the trust stores (the system bundle, configured CA files) that the
    /// config's TLS upstreams use, off the event loops, before the first TLS
    /// connection needs them (``TLSPreload``).
    private func prepareTLS(for config: GatewayConfig) {
        let settings = TLSPreload.settings(for: config)
        guard !settings.isEmpty else { return }
        let tls = self.tls
        let logger = self.logger
        Task.detached {
            for setting in settings {
                do {
                    try tls.prepare(setting)
                } catch {
                    logger.warning("could not load TLS trust roots: \(error)")
                }
            }
        }
    }

    /// Starts a graceful shutdown: stop accepting, drain, exit `run()`.
    public func shutdown() async {
        await serviceGroup.triggerGracefulShutdown()
    }

    /// Re-reads the config file; an invalid file is refused (logged) and the
    /// current config stays. Returns whether the new config was applied.
    @discardableResult
    public func reload() -> Bool {
        reloader.reload()
    }
}

extension UpstreamPoolConfiguration {
    init(_ pool: PoolConfig, limits: ListenerLimits) {
        self.init()
        maxBytesPerRead = min(128 * 1024, limits.responseBuffer / 2)
        maxConnectionsPerKey = pool.maxConnectionsPerHost
        idleTimeout = pool.idleTimeout
        connectTimeout = pool.connectTimeout
        requestTimeout = pool.requestTimeout
        maxWaitForConnection = pool.connectTimeout
        maxWebSocketsPerKey = pool.maxWebSocketsPerHost
    }
}

/// The gateway cannot start with its config (the message says which file and what is wrong).
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
}
