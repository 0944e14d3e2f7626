/// The upstream attempts of one exchange, in order. Most exchanges make one:
/// it is kept inline, so recording and reading it allocates nothing; retries
/// go to an array.
public struct AttemptList: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    private var head: AttemptTimings?
    private var tail: [AttemptTimings] = []
    /// Kept apart: `head == nil` copied the whole timings (and retained what
    /// they hold) each time a loop over the list asked for its end.
    private var size = 0

    public init() {}

    public init(_ attempts: [AttemptTimings]) {
        head = attempts.first
        tail = Array(attempts.dropFirst())
        size = attempts.count
    }

    public init(arrayLiteral attempts: AttemptTimings...) {
        self.init(attempts)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { size }

    public subscript(position: Int) -> AttemptTimings {
        get {
            if position == 0 { return head! }
            return tail[position - 1]
        }
        set {
            if position == 0 {
                precondition(size > 0, "index out of range")
                head = newValue
            } else {
                tail[position - 1] = newValue
            }
        }
    }

    /// Changes the attempt at `position` in place (the subscript's setter copies it out and back).
    public mutating func update(_ position: Int, _ body: (inout AttemptTimings) -> Void) {
        precondition(position >= 0 && position < size, "index out of range")
        if position == 0 {
            body(&head!)
        } else {
            body(&tail[position - 1])
        }
    }

    public mutating func append(_ attempt: AttemptTimings) {
        if size == 0 {
            head = attempt
        } else {
            tail.append(attempt)
        }
        size += 1
    }

    /// Calls `body` with each attempt in order, borrowed where it is kept (an
    /// `IndexingIterator` copies each attempt out, and the list with it).
    public func forEachAttempt(_ body: (borrowing AttemptTimings) -> Void) {
        guard size > 0 else { return }
        body(head!)
        for index in tail.indices { body(tail[index]) }
    }

    /// The last attempt's wire protocol, read in place.
    public var lastWireVersion: WireHTTPVersion? {
        size == 0 ? nil : size == 1 ? head?.wireVersion : tail[size - 2].wireVersion
    }
}
