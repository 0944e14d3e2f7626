import GatewayPolicies
import NIOCore
import NIOPosix

extension RateLimiter {
    /// ``RateLimiter/admit(on:)`` on an event loop of the shared group, its
    /// wait awaited: true once the request may go (at once, or at its turn),
    /// false when it is rejected. Throws the 503 of `on_unavailable: fail`.
    func admitted() async throws -> Bool {
        switch admit(on: MultiThreadedEventLoopGroup.singleton.any()) {
        case .admitted:
            return true
        case .rejected:
            return false
        case .queued(let granted, _):
            try await granted.get()
            return true
        case .unavailable(let error):
            throw error
        }
    }
}
