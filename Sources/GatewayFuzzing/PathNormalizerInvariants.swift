import GatewayConfig

/// An endpoint template is a fixed point (normalizing it again changes
/// nothing), has no query, fragment or dot segment (`/a/../users/42` is the
/// endpoint `/users/{id}`, not a series or rate-limit bucket of its own), and
/// keeps no segment that is all digits or longer than 64 bytes.
enum PathNormalizerInvariants {
    static func check(_ input: [UInt8]) throws(InvariantViolation) {
        let target = String(decoding: input, as: UTF8.self)
        let template = PathNormalizer.normalize(Substring(target))
        func require(_ condition: Bool, _ message: String) throws(InvariantViolation) {
            try InvariantViolation.require(condition, .pathNormalizer, "\(message): \(target.debugDescription) -> \(template.debugDescription)")
        }
        var copy = target
        let fromBytes = copy.withUTF8 { PathNormalizer.normalize(path: PathNormalizer.pathPart(of: $0)) }
        try require(fromBytes == template, "the byte and the string forms agree (\(fromBytes.debugDescription))")
        // Bytes, not characters: `/` followed by a combining mark is another character.
        let bytes = Array(template.utf8)
        try require(!bytes.isEmpty, "never empty")
        try require(!bytes.contains(UInt8(ascii: "?")) && !bytes.contains(UInt8(ascii: "#")), "no query or fragment")
        let again = PathNormalizer.normalize(Substring(template))
        try require(again == template, "idempotent (again: \(again.debugDescription))")
        if input.first == UInt8(ascii: "/") {
            try require(bytes.first == UInt8(ascii: "/"), "an absolute path stays absolute")
        }
        for segment in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            try require(!segment.elementsEqual(".".utf8) && !segment.elementsEqual("..".utf8), "no dot segment")
            try require(segment.count <= 64, "no segment over 64 bytes")
            let allDigits = !segment.isEmpty && segment.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            try require(!allDigits, "no all-digit segment")
        }
    }
}
