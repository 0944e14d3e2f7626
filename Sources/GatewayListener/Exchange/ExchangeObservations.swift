import GatewayCore

/// The observations of one exchange, in the order their observers run. The
/// first is kept inline: a route with one observer (metrics, in the default
/// config) makes no array per request.
struct ExchangeObservations: Sequence, ExpressibleByArrayLiteral {
    private var first: (any ExchangeObservation)?
    private var rest: [any ExchangeObservation] = []

    init() {}

    init(arrayLiteral elements: any ExchangeObservation...) {
        self.init(elements)
    }

    init(_ elements: [any ExchangeObservation]) {
        for element in elements { append(element) }
    }

    mutating func append(_ observation: any ExchangeObservation) {
        if first == nil { first = observation } else { rest.append(observation) }
    }

    struct Iterator: IteratorProtocol {
        fileprivate let observations: ExchangeObservations
        fileprivate var index = 0

        mutating func next() -> (any ExchangeObservation)? {
            defer { index += 1 }
            if index == 0 { return observations.first }
            return index - 1 < observations.rest.count ? observations.rest[index - 1] : nil
        }
    }

    func makeIterator() -> Iterator { Iterator(observations: self) }
}
