import GatewayCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// What a machine's action says, in a form tests compare with `==` (the
/// actions carry errors, which are not `Equatable`).
enum Seen: Equatable {
    enum FailureKind: Equatable {
        case error
        case closed(beforeHead: Bool)
        case timedOut(beforeHead: Bool)
        case violation(UpstreamAttemptStateMachine.ProtocolViolation)
    }

    case none
    case read
    case head(status: UInt, length: Int?, hasBody: Bool)
    case body(Int)
    case end(UpstreamAttemptStateMachine.Release)
    case requestSent
    case failed(FailureKind)
    case close
    case stopTimer
    case release(Bool)
    case upgrade(status: UInt)
}

extension UpstreamAttemptStateMachine.Action {
    var seen: Seen {
        switch self {
        case .none: .none
        case .read: .read
        case .forwardHead(let head): .head(status: head.status.code, length: head.declaredLength, hasBody: head.hasBody)
        case .forwardBody(let buffer): .body(buffer.readableBytes)
        case .forwardEnd(let release): .end(release)
        case .requestSent: .requestSent
        case .failAttempt(.error): .failed(.error)
        case .failAttempt(.closed(let beforeHead)): .failed(.closed(beforeHead: beforeHead))
        case .failAttempt(.timedOut(let beforeHead)): .failed(.timedOut(beforeHead: beforeHead))
        case .failAttempt(.protocolViolation(let violation)): .failed(.violation(violation))
        case .close: .close
        case .stopTimer: .stopTimer
        case .release(let reusable): .release(reusable)
        case .upgrade(let head): .upgrade(status: head.status.code)
        }
    }
}

extension UpstreamAttemptStateMachine {
    var attempt: Attempt? {
        if case .attempt(let attempt) = state { return attempt }
        return nil
    }

    /// Starts a GET whose request is written at once; returns its id.
    mutating func startGET(at seconds: Int64) -> Int {
        guard case .start(let id) = startAttempt(isHEAD: false, keepAlive: true, endQueued: true, now: .at(seconds)) else {
            Issue.record("the attempt did not start")
            return 0
        }
        return id
    }

    mutating func startStreamed(at seconds: Int64) -> Int {
        guard case .start(let id) = startAttempt(isHEAD: false, keepAlive: true, endQueued: false, now: .at(seconds)) else {
            Issue.record("the attempt did not start")
            return 0
        }
        return id
    }
}

extension NIODeadline {
    /// A point on the tests' clock, in whole seconds.
    static func at(_ seconds: Int64) -> NIODeadline {
        .uptimeNanoseconds(UInt64(1_000 + seconds) * 1_000_000_000)
    }
}

extension UpstreamAttemptStateMachine {
    /// A head as the framer would report it: its `Content-Length` and keep-alive
    /// read from its fields, a body until close never keep-alive.
    mutating func responseHead(_ head: HTTPResponseHead, untilClose: Bool, now: NIODeadline) -> Action {
        let length = head.headers.first(name: "content-length").flatMap { Int($0) }
        return responseHead(
            status: head.status, fields: ResponseFields(head.headers), declaredLength: length, keepAlive: head.isKeepAlive && !untilClose, now: now
        )
    }
}

extension HTTPResponseHead {
    static func ok(length: Int) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "\(length)"])
    }
}
