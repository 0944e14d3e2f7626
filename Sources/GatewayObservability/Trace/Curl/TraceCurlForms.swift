import Foundation
public import GatewayConfig
public import GatewayCore
import NIOHTTP1

/// Builds the two curl forms of a traced request: through the gateway (the
/// client's request, `-x`) and direct (as sent upstream, with the configured
/// credential as shell variables from the env vars the config reads).
public struct TraceCurlForms: Sendable {
    public internal(set) var redactor: TraceRedactor
    public let proxyURL: String
    let upstreams: [String: UpstreamConfig]
    let proxyUser: (name: String, variable: String)?
    /// The interception CA (absolute path): `--cacert` of intercepted https requests.
    let interceptionCA: String

    public init(config: GatewayConfig, proxyURL: String? = nil) {
        redactor = TraceRedactor(config: config)
        let ca = config.interception.caCert
        interceptionCA = ca.hasPrefix("/") ? ca : FileManager.default.currentDirectoryPath + "/" + ca
        self.proxyURL = proxyURL ?? TraceProxyAddress.url(host: config.listen.proxy.host, port: config.listen.proxy.port)
        var byName: [String: UpstreamConfig] = [:]
        for upstream in config.upstreams where byName[upstream.name] == nil { byName[upstream.name] = upstream }
        upstreams = byName
        if let user = config.proxyAuth?.users.first {
            proxyUser = (user.username, TraceRedactor.variableName(for: user.password, upstream: "GATEWAY_PROXY", key: "password"))
        } else {
            proxyUser = nil
        }
    }

    /// These forms with a redactor that also scrubs `runtime` (secrets
    /// obtained at run time); themselves when there are none.
    func adding(runtimeSecrets runtime: [RuntimeSecret]) -> TraceCurlForms {
        guard !runtime.isEmpty else { return self }
        var forms = self
        forms.redactor = redactor.adding(runtimeSecrets: runtime)
        return forms
    }

    /// The body as it appears in both forms; `bytes` already redacted.
    public static func body(_ bytes: [UInt8]?, length: Int?, file: () -> String) -> CurlCommand.Body {
        guard let bytes else { return length == 0 ? .none : .notCaptured(length) }
        if bytes.isEmpty { return .none }
        if let text = CurlCommand.inlineBody(bytes) { return .inline(text) }
        return .file(file())
    }

    /// Through the gateway: the request without the gateway's own `Via`.
    public func throughGateway(_ request: ProxyRequest, body: CurlCommand.Body, bodyLength: Int?) -> CurlCommand {
        // Without the gateway's own `Via`; with the `Host` the client sent when
        // the gateway rewrote it to the upstream's origin.
        let headers = redactor.headers(
            request.headers, dropping: Self.ownViaIndex(in: request.headers),
            host: request.hasClientOrigin ? request.clientAuthority : nil
        )
        // Made once: a rewritten request's origin is a string made when read.
        let prefix = request.clientURLPrefix
        var command = CurlCommand(
            method: request.method.rawValue,
            url: redactor.url(prefix: prefix, target: request.target),
            headers: fixLength(headers, bodyLength: bodyLength),
            body: body,
            proxy: proxyURL
        )
        if let proxyUser {
            command.extraArguments = ["--proxy-user", ShellQuoting.word([.literal(proxyUser.name + ":"), .variable(proxyUser.variable)])]
        }
        if prefix.hasPrefix("https://"), let name = request.upstreamName, upstreams[name]?.intercept == true {
            // The gateway terminates this TLS with its own CA.
            command.extraArguments += ["--cacert", ShellQuoting.word([.literal(interceptionCA)])]
        }
        return command
    }

    /// As sent upstream: `Via` kept, the upstream's credential applied as a
    /// shell variable when the request is within its scope (as the auth policies decide).
    public func direct(_ request: ProxyRequest, body: CurlCommand.Body, bodyLength: Int?) -> CurlCommand {
        var command = CurlCommand(
            method: request.method.rawValue,
            url: redactor.url(prefix: "\(request.scheme.rawValue)://\(request.authority)", target: request.target),
            headers: fixLength(redactor.headers(request.headers), bodyLength: bodyLength),
            body: body
        )
        if request.scheme == .https {
            // The upstream's own trust settings, so a direct replay verifies as the gateway did.
            if let caFile = request.tls.caFile {
                command.extraArguments += ["--cacert", ShellQuoting.word([.literal(caFile)])]
            }
            if request.tls.insecureSkipVerify { command.extraArguments += ["--insecure"] }
        }
        if let name = request.upstreamName, let upstream = upstreams[name], let auth = upstream.auth,
            CredentialScope.mayCarryCredential(request), upstream.credentialScope.permits(request)
        {
            applyCredential(auth, upstream: upstream.name, to: &command)
        }
        return command
    }

