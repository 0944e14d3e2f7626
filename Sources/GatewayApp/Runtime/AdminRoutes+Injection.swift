import GatewayCore
import GatewayObservability

/// The switch of mocks, replay and faults on the admin port (what
/// `gateway faults|mocks|replay|record on|off|reset` sends):
/// `POST /injection/{faults|mocks|replay|record}/{on|off|reset}[?upstream=NAME]`.
/// It sets ``InjectionSwitches`` and builds the routes again, as a reload
/// does, then answers the new ``InjectionReport``. Only a script's POST gets
/// here (``AdminRequestPolicy``).
extension AdminRoutes {
    func injectionReport() -> InjectionReport {
        InjectionReport(config: liveConfig.current.config, switches: switches)
    }

    func switchInjection(_ request: AdminRequest) -> (status: Int, contentType: String, body: [UInt8]) {
        let parts = request.path.split(separator: "/")
        guard parts.count == 3, parts[0] == "injection", let kind = InjectionSwitches.Kind(rawValue: String(parts[1])),
            let setting = Setting(rawValue: String(parts[2]))
        else {
            return Self.refusal(404, "not_found", "POST /injection/{faults|mocks|replay|record}/{on|off|reset}[?upstream=NAME]")
        }
        let upstream = request.queryValue("upstream")
        let configuring = injectionReport().names(configuring: kind)
        if let upstream, !configuring.contains(upstream) {
            return Self.refusal(404, "not_configured", "upstream \(upstream) configures no \(kind.rawValue) (upstreams with \(kind.rawValue): \(Self.list(configuring)))")
        }
        if configuring.isEmpty {
            return Self.refusal(404, "not_configured", "no upstream configures \(kind.rawValue): write the rules in the config first")
        }
        switches.set(kind, on: setting.value, upstream: upstream)
        do {
            try rebuild()
        } catch {
            return Self.refusal(500, "rebuild_failed", "the routes could not be built again: \(error)")
        }
        let word = setting == .reset ? "back to the config" : setting.rawValue
        logger.notice("\(kind.rawValue) switched \(word) for \(upstream.map { "upstream \($0)" } ?? "every upstream") (admin)")
        return (200, "application/json", injectionReport().json())
    }

    /// `on`, `off`, and `reset` (back to the config's `enabled`: the switch is nil).
    enum Setting: String {
        case on, off, reset

        var value: Bool? {
            switch self {
            case .on: true
            case .off: false
            case .reset: nil
            }
        }
    }

    static func refusal(_ status: Int, _ code: String, _ message: String) -> (status: Int, contentType: String, body: [UInt8]) {
        (status, "application/json", Array("{\"error\":\(JSONString.quote(code)),\"message\":\(JSONString.quote(message))}\n".utf8))
    }

    private static func list(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.joined(separator: ", ")
    }
}
