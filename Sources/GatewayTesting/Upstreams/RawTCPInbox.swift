import NIOConcurrencyHelpers
import NIOCore

/// Bytes received on a raw TCP connection, and the tasks waiting for them.
///
/// Filled by ``RawTCPInboxHandler`` on the event loop, drained by ``RawTCPConnection`` from any
/// task. Reading stops while more than ``limit`` bytes are buffered (back-pressure).
final class RawTCPInbox: Sendable {
    struct Snapshot {
        var bytes: [UInt8] = []
        /// The peer closed its side (FIN), reset, or the channel closed.
        var isClosed = false
        var error: (any Error)?
    }

    private struct Storage {
        var snapshot = Snapshot()
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID: UInt64 = 0
        var readPaused = false
    }

    static let limit = 64 * 1024 * 1024
    private let storage = NIOLockedValueBox(Storage())

    // MARK: Producer side (event loop)

    /// Appends bytes; past ``limit`` buffered bytes, marks reading as paused.
    func append(_ buffer: ByteBuffer) {
        let waiters = self.storage.withLockedValue { storage -> [CheckedContinuation<Void, Never>] in
            storage.snapshot.bytes.append(contentsOf: buffer.readableBytesView)
            if storage.snapshot.bytes.count >= Self.limit {
                storage.readPaused = true
            }
            let waiters = Array(storage.waiters.values)
            storage.waiters.removeAll()
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// True while the buffer is full and the channel must not read.
    var isReadPaused: Bool {
        self.storage.withLockedValue { $0.readPaused }
    }

    func close(error: (any Error)?) {
        self.update { snapshot in
            if snapshot.error == nil, let error { snapshot.error = error }
            snapshot.isClosed = true
        }
    }

    private func update(_ body: (inout Snapshot) -> Void) {
        let waiters = self.storage.withLockedValue { storage -> [CheckedContinuation<Void, Never>] in
            body(&storage.snapshot)
            let waiters = Array(storage.waiters.values)
            storage.waiters.removeAll()
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: Consumer side (any task)

    /// Runs `body` on the buffered state under the lock. If it made room while reading was
    /// paused, returns true: the caller must call `channel.read()`.
    func take<Result>(_ body: (inout Snapshot) -> Result) -> (result: Result, resumeReading: Bool) {
        self.storage.withLockedValue { storage in
            let result = body(&storage.snapshot)
            let resume = storage.readPaused && storage.snapshot.bytes.count < Self.limit
            if resume { storage.readPaused = false }
            return (result, resume)
        }
    }

    /// Waits until `isSatisfied` holds for the buffered state, or `deadline` passes.
    /// Returns whether it holds.
    func wait(
        until deadline: ContinuousClock.Instant,
        eventLoop: any EventLoop,
        _ isSatisfied: @escaping (Snapshot) -> Bool
    ) async -> Bool {
        while true {
            if self.storage.withLockedValue({ isSatisfied($0.snapshot) }) { return true }
            let now = ContinuousClock.now
            guard now < deadline, !Task.isCancelled else { return false }
            await self.waitForChange(until: deadline, eventLoop: eventLoop, isSatisfied)
        }
    }

    /// Suspends until the state changes (or the deadline passes, or the task is cancelled).
    private func waitForChange(
        until deadline: ContinuousClock.Instant,
        eventLoop: any EventLoop,
        _ isSatisfied: @escaping (Snapshot) -> Bool
    ) async {
        let id = self.storage.withLockedValue { storage -> UInt64 in
            storage.nextWaiterID += 1
            return storage.nextWaiterID
        }
        let remaining = max(ContinuousClock.now.duration(to: deadline), .zero) + .milliseconds(1)
        let timer = eventLoop.scheduleTask(in: TimeAmount(remaining)) {
            self.resumeWaiter(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = self.storage.withLockedValue { storage -> Bool in
                    if isSatisfied(storage.snapshot) || Task.isCancelled || ContinuousClock.now >= deadline {
                        return true
                    }
                    storage.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            self.resumeWaiter(id)
        }
        timer.cancel()
    }

    private func resumeWaiter(_ id: UInt64) {
        let waiter = self.storage.withLockedValue { $0.waiters.removeValue(forKey: id) }
        waiter?.resume()
    }
}

/// Feeds a ``RawTCPInbox`` from a channel with `autoRead` off, reading only while it has room.
final class RawTCPInboxHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    let inbox: RawTCPInbox

    init(inbox: RawTCPInbox) {
        self.inbox = inbox
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            context.read()
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.read()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.inbox.append(Self.unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !self.inbox.isReadPaused {
            context.read()
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            self.inbox.close(error: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.inbox.close(error: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.inbox.close(error: error)
        context.close(promise: nil)
    }
}
