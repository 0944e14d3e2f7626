import Foundation
import GatewayFuzzing
import Testing

/// Replays the committed fuzz corpus (Fuzz/Corpus/<target>/, grown and
/// minimised by scripts/fuzz.sh) through the same property checks the fuzz
/// targets run, without libFuzzer, so every input the fuzzer kept stays guarded.
struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus")

    static func inputs(_ target: FuzzTarget) throws -> [(name: String, bytes: [UInt8])] {
        let directory = corpus.appendingPathComponent(target.rawValue)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
        return try names.map { name in
            (name, Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: FuzzTarget.allCases)
    func corpusKeepsItsProperties(_ target: FuzzTarget) throws {
        let inputs = try Self.inputs(target)
        #expect(!inputs.isEmpty, "no corpus for \(target.rawValue)")
        for input in inputs {
            #expect(throws: Never.self, "\(target.rawValue)/\(input.name)") { try target.check(input.bytes) }
        }
    }
}
