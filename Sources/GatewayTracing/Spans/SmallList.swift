/// A list that keeps its first element inline: an exchange nearly always
/// makes one attempt, and an array of one is an allocation.
struct SmallList<Element>: RandomAccessCollection, ExpressibleByArrayLiteral {
    private var head: Element?
    private var tail: [Element] = []

    init() {}

    init(arrayLiteral elements: Element...) {
        for element in elements { append(element) }
    }

    mutating func append(_ element: Element) {
        if head == nil { head = element } else { tail.append(element) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { head == nil ? 0 : 1 + tail.count }

    /// The head, then the tail's elements: no index checked per element.
    struct Iterator: IteratorProtocol {
        fileprivate var head: Element?
        fileprivate var tail: IndexingIterator<[Element]>

        mutating func next() -> Element? {
            if let element = head {
                head = nil
                return element
            }
            return tail.next()
        }
    }

    func makeIterator() -> Iterator {
        Iterator(head: head, tail: tail.makeIterator())
    }

    subscript(position: Int) -> Element {
        precondition(indices.contains(position), "SmallList index out of range")
        return position == 0 ? head! : tail[position - 1]
    }

    /// Each element transformed, as a small list (`map` makes an array).
    func mapSmall<T>(_ transform: (Element) throws -> T) rethrows -> SmallList<T> {
        var result = SmallList<T>()
        guard let head else { return result }
        result.head = try transform(head)
        if !tail.isEmpty { result.tail = try tail.map(transform) }
        return result
    }
}

extension SmallList: Sendable where Element: Sendable {}
