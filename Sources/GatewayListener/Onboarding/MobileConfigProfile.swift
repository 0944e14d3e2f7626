import Foundation

/// An iOS/iPadOS configuration profile (`.mobileconfig`, an XML property list)
/// with one `com.apple.security.root` payload: the CA certificate, DER, in a
/// `<data>` element. Unsigned (Settings shows it as "Not Verified"; the user
/// compares the fingerprint the page shows). Its identifiers and UUIDs come
/// from the CA's fingerprint, so downloading it again gives the same profile
/// (iOS replaces it instead of adding a second), and a new CA a new one.
enum MobileConfigProfile {
    static func xml(authority: OnboardingSite.Authority) -> String {
        let hex = authority.fingerprint.replacingOccurrences(of: ":", with: "").lowercased()
        let short = authority.fingerprint.split(separator: ":").prefix(4).joined(separator: ":")
        let name = "\(authority.name) \(short)"
        let base64 = Data(authority.der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
            \t<key>PayloadContent</key>
            \t<array>
            \t\t<dict>
            \t\t\t<key>PayloadCertificateFileName</key>
            \t\t\t<string>gateway-ca.cer</string>
            \t\t\t<key>PayloadContent</key>
            \t\t\t<data>
            \(base64)
            \t\t\t</data>
            \t\t\t<key>PayloadDescription</key>
            \t\t\t<string>Adds the gateway's interception CA (SHA-256 \(authority.fingerprint))</string>
            \t\t\t<key>PayloadDisplayName</key>
            \t\t\t<string>\(escaped(authority.name))</string>
            \t\t\t<key>PayloadIdentifier</key>
            \t\t\t<string>invalid.gateway.ca.\(hex.prefix(32))</string>
            \t\t\t<key>PayloadType</key>
            \t\t\t<string>com.apple.security.root</string>
            \t\t\t<key>PayloadUUID</key>
            \t\t\t<string>\(uuid(hex, offset: 0))</string>
            \t\t\t<key>PayloadVersion</key>
            \t\t\t<integer>1</integer>
            \t\t</dict>
            \t</array>
            \t<key>PayloadDescription</key>
            \t<string>Trust the gateway's interception CA on this device. Then turn on full trust for it in Settings, General, About, Certificate Trust Settings.</string>
            \t<key>PayloadDisplayName</key>
            \t<string>\(escaped(name))</string>
            \t<key>PayloadIdentifier</key>
            \t<string>invalid.gateway.profile.\(hex.prefix(32))</string>
            \t<key>PayloadRemovalDisallowed</key>
            \t<false/>
            \t<key>PayloadType</key>
            \t<string>Configuration</string>
            \t<key>PayloadUUID</key>
            \t<string>\(uuid(hex, offset: 32))</string>
            \t<key>PayloadVersion</key>
            \t<integer>1</integer>
            </dict>
            </plist>

            """
    }

    /// A UUID made of 32 hex digits of the fingerprint from `offset` (version 4 and variant bits set).
    static func uuid(_ hex: String, offset: Int) -> String {
        var digits = Array(hex.dropFirst(offset).prefix(32))
        while digits.count < 32 { digits.append("0") }
        digits[12] = "4"
        digits[16] = ["8", "9", "a", "b"][Int(String(digits[16]), radix: 16).map { $0 & 3 } ?? 0]
        let text = String(digits).uppercased()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(text[text.index(text.startIndex, offsetBy: range.lowerBound)..<text.index(text.startIndex, offsetBy: range.upperBound)])
        }
        return parts.joined(separator: "-")
    }

    /// XML text: `&`, `<`, `>` and quotes escaped.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }
}