    /// Mirrors the auth policies: `replace` puts the credential in its slot
    /// (`Authorization`, its header or its query parameter) over whatever the
    /// client had there; `keep` leaves a request that fills the slot itself.
    private func applyCredential(_ auth: AuthConfig, upstream: String, to command: inout CurlCommand) {
        func variable(_ secret: Secret, _ key: String) -> String { TraceRedactor.variableName(for: secret, upstream: upstream, key: key) }
        var header: (name: String, value: [ShellQuoting.Part])?
        var queryParameter: (String, String)?
        var user: [ShellQuoting.Part]?
        switch auth.kind {
        case .bearer(let token): header = ("Authorization", [.literal("Bearer "), .variable(variable(token, "token"))])
        case .header(let name, let value): header = (name, [.variable(variable(value, "value"))])
        case .basic(let username, let password): user = [.literal(username + ":"), .variable(variable(password, "password"))]
        case .query(let parameter, let value): queryParameter = (parameter, variable(value, "value"))
        case .oauth2:
            header = ("Authorization", [.literal("Bearer "), .variable(ShellQuoting.sanitizedVariableName("\(upstream)_ACCESS_TOKEN".uppercased()))])
        }
        // The credential's slot: Authorization (bearer, basic, oauth2), its header, or its query parameter.
        let slot = user != nil ? "authorization" : header?.name
        let hasOwn: Bool
        if let slot {
            hasOwn = command.headers.contains { HopByHopHeaders.equalsIgnoringCase($0.name, slot) }
        } else if let (parameter, _) = queryParameter {
            hasOwn = command.url.contains { if case .literal(let s) = $0 { s.contains("?\(parameter)=") || s.contains("&\(parameter)=") } else { false } }
        } else {
            hasOwn = false
        }
        if auth.clientAuth == .keep, hasOwn { return }
        if user != nil { command.headers.removeAll { HopByHopHeaders.equalsIgnoringCase($0.name, "authorization") } }
        if let header {
            let name = header.name
            if let index = command.headers.firstIndex(where: { HopByHopHeaders.equalsIgnoringCase($0.name, name) }) {
                command.headers[index].value = header.value
                var seen = false
                command.headers.removeAll { h in
                    guard HopByHopHeaders.equalsIgnoringCase(h.name, name) else { return false }
                    defer { seen = true }
                    return seen
                }
            } else {
                command.headers.append(CurlCommand.Header(name: header.name, value: header.value))
            }
        }
        if let user { command.extraArguments += ["--user", ShellQuoting.word(user)] }
        if let (parameter, name) = queryParameter {
            // As the gateway does (QueryEditing.replacing): a value the client sent is
            // replaced in place (it is a redacted variable in the line), else the pair is added.
            var replaced = false
            for index in command.url.indices.dropFirst() {
                guard case .literal(let before) = command.url[index - 1], case .variable = command.url[index],
                      before.hasSuffix("?\(parameter)=") || before.hasSuffix("&\(parameter)=") else { continue }
                command.url[index] = .variable(name)
                replaced = true
            }
            if !replaced {
                let hasQuery = command.url.contains { if case .literal(let s) = $0 { s.contains("?") } else { false } }
                command.url += [.literal((hasQuery ? "&" : "?") + parameter + "="), .variable(name)]
            }
        }
    }

    /// The index of the last `Via` if it is the gateway's own.
    static func ownViaIndex(in headers: RequestFields) -> Int? {
        var last: (index: Int, value: String)?
        for (i, header) in headers.enumerated() where HopByHopHeaders.equalsIgnoringCase(header.name, "via") { last = (i, header.value) }
        guard let last, last.value.hasSuffix(" gateway") else { return nil }
        return last.index
    }

    /// After body redaction the body length may differ: keep `Content-Length` true.
    private func fixLength(_ headers: [CurlCommand.Header], bodyLength: Int?) -> [CurlCommand.Header] {
        // Most requests have no `Content-Length` (GET): no new array for them.
        guard let bodyLength, headers.contains(where: { HopByHopHeaders.equalsIgnoringCase($0.name, "content-length") }) else { return headers }
        return headers.map { h in
            HopByHopHeaders.equalsIgnoringCase(h.name, "content-length") ? CurlCommand.Header(name: h.name, value: String(bodyLength)) : h
        }
    }
}
