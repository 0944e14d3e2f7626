import Foundation
import GatewayObservability
import Testing

@testable import GatewayFuzzing

/// The fuzz target reads quoted words back with ``ShellWordReader``; this runs a
/// real `/bin/sh` on the shell-quoting corpus to show the reader and the shell agree.
struct ShellReadBackTests {
    /// The arguments `sh` passes to a command for `words` (quoted words joined by spaces), NUL-separated.
    func shellArguments(_ words: [String], environment: [String: String]) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "printf '%s\\0' " + words.joined(separator: " ")]
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    /// `parts` as the shell expands them with `environment`.
    func expanded(_ parts: [ShellQuoting.Part], _ environment: [String: String]) -> String {
        parts.map { part in
            switch part {
            case .literal(let text): text
            case .variable(let name): environment[name] ?? ""
            }
        }.joined()
    }

    @Test(.timeLimit(.minutes(1)))
    func aRealShellReadsTheCurlLinesAsQuoted() throws {
        let inputs = try CorpusReplayTests.inputs(.shellQuoting).prefix(40)
        #expect(!inputs.isEmpty)
        for input in inputs {
            let fields = input.bytes.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
            let words = fields.map { ShellQuoting.word(ShellQuotingInvariants.parts($0)) }
            let read = try words.map { try ShellWordReader.word($0) }
            var environment = ["PATH": "/usr/bin:/bin"]
            for case .variable(let name) in read.joined() where name != "_" {
                environment[name] = "value of \(name) with 'quotes' and $dollar"
            }
            // `$_` is the shell's own (the last argument): no environment sets it.
            if read.joined().contains(.variable("_")) { continue }
            let got = try shellArguments(words, environment: environment)
            #expect(got == read.map { expanded($0, environment) }, "\(input.name): \(words)")
        }
    }

    /// Characters unsafe on a terminal (C0, DEL, C1, bidi) are written as
    /// `$(printf '\ooo')`: a real shell reads the same text as the reader, and
    /// the quoted word shows none of them (issue 39).
    @Test(.timeLimit(.minutes(1)))
    func unsafeCharactersReadBackThroughTheirSubstitutions() throws {
        let texts = ["a\u{9B}2Jb", "\u{1B}]0;t\u{07}", "\u{202E}x\u{2066}'y", "cr\rlf\nend\t", "\u{7F}\u{85}\u{061C}", "é€ ✓"]
        var words: [String] = []
        var expected: [String] = []
        for text in texts {
            for parts in [[ShellQuoting.Part.literal(text)], [.literal(text + "!$"), .variable("V"), .literal(text)]] {
                let word = ShellQuoting.word(parts)
                try ShellQuotingInvariants.expectTerminalSafe(word)
                #expect(try ShellWordReader.word(word) == ShellQuotingInvariants.expected(parts))
                words.append(word)
                expected.append(expanded(parts, ["V": "v"]))
            }
        }
        #expect(try shellArguments(words, environment: ["PATH": "/usr/bin:/bin", "V": "v"]) == expected)
    }
}
