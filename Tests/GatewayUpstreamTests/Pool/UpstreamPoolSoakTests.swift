import Foundation
import GatewayCore
import GatewayTesting
import Testing

@testable import GatewayUpstream

/// 1 GiB each way with the resident memory measured. Slow in debug builds, so
/// only with `POOL_SOAK=1` in the environment.
@Suite("UpstreamPool: soak", .enabled(if: ProcessInfo.processInfo.environment["POOL_SOAK"] != nil), .serialized)
struct UpstreamPoolSoakTests {
    static let gibibyte = 1024 * 1024 * 1024

    /// Resident set size of this process, from /proc (0 where unavailable).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * 4096
    }

    @Test(.timeLimit(.minutes(5)))
    func oneGibibyteDownloadKeepsMemoryFlat() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let before = Self.residentBytes()
            let response = try await pool.handle(PoolTest.request(port: upstream.port, "/bytes/\(Self.gibibyte)"), context: PoolTest.context())
            var peak = before
            var count = 0
            var checksum: UInt32 = 0
            try await response.body.forEachChunk { chunk in
                count += chunk.readableBytes
                checksum = TestUpstream.checksum(chunk, continuing: checksum)
                if count % (64 * 1024 * 1024) < chunk.readableBytes { peak = max(peak, Self.residentBytes()) }
            }
            #expect(count == Self.gibibyte)
            #expect(checksum == PoolTest.patternChecksum(count: Self.gibibyte))
            #expect(peak - before < 64 * 1024 * 1024, "resident memory grew by \(peak - before) bytes")
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(5)))
    func oneGibibyteUploadKeepsMemoryFlat() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let before = Self.residentBytes()
            let source = PatternBodySource(total: Self.gibibyte)
            let response = try await pool.handle(
                PoolTest.request(.POST, port: upstream.port, "/upload", body: .stream(source, declaredLength: Self.gibibyte)),
                context: PoolTest.context()
            )
            let result = try UploadResponseBody.decode(try await PoolTest.collect(response.body))
            #expect(result.bytes == Self.gibibyte)
            #expect(result.checksum == source.expectedChecksum)
            let grown = Self.residentBytes() - before
            #expect(grown < 64 * 1024 * 1024, "resident memory grew by \(grown) bytes")
        }
        try await upstream.shutdown()
    }
}
