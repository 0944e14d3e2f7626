import Foundation

/// A certificate pin: the SHA-256 of a certificate's DER SubjectPublicKeyInfo,
/// written `sha256/<base64>` (44 base64 characters, 32 bytes), as in HPKP,
/// OkHttp and Envoy's `verify_certificate_spki`.
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible, Codable {
    /// The 32 digest bytes.
    public let digest: [UInt8]

    public init(digest: [UInt8]) {
        precondition(digest.count == 32, "a SHA-256 digest has 32 bytes")
        self.digest = digest
    }

    /// Parses `sha256/<44 base64 characters>`; nil if the text is anything else.
    public init?(_ text: String) {
        guard text.hasPrefix("sha256/") else { return nil }
        let encoded = text.dropFirst("sha256/".count)
        guard encoded.count == 44,
            let data = Data(base64Encoded: String(encoded)),
            data.count == 32
        else { return nil }
        self.digest = Array(data)
    }

    public var base64: String { Data(digest).base64EncodedString() }
    public var description: String { "sha256/\(base64)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let pin = SPKIPin(text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "not a pin: expected 'sha256/' followed by 44 base64 characters encoding 32 bytes"
                )
            )
        }
        self = pin
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// What to do when a pinned upstream presents no matching key.
public enum PinMode: String, Sendable, Hashable, Codable {
    /// Refuse the connection before any request byte is sent.
    case enforce
    /// Let the request proceed; log and count the mismatch.
    case report
}
