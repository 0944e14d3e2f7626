#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
public import NIOHTTP1

extension GatewayError {
    /// A cause as a person reads it: a socket error as the system names it
    /// (`Connection refused (errno 111)`, not NIO's `connection reset (error set):
    /// ...`), a parser error as what was wrong with the bytes.
    public static func describe(_ error: any Error) -> String {
        if let error = error as? IOError {
            return "\(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))"
        }
        if let error = error as? HTTPParserError {
            return describe(error)
        }
        return String(describing: error)
    }

    public static func describe(_ error: HTTPParserError) -> String {
        switch error {
        case .invalidConstant: "unexpected bytes where the HTTP version or a fixed token belongs"
        case .invalidVersion: "invalid HTTP version"
        case .invalidStatus: "invalid status code"
        case .invalidURL: "invalid request target (spaces or control characters?)"
        case .invalidHeaderToken: "invalid header (bad character, or obsolete line folding)"
        case .invalidChunkSize: "invalid chunk size in a chunked body"
        case .invalidContentLength: "invalid Content-Length"
        case .unexpectedContentLength: "ambiguous framing (Content-Length with Transfer-Encoding)"
        case .headerOverflow: "header section too large"
        case .invalidEOFState: "the connection ended in the middle of a message"
        case .closedConnection: "data after the connection was to be closed"
        case .lfExpected: "malformed line ending"
        case .invalidCharactersUsed: "invalid characters"
        case .trailingGarbage: "unexpected bytes after the message"
        case .invalidMethod: "invalid request method"
        default: "malformed HTTP (\(error))"
        }
    }
}
