/// The parsers fuzzed by the separate `Fuzz/` package (`scripts/fuzz.sh`), each
/// with the properties it must keep for every input. The same checks replay the
/// committed corpus (`Fuzz/Corpus/<rawValue>/`) in the main test suite.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `ClientTarget.parse`: absolute-form, authority-form, origin-form.
    case targetParser = "target-parser"
    /// Raw bytes through the listener's HTTP decoder, then `RequestHeadValidator`.
    case headValidation = "head-validation"
    /// `PathNormalizer`: endpoint templates for metrics and rate limits.
    case pathNormalizer = "path-normalizer"
    /// `ConfigLoader.parse` on YAML text.
    case configDecoding = "config-decoding"
    /// `ShellQuoting` and `CurlCommand`: what a POSIX shell reads back.
    case shellQuoting = "shell-quoting"
    /// An upstream's bytes through `HTTP1ResponseFramer`, and the head `ResponseFraming` writes for the client.
    case responseFraming = "response-framing"
    /// A client's bytes through the listener's `NIOHTTP2Handler`, each stream's request through `HTTP2Translation`.
    case http2Frames = "http2-frames"

    /// Throws the first property `input` breaks.
    public func check(_ input: [UInt8]) throws(InvariantViolation) {
        switch self {
        case .targetParser: try TargetParserInvariants.check(input)
        case .headValidation: try HeadValidationInvariants.check(input)
        case .pathNormalizer: try PathNormalizerInvariants.check(input)
        case .configDecoding: try ConfigDecodingInvariants.check(input)
        case .shellQuoting: try ShellQuotingInvariants.check(input)
        case .responseFraming: try ResponseFramingInvariants.check(input)
        case .http2Frames: try HTTP2FrameInvariants.check(input)
        }
    }

    /// The body of `LLVMFuzzerTestOneInput`: a broken property traps, so that
    /// libFuzzer keeps the input as a crash.
    public func run(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try check(input)
        } catch {
            fatalError(error.description)
        }
    }
}
