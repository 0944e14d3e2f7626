import GatewayTesting
import Testing

/// A client that does not wait for `200 Connection Established`: its TLS
/// ClientHello follows the `CONNECT` in the same write. The connection's
/// framer keeps those bytes (it stops after a `CONNECT`) and hands them to the
/// TLS handler that interception puts in front of it.
extension InterceptionTests {
    @Test func aClientHelloSentWithTheConnectIsIntercepted() async throws {
        let f = try await fixture()
        let gateway = try await GatewayHarness.start(configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let run = try await ProcessRunner.run(
            "python3", ["-c", Self.helloWithConnect, String(f.upstream.port), String(gateway.proxyPort), f.caPath],
            timeout: .seconds(30)
        )
        #expect(run.status == 0, "\(run.stderrString)\n\(gateway.logs.text)")
        #expect(run.stdoutString.hasPrefix("HTTP/1.1 200"), "\(run.stdoutString)")
        #expect(run.stdoutString.contains("issuer=Gateway interception CA"), "the client saw the gateway's leaf: \(run.stdoutString)")
        let last = f.upstream.receivedRequests.last
        #expect(last?.target == "/echo?n=1")
        #expect(last?.header("authorization") == "Bearer \(Self.token.value)", "auth injected inside the tunnel")
    }

    /// Python's TLS over memory buffers: the ClientHello is made before the
    /// connection, then sent in one write with the CONNECT. Prints the status
    /// line of the answer to a GET inside the tunnel, and the leaf's issuer.
    static let helloWithConnect = #"""
    import socket, ssl, sys
    port, proxy_port, ca = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context(cafile=ca).wrap_bio(incoming, outgoing, server_hostname="localhost")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    s = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    s.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode() + outgoing.read())
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit(f"closed before the 200: {received!r}")
        received += chunk
    head, rest = received.split(b"\r\n\r\n", 1)
    if not head.startswith(b"HTTP/1.1 200"):
        sys.exit(f"not a 200: {head!r}")
    incoming.write(rest)

    def receive():
        chunk = s.recv(65536)
        if chunk:
            incoming.write(chunk)
        else:
            incoming.write_eof()

    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            s.sendall(outgoing.read())
            receive()
    s.sendall(outgoing.read())
    tls.write(f"GET /echo?n=1 HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n".encode())
    s.sendall(outgoing.read())
    answer = b""
    while True:
        try:
            data = tls.read(65536)
        except ssl.SSLWantReadError:
            receive()
            continue
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            break
        if not data:
            break
        answer += data
    print(answer.split(b"\r\n")[0].decode())
    issuer = dict(x[0] for x in tls.getpeercert()["issuer"])
    print("issuer=" + issuer.get("commonName", ""))
    """#
}
