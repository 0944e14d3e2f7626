import NIOConcurrencyHelpers
import NIOCore

/// Counters, recorded requests, the responder and the open connections of one ``TestUpstream``,
/// shared between the server task and every connection task.
final class TestUpstreamState: Sendable {
    typealias Responder = @Sendable (RecordedRequest) async -> TestResponse

    private struct Storage {
        var connectionsAccepted = 0
        var requestsServed = 0
        var receivedRequests: [RecordedRequest] = []
        var responder: Responder?
        var openChannels: [ObjectIdentifier: any Channel] = [:]
        var isShutDown = false
    }

    private let storage = NIOLockedValueBox(Storage())

    var connectionsAccepted: Int {
        self.storage.withLockedValue { $0.connectionsAccepted }
    }

    var requestsServed: Int {
        self.storage.withLockedValue { $0.requestsServed }
    }

    var receivedRequests: [RecordedRequest] {
        self.storage.withLockedValue { $0.receivedRequests }
    }

    var responder: Responder? {
        self.storage.withLockedValue { $0.responder }
    }

    func setResponder(_ responder: Responder?) {
        self.storage.withLockedValue { $0.responder = responder }
    }

    /// Counts a request when its head arrives (so the count is final before the client sees a response).
    func countRequest() {
        self.storage.withLockedValue { $0.requestsServed += 1 }
    }

    func record(_ request: RecordedRequest) {
        self.storage.withLockedValue { $0.receivedRequests.append(request) }
    }

    /// Registers a freshly accepted connection; closes it at once if the upstream is shutting down.
    func register(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let accepted = self.storage.withLockedValue { storage -> Bool in
            storage.connectionsAccepted += 1
            guard !storage.isShutDown else { return false }
            storage.openChannels[id] = channel
            return true
        }
        guard accepted else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { _ in
            self.storage.withLockedValue { _ = $0.openChannels.removeValue(forKey: id) }
        }
    }

    /// Marks the upstream as shut down; returns the connections still open, or nil if it already was.
    func beginShutdown() -> [any Channel]? {
        self.storage.withLockedValue { storage -> [any Channel]? in
            guard !storage.isShutDown else { return nil }
            storage.isShutDown = true
            return Array(storage.openChannels.values)
        }
    }
}
