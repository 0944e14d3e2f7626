import GatewayConfig
import GatewayCore
@testable import GatewayObservability
import NIOHTTP1
import Testing

/// Issue 39: bodies the redaction passed verbatim (NDJSON, JSON with bytes
/// after it, invalid UTF-8, multipart password fields) and default names it
/// missed. Each check is a boolean with a fixed message: a failure prints no
/// secret.
@Suite("Trace body redaction", .timeLimit(.minutes(1)))
struct TraceBodyRedactionTests {
    static let redactor = TraceRedactor(config: GatewayConfig())

    static func redacted(_ bytes: [UInt8], _ type: String?) -> String {
        String(decoding: redactor.body(bytes, contentType: type), as: UTF8.self)
    }

    static func redacted(_ text: String, _ type: String?) -> String {
        redacted(Array(text.utf8), type)
    }

    @Test func everyLineOfNDJSONIsRedacted() {
        let body = "{\"password\":\"nd-secret-1\",\"a\":1}\n{\"b\":{\"access_token\":\"nd-secret-2\"}}\r\n\n"
        let text = Self.redacted(body, "application/x-ndjson")
        let leaked = text.contains("nd-secret-1") || text.contains("nd-secret-2")
        #expect(!leaked, "a secret field of an NDJSON line is shown")
        let shape = text.hasSuffix("\r\n\n") && text.contains(TraceRedactor.bodyPlaceholder)
        #expect(shape, "the lines keep their endings and show the placeholder")
    }

    @Test func jsonWithBytesAfterItIsScannedByBytes() {
        let text = Self.redacted(#"{"password":"tb-secret-1","a":[1,{"refresh_token":{"x":"tb-\"secret-2"}}]} trailing"#, "application/json")
        let leaked = text.contains("tb-secret-1") || text.contains("secret-2")
        #expect(!leaked, "a secret field of JSON with trailing bytes is shown")
        let expected = text == #"{"password":"[REDACTED]","a":[1,{"refresh_token":"[REDACTED]"}]} trailing"#
        #expect(expected, "the values are replaced, every other byte kept")
    }

    @Test func jsonWithInvalidUTF8IsRedactedAndKeepsItsBytes() {
        let body = Array(#"{"name":""#.utf8) + [0xFF] + Array(#"","password":"iu-secret-1"}"#.utf8)
        let bytes = Self.redactor.body(body, contentType: "application/json")
        let leaked = String(decoding: bytes, as: UTF8.self).contains("iu-secret-1")
        #expect(!leaked, "a secret field of JSON with an invalid byte is shown")
        let kept = bytes.contains(0xFF)
        #expect(kept, "the invalid byte is kept")
    }

    /// A body the byte scan cannot vouch for (a stray quote hides a key from
    /// it) is not shown; one with nothing to redact is kept as it is.
    @Test func unsureJSONIsNotShown() {
        let stray = Self.redacted(#"x" {"password":"sq-secret-1"} {"pass\u0077ord":"sq-secret-2"}"#, "application/json")
        let leaked = stray.contains("sq-secret-1") || stray.contains("sq-secret-2")
        #expect(!leaked, "a secret field behind a stray quote is shown")
        let notShown = stray == TraceRedactor.unredactableBody
        #expect(notShown, "the body is not shown")
        #expect(Self.redacted(#"{"a":1} {"b":"c"}"#, "application/json") == #"{"a":1} {"b":"c"}"#)
        let escaped = Self.redacted(#"{"pass\u0077ord":"es-secret-1"} x"#, "application/json")
        let escapedLeaked = escaped.contains("es-secret-1")
        #expect(!escapedLeaked, "a secret field with an escaped name is shown")
    }

    @Test func formsWithInvalidUTF8AreRedactedByBytes() {
        let body = Array("user=a&pass%77ord=fm-secret-1&x=".utf8) + [0xFF] + Array("&client_secret=fm-secret-2&code=fm-secret-3".utf8)
        let bytes = Self.redactor.body(body, contentType: "application/x-www-form-urlencoded")
        let text = String(decoding: bytes, as: UTF8.self)
        let leaked = text.contains("fm-secret-1") || text.contains("fm-secret-2") || text.contains("fm-secret-3")
        #expect(!leaked, "a secret parameter of a form with an invalid byte is shown")
        let kept = bytes.contains(0xFF)
        #expect(kept, "the invalid byte is kept")
    }

    @Test func multipartPasswordPartsAreRedacted() {
        let body = [
            "--XyZ", "Content-Disposition: form-data; name=\"user\"", "", "alice",
            "--XyZ", "Content-Disposition: form-data; name=\"password\"", "", "mp-secret-1",
            "--XyZ", "Content-Disposition: form-data; name=\"meta\"", "Content-Type: application/json", "", #"{"access_token":"mp-secret-2"}"#,
            "--XyZ--", "",
        ].joined(separator: "\r\n")
        for type in ["multipart/form-data; boundary=XyZ", "Multipart/Form-Data; boundary=\"XyZ\""] {
            let text = Self.redacted(body, type)
            let leaked = text.contains("mp-secret-1") || text.contains("mp-secret-2")
            #expect(!leaked, "a secret part of a multipart body is shown")
            let kept = text.contains("alice") && text.hasSuffix("--XyZ--\r\n")
            #expect(kept, "the other parts and the delimiters are kept")
        }
        // Without a boundary the parts cannot be told apart: not shown.
        let notShown = Self.redacted(body, "multipart/form-data") == TraceRedactor.unredactableBody
        #expect(notShown, "a multipart body without a boundary is not shown")
    }

    @Test func defaultNamesCoverCommonTokenHeadersAndOAuthParameters() {
        for name in ["X-Auth-Token", "Private-Token", "X-Amz-Security-Token", "x-auth-token"] {
            #expect(Self.redactor.isRedactedHeader(name), "\(name)")
        }
        let line = CurlCommand(
            method: "GET", url: Self.redactor.url(prefix: "http://h", target: "/cb?code=dq-secret-1&client_secret=dq-secret-2&state=s"),
            headers: Self.redactor.headers(HTTPHeaders([("Private-Token", "dq-secret-3")])), body: .none
        ).line
        let leaked = line.contains("dq-secret-1") || line.contains("dq-secret-2") || line.contains("dq-secret-3")
        #expect(!leaked, "a default-redacted value is in the curl line")
        let variables = line.contains("code=${REDACTED_CODE}&client_secret=${REDACTED_CLIENT_SECRET}&state=s")
        #expect(variables, "the values are shell variables")
    }
}
