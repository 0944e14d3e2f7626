/// The upstream attempts of one exchange, in order. Most exchanges make one:
/// it is kept inline, so recording and reading it allocates nothing; retries
/// go to an array.
public struct AttemptList: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    private var head: AttemptTimings?
    private var tail: [AttemptTimings] = []

    public init() {}

    public init(_ attempts: [AttemptTimings]) {
        head = attempts.first
        tail = Array(attempts.dropFirst())
    }

    public init(arrayLiteral attempts: AttemptTimings...) {
        self.init(attempts)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { head == nil ? 0 : 1 + tail.count }

    public subscript(position: Int) -> AttemptTimings {
        get {
            if position == 0, let head { return head }
            return tail[position - 1]
        }
        set {
            if position == 0, head != nil {
                head = newValue
            } else {
                tail[position - 1] = newValue
            }
        }
    }

    public mutating func append(_ attempt: AttemptTimings) {
        if head == nil {
            head = attempt
        } else {
            tail.append(attempt)
        }
    }
}
