import Foundation
@testable import GatewayApp
import GatewayConfig
import GatewayTesting
import Testing

/// The open-descriptor limit: raised to the hard limit at start, and a
/// `max_client_connections` the limit cannot carry is reported with the fix.
@Suite(.timeLimit(.minutes(2)))
struct DescriptorLimitTests {
    /// `Max open files` (soft, hard) of a process, from /proc.
    static func openFileLimits(of pid: Int32) -> (soft: Int, hard: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Max open files") {
            let numbers = line.split(separator: " ").compactMap { Int($0) }
            if numbers.count >= 2 { return (numbers[0], numbers[1]) }
        }
        return nil
    }

    @Test func theGatewayRaisesItsSoftLimitAndWarnsWhenTheCapDoesNotFit() async throws {
        let path = TestScratch.path("gw", suffix: ".yaml")
        try """
            listen:
              proxy: 127.0.0.1:0
              admin: 127.0.0.1:0
            limits:
              max_client_connections: 10000

            """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gateway = try GatewayProcess(arguments: ["run", "--config", path], openFiles: (soft: 256, hard: 4096))
        #expect(await gateway.listeningPort("proxy") != nil, "\(gateway.log)")
        let limits = try #require(Self.openFileLimits(of: gateway.pid))
        #expect(limits.soft == 4096 && limits.hard == 4096)
        #expect(gateway.log.contains("the open-file limit (4096) is below what limits.max_client_connections (10000) may need (20000"), "\(gateway.log)")
        #expect(gateway.log.contains("set max_client_connections to 1920 or less"))
        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit() == 0)
    }

    @Test func aLimitThatFitsIsRaisedWithoutAWarning() {
        let raised = DescriptorLimit.raiseSoftLimit()
        #expect(raised.map { $0.soft == $0.hard || $0.soft == 1 << 20 } == true)
        #expect(DescriptorLimit.needed(by: ListenerLimits(maxClientConnections: 100)) == 200)
    }
}
