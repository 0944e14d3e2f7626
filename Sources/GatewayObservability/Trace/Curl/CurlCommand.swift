import GatewayCore

/// A faithful `curl` command line for one HTTP/1.1 request, safe to paste into
/// a POSIX shell.
///
/// - method: nothing for GET without body and POST with a body (curl infers
///   them), `--head` for HEAD, `-X METHOD` otherwise;
/// - the URL exactly as sent (`--globoff` so `[]{}` are not globs,
///   `--path-as-is` so `/../` is not squashed);
/// - every header in order with duplicates; an empty value as `Name;` (curl's
///   syntax: `Name:` would remove the header); curl's own `User-Agent`,
///   `Accept`, `Content-Type` and `Expect` suppressed (`-H 'Accept:'`) when the
///   original had none, so the upstream sees exactly the original headers;
/// - `--http1.1`;
/// - the body with `--data-binary`: inline when it is printable UTF-8 (not
///   starting with `@`, at most ``maxInlineBody`` bytes), else `@file`.
public struct CurlCommand: Sendable {
    /// A header; its value may contain shell variables (`${TOKEN}`).
    public struct Header: Sendable, Equatable {
        /// A value as given: one literal (most headers) is kept without an array
        /// of parts (an allocation per header, per curl line, per trace record).
        enum Storage: Sendable {
            case literal(String)
            case parts([ShellQuoting.Part])
        }

        public var name: String
        var storage: Storage

        public var value: [ShellQuoting.Part] {
            get {
                switch storage {
                case .literal(let text): [.literal(text)]
                case .parts(let parts): parts
                }
            }
            set { storage = .parts(newValue) }
        }

        /// The value as one text, variables as `${NAME}` (``ShellQuoting/template(_:)``).
        public var template: String {
            switch storage {
            case .literal(let text): text
            case .parts(let parts): ShellQuoting.template(parts)
            }
        }

        public init(name: String, value: [ShellQuoting.Part]) {
            self.name = name
            self.storage = .parts(value)
        }

        public init(name: String, value: String) {
            self.name = name
            self.storage = .literal(value)
        }

        public static func == (a: Header, b: Header) -> Bool {
            a.name == b.name && a.value == b.value
        }
    }

    public enum Body: Sendable, Equatable {
        case none
        /// Inline bytes (must be ``ShellQuoting/isInlineSafe(_:)`` and not start with `@`).
        case inline(String)
        /// A file holding the body, by path.
        case file(String)
        /// The body was not captured (too large to buffer and streamed); its length.
        case notCaptured(Int?)
    }

    public var method: String
    /// Absolute URL; parts may be shell variables (a query credential).
    public var url: [ShellQuoting.Part]
    public var headers: [Header]
    public var body: Body
    /// `-x URL`: replay through a proxy.
    public var proxy: String?
    /// Extra arguments placed before the URL (already quoted), e.g. `--user`.
    public var extraArguments: [String] = []

    public static let maxInlineBody = 64 * 1024

    /// Headers curl adds on its own unless told otherwise.
    static let curlDefaults = ["User-Agent", "Accept"]

    public init(method: String, url: [ShellQuoting.Part], headers: [Header], body: Body, proxy: String? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.proxy = proxy
    }

    /// How to pass `bytes` as a body: inline text, or nil when it needs a file.
    public static func inlineBody(_ bytes: [UInt8]) -> String? {
        guard bytes.count <= maxInlineBody, bytes.first != UInt8(ascii: "@"),
              ShellQuoting.isInlineSafe(bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The command line (one logical line; an inline body may contain newlines
    /// inside quotes): the words quoted straight into one string sized once, no
    /// string per word (this runs twice per trace record, on the writer thread).
    public var line: String {
        var line = CurlLine(into: "")
        line.text.reserveCapacity(estimatedLineBytes)
        write(to: &line)
        return line.text
    }

    /// ``line`` written into `text` (a trace record's JSON string, escaped as it goes).
    func writeLine(into text: inout some ShellText) {
        var line = CurlLine(into: type(of: text).init())
        // `text` moves into the line and back: its buffer is never copied.
        swap(&line.text, &text)
        write(to: &line)
        swap(&line.text, &text)
    }

    /// The quoted words, `curl` first: the words of ``line``.
    public var arguments: [String] {
        var list = CurlWordList()
        list.words.reserveCapacity(16 + 2 * headers.count + extraArguments.count)
        write(to: &list)
        return list.words
    }

    /// Headers curl adds on its own to a request with a body, unless told otherwise.
    static let bodyDefaults = ["Content-Type", "Expect"]
}
