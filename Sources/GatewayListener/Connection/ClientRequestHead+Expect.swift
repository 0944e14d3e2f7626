import GatewayCore
import NIOHTTP1

extension ClientRequestHead {
    /// Whether the client waits for `100 Continue` before sending its body:
    /// `Expect: 100-continue` in an HTTP/1.1 (or later) request. An HTTP/1.0
    /// client does not understand 1xx responses (RFC 9110 §10.1.1: a server
    /// must not send one to it), so it never gets a 100.
    var expectsContinue: Bool {
        guard version.major > 1 || (version.major == 1 && version.minor >= 1) else { return false }
        // By bytes, one pass: most requests have no `Expect`.
        return headers.field("expect", lists: "100-continue")
    }
}
