import Foundation
import GatewayTesting
import Testing

/// An origin that answers HTTP/1.1 without `Connection: close` and closes the
/// connection a moment later, unread (as servers do whose keep-alive timeout
/// is shorter than the pool's): the next request, leased that connection,
/// meets the close before any byte of its response. A GET goes once more on a
/// new connection and is served; a POST may not be repeated, so its client
/// gets the 502. Before, both got `502 connection_reset`.
@Suite(.timeLimit(.minutes(1)))
struct StaleConnectionTests {
    static let script = #"""
        import socket, sys, threading, time
        def serve(c):
            with c:
                data = b""
                while b"\r\n\r\n" not in data:
                    part = c.recv(4096)
                    if not part: return
                    data += part
                print("request " + data.split(b" ")[0].decode() + " " + data.split(b" ")[1].decode(), flush=True)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                time.sleep(0.3)  # the next request arrives meanwhile, and is never read
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        print("listening %d" % server.getsockname()[1], flush=True)
        while True:
            c, _ = server.accept()
            threading.Thread(target=serve, args=(c,), daemon=True).start()
        """#

    @Test func aGETMeetingAStaleConnectionIsSentOnceMoreAndAPOSTIsNot() async throws {
        let (origin, output, port) = try await ListeningPython.start(script: Self.script)
        defer { origin.terminate() }
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop() } }
        let base = "http://127.0.0.1:\(port)"

        // curl sends the second request on its kept-alive connection to the
        // proxy as soon as the first response is in: the gateway leases it the
        // connection the origin is about to close.
        let gets = try await gateway.curl(["-s", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_code}\n", "\(base)/first", "\(base)/second"])
        #expect(gets.stdoutString == "200\n200\n", "\(gets.stderrString)")
        // The origin has closed the second's connection too, and the pool has seen it.
        try await Task.sleep(for: .milliseconds(700))
        let posts = try await gateway.curl([
            "-s", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_code}\n", "-X", "POST", "-H", "Content-Length: 0", "\(base)/third", "\(base)/fourth",
        ])
        #expect(posts.stdoutString == "200\n502\n", "\(posts.stderrString)")

        let seen = String(decoding: output.bytes, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("request ") }
        #expect(seen == ["request GET /first", "request GET /second", "request POST /third"], "\(seen)")
        #expect(gateway.logs.text.contains("POST \(base)/fourth 502"), "\(gateway.logs.text)")
    }
}
