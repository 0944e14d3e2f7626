import Foundation
import GatewayListener
import GatewayTesting
import Testing

/// The files the gateway writes outside the trace writer that hold request
/// data or secrets: `gateway trace har -o FILE` (bodies, headers) and the
/// interception CA key are 0600 from their first byte, whatever the umask, in
/// directories the gateway creates 0700.
@Suite(.timeLimit(.minutes(1)))
struct PrivateOutputFilesTests {
    /// Under umask 000 (set for the child only, by the shell that execs it):
    /// the first version wrote the HAR with Foundation's default mode, 0666 here
    /// (0644 under the usual umask 022).
    @Test func traceHARFileIs0600AndASymlinkThereIsReplaced() async throws {
        let binary = GatewayProcess.executableURL.path
        try #require(FileManager.default.fileExists(atPath: binary), "build the executable: swift build")
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-har-mode")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = "\(dir)/trace.jsonl"
        try TraceReplayTests.writeTrace(trace, [TraceReplayTests.record("r1")])
        let victim = "\(dir)/victim"
        try Data("original".utf8).write(to: URL(fileURLWithPath: victim))
        for output in ["\(dir)/out/run.har", "\(dir)/linked.har"] {
            if output.hasSuffix("linked.har") {
                try FileManager.default.createSymbolicLink(atPath: output, withDestinationPath: victim)
            }
            let result = try await ProcessRunner.run(
                "/bin/sh", ["-c", #"umask 000 && exec "$0" "$@""#, binary, "trace", "har", "--file", trace, "-o", output]
            )
            #expect(result.status == 0, "\(result.stderrString)")
            #expect(FileModes.permissions(output) == 0o600, "\(output)")
            #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: output)), as: UTF8.self).contains("\"entries\""))
        }
        #expect(FileModes.permissions("\(dir)/out") == 0o700, "a missing directory is made 0700")
        #expect(FileManager.default.contents(atPath: victim) == Data("original".utf8), "the symlink was replaced, not written through")
    }

    /// The CA key is 0600 and the certificate 0644 (set on the descriptor before
    /// the first byte); `state_dir` and its missing parents are made 0700.
    @Test func caKeyIs0600InDirectoriesMade0700() throws {
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-ca-mode")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cert = "\(dir)/state/ca/ca.pem", key = "\(dir)/state/ca/ca-key.pem"
        let created = try FileModes.withUmask(0) {
            try LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key).created
        }
        #expect(created)
        #expect(FileModes.permissions(key) == 0o600)
        #expect(FileModes.permissions(key + ".lock") == 0o600)
        #expect(FileModes.permissions(cert) == 0o644)
        #expect(FileModes.permissions("\(dir)/state") == 0o700)
        #expect(FileModes.permissions("\(dir)/state/ca") == 0o700)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/state/ca")) == ["ca.pem", "ca-key.pem", "ca-key.pem.lock"])
        #expect(try !LocalCertificateAuthority.loadOrCreate(certPath: cert, keyPath: key).created, "loads back")
    }
}
