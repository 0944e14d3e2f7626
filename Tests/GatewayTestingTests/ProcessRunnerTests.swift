import Foundation
import GatewayTesting
import Testing

@Suite("TestSupport: ProcessRunner")
struct TestSupportProcessRunnerTests {
    @Test(.timeLimit(.minutes(1)))
    func capturesOutputStatusAndStdin() async throws {
        let echo = try await ProcessRunner.run("sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(echo.status == 3)
        #expect(echo.stdoutString == "out\n")
        #expect(echo.stderrString == "err\n")
        #expect(!echo.timedOut && !echo.succeeded)

        let cat = try await ProcessRunner.run("cat", [], stdin: Array("piped".utf8))
        #expect(cat.succeeded)
        #expect(cat.stdoutString == "piped")

        let env = try await ProcessRunner.run("sh", ["-c", "echo $TESTSUPPORT_VALUE"], environment: ["TESTSUPPORT_VALUE": "v1"])
        #expect(env.stdoutString == "v1\n")
    }

    @Test(.timeLimit(.minutes(1)))
    func largeOutputsDoNotDeadlock() async throws {
        // 8 MB on each of stdout and stderr, far more than a pipe buffer.
        let result = try await ProcessRunner.run(
            "sh", ["-c", "head -c 8000000 /dev/zero; head -c 8000000 /dev/zero >&2"]
        )
        #expect(result.succeeded)
        #expect(result.stdout.count == 8_000_000)
        #expect(result.stderr.count == 8_000_000)

        // Large stdin to a process that never reads it must not hang either.
        let ignored = try await ProcessRunner.run("true", [], stdin: [UInt8](repeating: 1, count: 4_000_000))
        #expect(ignored.succeeded)
    }

    @Test(.timeLimit(.minutes(1)))
    func timeoutKillsTheProcess() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await ProcessRunner.run("sleep", ["30"], timeout: .milliseconds(500))
        #expect(result.timedOut)
        #expect(result.terminatedBySignal)
        #expect(!result.succeeded)
        #expect(clock.now - start < .seconds(10))

        // A process ignoring SIGTERM gets SIGKILL.
        let stubborn = try await ProcessRunner.run("sh", ["-c", "trap '' TERM; sleep 30"], timeout: .milliseconds(300))
        #expect(stubborn.timedOut)
        #expect(clock.now - start < .seconds(20))
    }

    #if os(Linux)
    @Test(.timeLimit(.minutes(1)))
    func childrenStartWithNoBlockedSignals() async throws {
        // Swift's worker threads block SIGTERM & co.; the child must not inherit that mask.
        let status = try await ProcessRunner.run("grep", ["SigBlk", "/proc/self/status"])
        #expect(status.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines) == "SigBlk:\t0000000000000000")
    }
    #endif

    @Test
    func whichAndMissingExecutables() async throws {
        #expect(which("sh") != nil)
        #expect(which("/usr/bin/curl") == "/usr/bin/curl")
        #expect(which("definitely-not-a-program-testsupport") == nil)
        await #expect(throws: ProcessRunnerError.executableNotFound("definitely-not-a-program-testsupport")) {
            _ = try await ProcessRunner.run("definitely-not-a-program-testsupport", [])
        }
    }
}
