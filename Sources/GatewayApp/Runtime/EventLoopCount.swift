import Foundation
import NIOCore

/// How many event loops the gateway runs: one per CPU it may actually use.
/// NIO's `System.coreCount` honours cgroup limits but not the CPU affinity mask
/// (`taskset`, `docker --cpuset-cpus` on some setups), so a gateway pinned to one
/// core would otherwise run two loops on it and pay thread hops for nothing.
/// `GATEWAY_EVENT_LOOPS` overrides.
public enum EventLoopCount {
    public static func forThisProcess() -> Int {
        forThisProcess(environment: ProcessInfo.processInfo.environment)
    }

    public static func forThisProcess(environment: [String: String]) -> Int {
        if let text = environment["GATEWAY_EVENT_LOOPS"], let count = Int(text), count > 0 { return count }
        var count = System.coreCount
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let allowed = allowedCPUs(inProcStatus: status) {
            count = min(count, allowed)
        }
        return max(1, count)
    }

    /// CPUs in the `Cpus_allowed_list:` line of `/proc/<pid>/status` (`0-3,6` → 5).
    public static func allowedCPUs(inProcStatus status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return nil }
        let list = line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
        var count = 0
        for range in list.split(separator: ",") {
            let bounds = range.split(separator: "-").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            switch bounds.count {
            case 1: guard bounds[0] != nil else { return nil }; count += 1
            case 2:
                guard let low = bounds[0], let high = bounds[1], high >= low else { return nil }
                count += high - low + 1
            default: return nil
            }
        }
        return count > 0 ? count : nil
    }
}
