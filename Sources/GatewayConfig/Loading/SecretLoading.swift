/// Whether loading a config reads its secrets (environment variables, files).
public enum SecretLoading: Sendable, Equatable {
    /// Read and check every secret (`run`, `check-config`): a missing variable
    /// or file is one of the config's problems, named, never shown.
    case resolve
    /// Leave them unread, with a placeholder value: for commands that need
    /// only paths and addresses (`trace`, `ca`, `stats`), so they work from a
    /// shell that does not hold the gateway's tokens, and for
    /// `check-config --no-secrets` (CI lints the rest of the file). Never used
    /// to send a request.
    case skip
}
