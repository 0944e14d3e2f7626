import Foundation
import GatewayTesting
import Testing

/// A client that reads its response slowly costs the gateway at most
/// `limits.response_buffer`: its connection's write buffer (half) and one read
/// from the upstream (half). Before the bound, each slow reader held one full
/// read cycle of the upstream (4 reads of up to 128 KiB) on top of the write
/// buffer: about 340 KiB here, whatever the setting.
@Suite(.timeLimit(.minutes(2)))
struct SlowReaderMemoryTests {
    static let readers = 20
    /// More than the kernel's socket buffers on the way take (a few MB).
    static let bodyBytes = 16_000_000

    @Test func slowReadersHoldAtMostTheResponseBufferEachAndGetEveryByte() async throws {
        let peer = try SlowReaderPeer()
        defer { peer.stop() }
        let originPort = try await peer.originPort()
        let path = TestScratch.path("gw", suffix: ".yaml")
        try """
            listen:
              proxy: 127.0.0.1:0
              admin: 127.0.0.1:0
            log_level: notice
            limits:
              response_buffer: 64KiB

            """.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let gateway = try GatewayProcess(arguments: ["run", "--config", path])
        defer { gateway.signal(SIGKILL) }
        let proxyPort = try #require(await gateway.listeningPort("proxy"), "\(gateway.log)")

        // One whole response first: what the first exchange sets up once is not counted.
        let warm = try await ProcessRunner.run(
            "curl", ["-sS", "-o", "/dev/null", "-w", "%{size_download}", "-x", "http://127.0.0.1:\(proxyPort)", "http://127.0.0.1:\(originPort)/big"],
            environment: ["NO_PROXY": "", "no_proxy": ""]
        )
        #expect(warm.stdoutString == "\(Self.bodyBytes)", "\(warm.stderrString)")
        let before = try #require(Self.heldBytes(by: gateway.pid))
        let residentBefore = Self.residentKiB(of: gateway.pid) ?? 0

        try peer.send("read \(proxyPort) \(originPort) \(Self.readers)")
        #expect(await peer.waitFor("ready"), "\(peer.output)")
        // The upstream reads stop once each client's buffer is full.
        try await Task.sleep(for: .seconds(1))
        let perReader = (try #require(Self.heldBytes(by: gateway.pid)) - before) / Self.readers / 1024
        let residentPerReader = ((Self.residentKiB(of: gateway.pid) ?? 0) - residentBefore) / Self.readers
        // 64 KiB, and what a read on another event loop takes before the pause reaches it.
        #expect(perReader < 96, "each slow reader held \(perReader) KiB of the response (resident memory +\(residentPerReader) KiB each)")

        // Paused reads resume as the clients drain: nothing is lost.
        try peer.send("drain")
        #expect(await peer.waitFor("drained \(Self.readers * Self.bodyBytes)", timeout: .seconds(60)), "\(peer.output)")
    }

    /// Bytes a process read and has not written (its `rchar` less its `wchar`):
    /// here, the response bytes the gateway holds (requests and log lines are small beside them).
    static func heldBytes(by pid: Int32) -> Int? {
        guard let io = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            io.split(separator: "\n").first { $0.hasPrefix("\(name): ") }.flatMap { Int($0.dropFirst(name.count + 2)) }
        }
        guard let read = field("rchar"), let written = field("wchar") else { return nil }
        return read - written
    }

    /// `VmRSS` of a process, in KiB.
    /// `VmRSS` of a process, in KiB.
    static func residentKiB(of pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ")[1]) }
    }
}

/// A Python origin that sends `SlowReaderMemoryTests.bodyBytes` for any GET
/// and keeps the connection open (an origin that closes after the body would
/// have NIO read all the kernel holds of it at the close, paused or not),
/// and clients told on stdin: `read PROXY ORIGIN N` opens N connections through
/// the proxy with a 4 KiB receive buffer, reads a little of each response and
/// prints `ready`; `drain` reads every response to its end and prints `drained TOTAL`.
final class SlowReaderPeer: Sendable {
    private let process: Process
    private let input: FileHandle
    private let reader: PipeReader

    static let script = #"""
        import socket, sys, threading
        SIZE = int(sys.argv[1])
        def serve(c):
            # Keep-alive, as an API's server: the connection stays open after a response.
            with c:
                data = b""
                while True:
                    while b"\r\n\r\n" not in data:
                        part = c.recv(4096)
                        if not part: return
                        data += part
                    data = data.split(b"\r\n\r\n", 1)[1]
                    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % SIZE)
                    chunk = b"x" * 65536
                    sent = 0
                    try:
                        while sent < SIZE:
                            sent += c.send(chunk[: SIZE - sent])
                    except OSError:
                        return
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(128)
        def accept():
            while True:
                c, _ = server.accept()
                threading.Thread(target=serve, args=(c,), daemon=True).start()
        threading.Thread(target=accept, daemon=True).start()
        print("listening %d" % server.getsockname()[1], flush=True)
        clients = []
        for line in sys.stdin:
            words = line.split()
            if words[0] == "read":
                proxy, origin, count = int(words[1]), words[2], int(words[3])
                for _ in range(count):
                    s = socket.socket()
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                    s.connect(("127.0.0.1", proxy))
                    s.sendall(b"GET http://127.0.0.1:%s/big HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (origin.encode(), origin.encode()))
                    head = b""
                    while b"\r\n\r\n" not in head:
                        head += s.recv(1024)
                    clients.append((s, len(head.split(b"\r\n\r\n", 1)[1])))
                print("ready", flush=True)
            elif words[0] == "drain":
                total = 0
                for s, got in clients:
                    s.settimeout(30)
                    while got < SIZE:
                        part = s.recv(65536)
                        if not part: break
                        got += len(part)
                    total += got
                    s.close()
                print("drained %d" % total, flush=True)
        """#

    init() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(which("python3")))
        process.arguments = ["-u", "-c", Self.script, "\(SlowReaderMemoryTests.bodyBytes)"]
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try ProcessRunner.launch(process)
        self.process = process
        input = stdin.fileHandleForWriting
        reader = PipeReader(stdout.fileHandleForReading)
    }

    var output: String { String(decoding: reader.bytes, as: UTF8.self) }

    func originPort() async throws -> Int {
        #expect(await waitFor("listening "), "\(output)")
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("listening ") })
        return try #require(Int(line.dropFirst("listening ".count)))
    }

    func send(_ line: String) throws {
        try input.write(contentsOf: Array("\(line)\n".utf8))
    }

    func waitFor(_ text: String, timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if output.contains(text) { return true }
            if !process.isRunning { return output.contains(text) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    func stop() {
        if process.isRunning { process.terminate() }
    }
}
