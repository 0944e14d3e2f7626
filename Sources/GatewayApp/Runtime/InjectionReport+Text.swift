import GatewayConfig

/// The report as lines of text: `gateway faults|mocks|replay|record list`, and the
/// rows of the admin page's section (``InjectionReport/html``).
extension InjectionReport {
    /// One kind of one upstream: a heading line and its rules or settings.
    struct Block: Sendable, Equatable {
        var upstream: String
        var kind: InjectionSwitches.Kind
        var state: String
        var lines: [String]
    }

    /// The blocks of `kind`, or of every kind when nil, upstream by upstream.
    func blocks(_ only: InjectionSwitches.Kind? = nil) -> [Block] {
        upstreams.flatMap { upstream in
            InjectionSwitches.Kind.allCases.filter { only == nil || only == $0 }.compactMap { upstream.block($0) }
        }
    }

    /// What `gateway KIND list` prints.
    func listing(_ kind: InjectionSwitches.Kind) -> String {
        let blocks = blocks(kind)
        guard !blocks.isEmpty else { return "no upstream configures \(kind.rawValue)\n" }
        return blocks.map { block in
            "upstream \(block.upstream): \(block.kind.rawValue) \(block.state)\n" + block.lines.map { "  \($0)\n" }.joined()
        }.joined()
    }
}

extension InjectionReport.Upstream {
    func block(_ kind: InjectionSwitches.Kind) -> InjectionReport.Block? {
        switch kind {
        case .faults:
            guard let faults else { return nil }
            let seed = "seed \(faults.seed)" + (faults.seedDrawn ? " (drawn for this run)" : "")
            return .init(upstream: name, kind: kind, state: faults.state.text + ", " + seed, lines: faults.rules.map(\.text))
        case .mocks:
            guard let mocks else { return nil }
            let rules = mocks.rules.map { "\($0.endpoint)  \($0.status)" + ($0.nth.map { "  nth \($0)" } ?? "") }
            return .init(upstream: name, kind: kind, state: mocks.state.text + ", unmatched: \(mocks.unmatched)", lines: rules)
        case .replay:
            guard let replay else { return nil }
            let line = "\(replay.har)  match: \(replay.match.joined(separator: ", "))  unmatched: \(replay.unmatched)  timing: \(replay.timing)"
            return .init(upstream: name, kind: kind, state: replay.state.text, lines: [line])
        case .record:
            guard let record else { return nil }
            return .init(upstream: name, kind: kind, state: record.state.text, lines: [record.har])
        }
    }
}

extension InjectionReport.Switch {
    /// `on`, `off (switched off)`, `on (switched on; the config has enabled: false)`.
    var text: String {
        let word = on ? "on" : "off"
        guard let switched else { return enabled ? word : "\(word) (enabled: false in the config)" }
        return "\(word) (switched \(switched ? "on" : "off"); the config has enabled: \(enabled))"
    }
}

extension InjectionReport.FaultLine {
    /// `GET /orders  error 429 retry-after 2s  every 3  toward app`.
    var text: String {
        let when = every.map { "every \($0)" } ?? "rate \(ConfigUnits.formatNumber(rate ?? 1))"
        return "\(endpoint)  \(kind) \(action)  \(when)  toward \(toward)"
    }
}
