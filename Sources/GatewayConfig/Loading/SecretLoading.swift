/// Whether loading a config reads its secrets (environment variables, files).
public enum SecretLoading: Sendable, Equatable {
    /// Read and check every secret (`run`, `check-config`): a missing variable
    /// or file is an error.
    case resolve
    /// Leave them unread, with a placeholder value: for commands that need
    /// only paths and addresses (`trace`, `ca`, `stats`), so they work from a
    /// shell that does not hold the gateway's tokens. Never used to send a request.
    case skip
}
