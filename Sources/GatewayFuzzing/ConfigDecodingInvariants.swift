import GatewayConfig

/// Any text either loads or fails with an error that names the file, says
/// what is wrong, and locates it by key (or line) unless the whole file is at fault;
/// no error or redacted dump shows a secret's value; and the redacted dump
/// of a config loads again into a config with the same dump.
enum ConfigDecodingInvariants {
    static let file = "/fuzz/gateway.yaml"
    static let secretValue = "fuzz-secret-value-7d1c"
    static let environment = ["FUZZ_TOKEN": secretValue, "TOKEN": secretValue, "PASSWORD": secretValue, "EMPTY": ""]
    /// Errors about the file as a whole, where no key can be named.
    static let wholeFileMessages = ["invalid YAML", "expected a mapping of settings at the top level"]

    static func check(_ input: [UInt8]) throws(InvariantViolation) {
        let yaml = String(decoding: input, as: UTF8.self)
        func require(_ condition: Bool, _ message: String) throws(InvariantViolation) {
            try InvariantViolation.require(condition, .configDecoding, "\(message); input: \(yaml.debugDescription)")
        }
        // Secret files are not read: a fuzzed path could name /dev/zero.
        let secrets: SecretLoading = yaml.contains("_file") ? .skip : .resolve
        let config: GatewayConfig
        do {
            config = try ConfigLoader.parse(yaml: yaml, file: file, environment: environment, secrets: secrets)
        } catch {
            try require(error.file == file, "the error names the file: \(error)")
            try require(!error.message.isEmpty, "the error says what is wrong")
            let located = !error.keyPath.isEmpty || error.message.contains("(line ")
            try require(located || wholeFileMessages.contains { error.message.hasPrefix($0) }, "the error names a key or a line: \(error)")
            try require(!error.description.contains(secretValue), "the error shows no secret: \(error)")
            return
        }
        let dump = config.redactedYAML()
        try require(!dump.contains(secretValue), "the redacted dump shows no secret")
        let reloaded: GatewayConfig
        do {
            reloaded = try ConfigLoader.parse(yaml: dump, file: file, environment: environment, secrets: secrets)
        } catch {
            throw InvariantViolation(.configDecoding, "the redacted dump loads again, failed with \(error):\n\(dump)\ninput: \(yaml.debugDescription)")
        }
        let again = reloaded.redactedYAML()
        try require(again == dump, "the redacted dump reloads to the same dump:\n\(dump)\n---\n\(again)")
    }
}
