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

    subscript(position: Int) -> Element {
        precondition(indices.contains(position), "SmallList index out of range")
        return position == 0 ? head! : tail[position - 1]
    }

    /// Each element transformed, as a small list (`map` makes an array).
    func mapSmall<T>(_ transform: (Element) throws -> T) rethrows -> SmallList<T> {
        var result = SmallList<T>()
        for element in self { result.append(try transform(element)) }
        return result
    }
}

extension SmallList: Sendable where Element: Sendable {}
