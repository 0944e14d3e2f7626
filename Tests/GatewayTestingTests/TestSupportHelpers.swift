import Foundation
import GatewayTesting

/// Runs `/usr/bin/curl -sS --noproxy '*'` with `arguments` (proxy variables of the
/// environment must not leak into these tests).
func testSupportCurl(
    _ arguments: [String],
    stdin: [UInt8]? = nil,
    timeout: Duration = .seconds(30)
) async throws -> ProcessResult {
    let maxTime = max(timeout.components.seconds - 5, 1)
    return try await ProcessRunner.run(
        "/usr/bin/curl",
        ["-sS", "--noproxy", "*", "--max-time", "\(maxTime)"] + arguments,
        stdin: stdin,
        timeout: timeout
    )
}

/// `count` pseudo-random bytes (xorshift, eight bytes per step: fast even in debug builds).
func testSupportRandomBytes(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var state = seed | 1
    bytes.withUnsafeMutableBytes { raw in
        var offset = 0
        while offset < raw.count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            var word = state
            let length = min(8, raw.count - offset)
            withUnsafeBytes(of: &word) { wordBytes in
                raw.baseAddress!.advanced(by: offset).copyMemory(from: wordBytes.baseAddress!, byteCount: length)
            }
            offset += length
        }
    }
    return bytes
}

/// A raw HTTP/1.1 response split into its head (as text) and body bytes.
struct TestSupportRawResponse {
    var head: String
    var body: [UInt8]

    init(_ bytes: [UInt8]) {
        if let range = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
            self.head = String(decoding: bytes[..<range.lowerBound], as: UTF8.self)
            self.body = Array(bytes[range.upperBound...])
        } else {
            self.head = String(decoding: bytes, as: UTF8.self)
            self.body = []
        }
    }

    var statusLine: String {
        String(self.head.split(separator: "\r\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// Header values for `name` (case-insensitive), in order.
    func headerValues(_ name: String) -> [String] {
        self.head.split(separator: "\r\n").dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            guard line[..<colon].lowercased() == name.lowercased() else { return nil }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
    }
}

/// A self-signed certificate for 127.0.0.1 made with the openssl CLI, in a fresh directory.
struct TestSupportSelfSigned {
    var directory: String
    var certificatePath: String
    var keyPath: String

    static func make() async throws -> TestSupportSelfSigned {
        let directory = TestScratch.path("testsupport-tls")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificatePath = directory + "/cert.pem"
        let keyPath = directory + "/key.pem"
        let result = try await ProcessRunner.run("openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", keyPath, "-out", certificatePath, "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ])
        guard result.succeeded else {
            throw TestSupportFailure("openssl failed: \(result.stderrString)")
        }
        return TestSupportSelfSigned(directory: directory, certificatePath: certificatePath, keyPath: keyPath)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: self.directory)
    }
}

/// The resident set size of this process in bytes (Linux), nil elsewhere.
func testSupportResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
        return kilobytes.map { $0 * 1024 }
    }
    return nil
}

struct TestSupportFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
