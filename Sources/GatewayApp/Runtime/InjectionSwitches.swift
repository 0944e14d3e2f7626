import GatewayConfig
import Synchronization

/// The runtime switches of mocks, replay, faults and recording (`gateway
/// faults|mocks|replay|record on|off|reset`, `POST /injection/...` on the admin port): each kind is on as
/// configured (`enabled`), or turned on or off for every upstream or for one,
/// until switched again or reset. Long-lived (``GatewayServices``): a config
/// reload keeps them. The request path never reads them: a switch rebuilds the
/// routes (``ConfigReloadService/rebuild()``), so a kind switched off is absent
/// from them, as if not configured, and costs nothing.
///
/// Also keeps the seed drawn for an upstream whose `faults` has none: drawn
/// once per run, so a switch or a reload replays the same sequence and
/// `gateway faults list` can tell it.
final class InjectionSwitches: Sendable {
    enum Kind: String, CaseIterable, Sendable {
        case faults, mocks, replay, record
    }

    private struct Override {
        /// Set for every upstream; nil: as configured.
        var all: Bool?
        /// Set for one upstream; wins over `all`.
        var upstreams: [String: Bool] = [:]
    }

    private struct State {
        var overrides: [Kind: Override] = [:]
        var drawnSeeds: [String: UInt64] = [:]
    }

    private let state = Mutex(State())

    /// Switches `kind` on (true), off (false) or back to the config (nil), for
    /// `upstream` or, when nil, for all (which clears the per-upstream switches).
    func set(_ kind: Kind, on: Bool?, upstream: String?) {
        state.withLock { s in
            if let upstream {
                s.overrides[kind, default: Override()].upstreams[upstream] = on
            } else {
                s.overrides[kind] = Override(all: on)
            }
        }
    }

    /// The switch of `kind` for `upstream`: nil when it follows the config.
    func setting(_ kind: Kind, upstream: String) -> Bool? {
        state.withLock { s in
            guard let override = s.overrides[kind] else { return nil }
            return override.upstreams[upstream] ?? override.all
        }
    }

    /// Whether `kind` acts for `upstream`, whose config says `configured`.
    func isOn(_ kind: Kind, upstream: String, configured: Bool) -> Bool {
        setting(kind, upstream: upstream) ?? configured
    }

    /// The seed of `upstream`'s faults: the configured one, else one drawn on first use and kept.
    func seed(upstream: String, configured: UInt64?) -> UInt64 {
        if let configured { return configured }
        return state.withLock { s in
            if let drawn = s.drawnSeeds[upstream] { return drawn }
            let drawn = UInt64.random(in: 0...UInt64(Int64.max))
            s.drawnSeeds[upstream] = drawn
            return drawn
        }
    }

    /// `upstream` as the switches have it: each kind's `enabled` replaced by its switch.
    func applied(to upstream: UpstreamConfig) -> UpstreamConfig {
        var upstream = upstream
        let name = upstream.name
        if let faults = upstream.faults { upstream.faults?.enabled = isOn(.faults, upstream: name, configured: faults.enabled) }
        if let mocks = upstream.mocks { upstream.mocks?.enabled = isOn(.mocks, upstream: name, configured: mocks.enabled) }
        if let replay = upstream.replay { upstream.replay?.enabled = isOn(.replay, upstream: name, configured: replay.enabled) }
        if let record = upstream.record { upstream.record?.enabled = isOn(.record, upstream: name, configured: record.enabled) }
        return upstream
    }
}
