import Foundation
import GatewayConfig

/// What mocks, replay, faults and recording each upstream has and whether they
/// act now: `GET /injection` on the admin port (JSON), `gateway
/// faults|mocks|replay|record list`, and the admin page's section. Only
/// upstreams that configure one of them appear.
struct InjectionReport: Codable, Sendable, Equatable {
    var upstreams: [Upstream]

    struct Upstream: Codable, Sendable, Equatable {
        var name: String
        var faults: Faults?
        var mocks: Mocks?
        var replay: Replay?
        var record: Record?
    }

    /// Whether a kind acts (`on`), what the config says (`enabled`), and the
    /// runtime switch (`switched`: true or false, nil when it follows the config).
    struct Switch: Codable, Sendable, Equatable {
        var on: Bool
        var enabled: Bool
        var switched: Bool?
    }

    struct Faults: Codable, Sendable, Equatable {
        var state: Switch
        var seed: UInt64
        /// The seed was drawn for this run (none is written in the config).
        var seedDrawn: Bool
        var rules: [FaultLine]
    }

    struct FaultLine: Codable, Sendable, Equatable {
        /// The template, or `*` for every request.
        var endpoint: String
        /// `error`, `latency`, `reset`, ... (the metric's `kind`).
        var kind: String
        /// What it does: `429 retry-after 2s`, `2s..12s`.
        var action: String
        var rate: Double?
        var every: Int?
        var toward: String
    }

    struct Mocks: Codable, Sendable, Equatable {
        var state: Switch
        var unmatched: String
        var rules: [MockLine]
    }

    struct MockLine: Codable, Sendable, Equatable {
        var endpoint: String
        var status: Int
        var nth: Int?
    }

    struct Replay: Codable, Sendable, Equatable {
        var state: Switch
        var har: String
        var match: [String]
        var unmatched: String
        var timing: String
    }

    struct Record: Codable, Sendable, Equatable {
        var state: Switch
        var har: String
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func decode(_ bytes: [UInt8]) throws -> InjectionReport {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(InjectionReport.self, from: Data(bytes))
    }

    func json() -> [UInt8] {
        Array((try? Self.encoder.encode(self)) ?? Data("{\"upstreams\":[]}".utf8)) + [UInt8(ascii: "\n")]
    }
}

extension InjectionReport {
    /// The report of `config` as `switches` have it.
    init(config: GatewayConfig, switches: InjectionSwitches) {
        upstreams = config.upstreams.compactMap { upstream in
            let name = upstream.name
            func state(_ kind: InjectionSwitches.Kind, _ enabled: Bool) -> Switch {
                let switched = switches.setting(kind, upstream: name)
                return Switch(on: switched ?? enabled, enabled: enabled, switched: switched)
            }
            let faults = upstream.faults.map { faults in
                Faults(
                    state: state(.faults, faults.enabled), seed: switches.seed(upstream: name, configured: faults.seed),
                    seedDrawn: faults.seed == nil, rules: faults.rules.map(FaultLine.init)
                )
            }
            let mocks = upstream.mocks.map { mocks in
                Mocks(
                    state: state(.mocks, mocks.enabled), unmatched: mocks.unmatched.rawValue,
                    rules: mocks.rules.map { MockLine(endpoint: $0.endpoint.description, status: $0.response.status, nth: $0.nth) }
                )
            }
            let replay = upstream.replay.map { replay in
                Replay(
                    state: state(.replay, replay.enabled), har: replay.har,
                    match: ReplayMatch.allCases.filter(replay.match.contains).map(\.rawValue),
                    unmatched: replay.unmatched.rawValue, timing: replay.recordedTiming ? "recorded" : "none"
                )
            }
            let record = upstream.record.map { Record(state: state(.record, $0.enabled), har: $0.har) }
            guard faults != nil || mocks != nil || replay != nil || record != nil else { return nil }
            return Upstream(name: name, faults: faults, mocks: mocks, replay: replay, record: record)
        }
    }

    /// The upstreams that configure `kind`.
    func names(configuring kind: InjectionSwitches.Kind) -> [String] {
        upstreams.filter { $0.state(of: kind) != nil }.map(\.name)
    }
}

extension InjectionReport.Upstream {
    func state(of kind: InjectionSwitches.Kind) -> InjectionReport.Switch? {
        switch kind {
        case .faults: faults?.state
        case .mocks: mocks?.state
        case .replay: replay?.state
        case .record: record?.state
        }
    }
}

extension InjectionReport.FaultLine {
    init(_ rule: FaultRule) {
        self.init(
            endpoint: rule.endpoint?.description ?? "*", kind: rule.kind, action: rule.action.summary,
            rate: rule.every == nil ? rule.rate : nil, every: rule.every, toward: rule.toward.rawValue
        )
    }
}

extension FaultAction {
    /// `429 retry-after 2s`, `2s..12s`, `before the response`: what the fault does, short.
    var summary: String {
        switch self {
        case .error(let response):
            return "\(response.status)" + (response.retryAfter.map { " retry-after \(ConfigUnits.formatDuration($0))" } ?? "")
        case .latency(let low, let high):
            return low == high ? ConfigUnits.formatDuration(low) : "\(ConfigUnits.formatDuration(low))..\(ConfigUnits.formatDuration(high))"
        case .reset:
            return "before the response"
        case .resetMidBody(let after):
            return "after \(after) body bytes"
        case .slowBody(let perSecond):
            return "\(perSecond) bytes/s"
        }
    }
}
