import Foundation
import GatewayFuzzing
import Testing

/// Replays the committed fuzz corpus (Fuzz/Corpus/<target>/, grown and
/// minimised by scripts/fuzz.sh) and the inputs that once broke a property
/// (Fuzz/Regressions/<target>/) through the same checks the fuzz targets run,
/// without libFuzzer, so every input the fuzzer kept stays guarded.
struct CorpusReplayTests {
    static let fuzz = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The corpus of `target`, and the inputs that once broke one of its properties.
    static func inputs(_ target: FuzzTarget) throws -> [(name: String, bytes: [UInt8])] {
        try ["Corpus", "Regressions"].flatMap { folder in
            let directory = fuzz.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
            guard FileManager.default.fileExists(atPath: directory.path) else { return [(name: String, bytes: [UInt8])]() }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
            return try names.map { name in
                ("\(folder)/\(name)", Array(try Data(contentsOf: directory.appendingPathComponent(name))))
            }
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
