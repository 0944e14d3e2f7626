import Foundation
import GatewayConfig
import GatewayListener
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import UnixSignals

/// Reloads the config file on SIGHUP. An invalid file is refused and logged; the
/// old config stays. In-flight requests keep the snapshot they started with.
/// Listen addresses and limits of the listener apply at the next start only.
struct ConfigReloadService: Service {
    let liveConfig: LiveConfig
    let configPath: String?
    /// Builds the routes for a config (sharing the long-lived services).
    let makeActive: @Sendable (GatewayConfig) throws -> ActiveConfig
    /// Applied to each reloaded config: CLI overrides (`--debug`, `--log-level`) survive reloads.
    let adjust: @Sendable (inout GatewayConfig) -> Void
    let logger: Logger
    /// One swap at a time: a reload and a switch's rebuild never undo each other.
    private let swapping = NIOLock()

    init(
        liveConfig: LiveConfig, configPath: String?, makeActive: @escaping @Sendable (GatewayConfig) throws -> ActiveConfig,
        adjust: @escaping @Sendable (inout GatewayConfig) -> Void, logger: Logger
    ) {
        self.liveConfig = liveConfig
        self.configPath = configPath
        self.makeActive = makeActive
        self.adjust = adjust
        self.logger = logger
    }

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: [.sighup])
        for await _ in signals.cancelOnGracefulShutdown() {
            reload()
        }
    }

    /// Builds the routes of the current config again (a runtime switch of
    /// mocks, replay or faults changed what they hold) and swaps them in.
    func rebuild() throws {
        try swapping.withLock {
            liveConfig.replace(with: try makeActive(liveConfig.current.config))
        }
    }

    @discardableResult
    func reload() -> Bool {
        swapping.withLock { reloadFromFile() }
    }

    private func reloadFromFile() -> Bool {
        guard let configPath else {
            logger.warning("reload requested, but the gateway was not started from a config file")
            return false
        }
        do {
            var config = try ConfigLoader.load(path: configPath)
            adjust(&config)
            let old = liveConfig.current.config
            if config.listen != old.listen || config.limits != old.limits {
                logger.warning("config reloaded: changes to listen and limits apply after a restart")
            }
            liveConfig.replace(with: try makeActive(config))
            logger.notice("config reloaded from \(configPath) (\(config.upstreams.count) upstream(s))")
            for upstream in config.upstreams {
                if let note = upstream.tls.clientCertificate?.expiryNote() {
                    logger.warning("config: upstream \(upstream.name): \(note)")
                }
            }
            return true
        } catch {
            logger.error("config reload refused, keeping the current config: \(error)")
            return false
        }
    }
}
