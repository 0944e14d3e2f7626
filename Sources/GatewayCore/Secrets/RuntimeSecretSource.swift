/// Where the trace redactor reads the secrets obtained at run time, on the
/// trace writer thread as it formats each record: the answer must come from
/// state behind a lock (no actor hop, no waiting), and be cheap when there is
/// nothing to report. The OAuth2 token stores provide it
/// (`TokenStoreRegistry` in GatewayPolicies), wired in by the application.
public protocol RuntimeSecretSource: Sendable {
    /// The values in use now and those replaced recently (an exchange that
    /// used a token may be formatted after the token was refreshed).
    func runtimeSecrets() -> [RuntimeSecret]
}
