import Foundation
import GatewayCore
import GatewayTesting
import Testing

@testable import GatewayUpstream

/// The pool over https with the real `PinningTLSHandlerFactory`: TLS phase timings,
/// reuse, and the verifier's verdict surfacing as the attempt's error.
@Suite("UpstreamPool: https")
struct UpstreamPoolTLSTests {
    @Test(.timeLimit(.minutes(1)))
    func httpsRequestsRecordTLSTimingsAndReuseTheConnection() async throws {
        let certificates = try TestCertificates()
        let directory = try TestCertificates.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try certificates.write(to: directory)
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let factory = PinningTLSHandlerFactory(logger: PoolTest.logger)
        try await PoolTest.withPool(tls: factory) { pool in
            let settings = UpstreamTLSSettings(caFile: paths.caBundle)
            let context = PoolTest.context()
            for _ in 0..<3 {
                let response = try await pool.handle(
                    PoolTest.request(port: upstream.port, "/bytes/100000", scheme: .https, tls: settings),
                    context: context
                )
                #expect(try await PoolTest.collect(response.body) == TestUpstream.pattern(count: 100_000))
            }
            #expect(upstream.connectionsAccepted == 1)
            let attempts = context.record.attempts
            #expect(attempts[0].tls != nil)
            #expect(attempts[0].connect != nil)
            #expect(try #require(attempts[0].connectEnd) <= #require(attempts[0].tlsStart))
            #expect(attempts[1].tls == nil && attempts[1].reusedConnection)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func pinMismatchIsReportedAsSuch() async throws {
        let certificates = try TestCertificates()
        let directory = try TestCertificates.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try certificates.write(to: directory)
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let factory = PinningTLSHandlerFactory(logger: PoolTest.logger)
        try await PoolTest.withPool(tls: factory) { pool in
            let wrongPin = SPKIPin(digest: [UInt8](repeating: 7, count: 32))
            let settings = UpstreamTLSSettings(pins: [wrongPin], caFile: paths.caBundle)
            let context = PoolTest.context()
            let error = await PoolTest.expectGatewayError(.pinMismatch) {
                _ = try await pool.handle(PoolTest.request(port: upstream.port, "/echo", scheme: .https, tls: settings), context: context)
            }
            #expect(error?.upstream != nil)
            #expect(context.record.attempts.first?.errorCode == .pinMismatch)
            #expect(upstream.requestsServed == 0)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func untrustedCertificateIsReportedAsInvalid() async throws {
        let certificates = try TestCertificates()
        let other = try TestCertificates()
        let directory = try TestCertificates.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let otherPaths = try other.write(to: directory)
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let factory = PinningTLSHandlerFactory(logger: PoolTest.logger)
        try await PoolTest.withPool(tls: factory) { pool in
            let settings = UpstreamTLSSettings(caFile: otherPaths.caBundle)
            await PoolTest.expectGatewayError(.certificateInvalid) {
                _ = try await pool.handle(PoolTest.request(port: upstream.port, "/echo", scheme: .https, tls: settings), context: PoolTest.context())
            }
        }
        try await upstream.shutdown()
    }
}
