/// A client side that holds the exchange in flight: the HTTP/1.1 connection
/// (``ClientConnectionHandler``), an HTTP/2 stream (``ClientHTTP2Stream``).
protocol ExchangeHolder: AnyObject {
    var exchange: Exchange? { get set }
}

extension ExchangeHolder {
    /// The client went away, or a limit passed: the exchange in flight (if
    /// any) is let go first, so that what its cancel causes finds none, then cancelled.
    func cancelExchange() {
        guard let exchange else { return }
        self.exchange = nil
        exchange.cancel()
    }
}
