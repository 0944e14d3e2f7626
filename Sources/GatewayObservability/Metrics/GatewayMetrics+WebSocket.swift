extension GatewayMetrics {
    /// `gateway_websockets_open{upstream}` goes up by one.
    func webSocketOpened(_ endpoint: EndpointKey) {
        webSockets.get([endpoint.upstream]).increment()
    }

    /// `gateway_websockets_open{upstream}` goes down by one, and the bytes the
    /// WebSocket carried count in `gateway_websocket_bytes_total`.
    func webSocketClosed(_ endpoint: EndpointKey, toUpstream: Int, toClient: Int) {
        webSockets.get([endpoint.upstream]).decrement()
        webSocketBytes.get([endpoint.upstream, endpoint.endpoint, "to_upstream"]).increment(by: Int64(toUpstream))
        webSocketBytes.get([endpoint.upstream, endpoint.endpoint, "to_client"]).increment(by: Int64(toClient))
    }
}
