import Foundation
import GatewayTesting
import Testing

/// 1 GiB each way through the gateway: bodies stream, memory stays flat.
/// The gateway runs in this process, so the test measures this process's RSS
/// (VmRSS from /proc/self/status) before and after; the bound is generous for
/// a debug build but far below the body size.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct StreamingTests {
    static let size = 1 << 30

    @Test func oneGiBDownloadStreamsWithFlatMemory() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let before = residentMemoryBytes()
        let result = try await gateway.curl(
            ["-o", "/dev/null", "-w", "%{size_download} %{http_code}", upstream.url("/bytes/\(Self.size)?chunk=262144")],
            timeout: .seconds(240)
        )
        let growth = residentMemoryBytes() - before
        #expect(result.stdoutString == "\(Self.size) 200", "\(result.stderrString)")
        #expect(growth < 100 << 20, "RSS grew by \(growth >> 20) MiB")
    }

    @Test func oneGiBUploadStreamsWithFlatMemory() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        // curl streams the body from a pipe fed by head -c (`-T -`: a chunked PUT;
        // no 1 GiB file on disk, nothing buffered in curl).
        let before = residentMemoryBytes()
        let script = "head -c \(Self.size) /dev/zero | curl -sS -x \(gateway.proxyURL) -T - \(upstream.url("/upload"))"
        let result = try await ProcessRunner.run("sh", ["-c", script], timeout: .seconds(240))
        let growth = residentMemoryBytes() - before
        #expect(result.stdoutString.contains("\"bytes\":\(Self.size)"), "\(result.stdoutString) \(result.stderrString)")
        #expect(growth < 100 << 20, "RSS grew by \(growth >> 20) MiB")
    }
}

/// This process's resident set size.
func residentMemoryBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
        return kb * 1024
    }
    return 0
}
