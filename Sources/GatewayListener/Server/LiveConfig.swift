public import GatewayConfig
import NIOConcurrencyHelpers

/// The current configuration, swapped atomically on reload. Each exchange reads
/// one snapshot at its start and keeps it to the end.
public final class LiveConfig: Sendable {
    private let box: NIOLockedValueBox<GatewayConfig>

    public init(_ config: GatewayConfig) {
        box = NIOLockedValueBox(config)
    }

    public var current: GatewayConfig { box.withLockedValue { $0 } }

    public func replace(with config: GatewayConfig) {
        box.withLockedValue { $0 = config }
    }
}
