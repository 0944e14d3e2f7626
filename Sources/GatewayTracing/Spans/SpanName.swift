import NIOHTTP1

/// A span's name, `GET /users/{id}`: the method (`HTTP` for one the HTTP
/// semantic conventions do not know) and the endpoint template, the
/// low-cardinality name both spans of an exchange take. Kept as its two
/// parts: the writer copies them into the span (``OTLPSpanWriter``), no
/// name string is made.
struct SpanName: Sendable, Equatable, CustomStringConvertible {
    /// The method as the conventions name it, or `HTTP`.
    let method: String
    /// The endpoint template.
    let route: String

    init(method: HTTPMethod, route: String) {
        self.method = SpanPlan.knownMethod(method) ?? "HTTP"
        self.route = route
    }

    /// The name's UTF-8 bytes: method, space, route.
    var utf8Count: Int { method.utf8.count + 1 + route.utf8.count }

    /// The name, made (the tests', and a reader's).
    var description: String {
        var name = ""
        name.reserveCapacity(utf8Count)
        name += method
        name += " "
        name += route
        return name
    }
}
