import GatewayCore
import NIOCore
import NIOHTTP1
import Testing

/// Causes in error bodies and logs read as a person would write them.
@Suite(.timeLimit(.minutes(1)))
struct GatewayErrorCauseTests {
    @Test func socketErrorsUseTheSystemsWords() {
        let refused = IOError(errnoCode: 111, reason: "connection reset (error set)")
        let error = GatewayError(.connectFailed, "could not connect to the upstream", upstream: "127.0.0.1:1", cause: refused)
        #expect(error.cause == "Connection refused (errno 111)")
    }

    @Test func parserErrorsSayWhatWasWrong() {
        #expect(GatewayError.describe(HTTPParserError.invalidConstant) == "unexpected bytes where the HTTP version or a fixed token belongs")
        #expect(GatewayError.describe(HTTPParserError.invalidURL as any Error).contains("request target"))
        #expect(!GatewayError.describe(HTTPParserError.invalidConstant).contains("string"))
    }

    @Test func otherErrorsKeepTheirDescription() {
        struct Custom: Error, CustomStringConvertible { var description: String { "custom failure" } }
        #expect(GatewayError.describe(Custom()) == "custom failure")
    }
}
