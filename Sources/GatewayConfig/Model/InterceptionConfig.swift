/// `interception`: the local CA used to terminate TLS for `CONNECT`s to
/// upstreams with `intercept: true`. Created on first use when absent.
public struct InterceptionConfig: Sendable, Equatable {
    /// `ca_cert`: the CA certificate (PEM). Kept as written (relative to the
    /// working directory, like `state_dir`); default `<state_dir>/ca.pem`.
    public var caCert: String
    /// `ca_key`: the CA private key (PEM, mode 0600); default `<state_dir>/ca-key.pem`.
    public var caKey: String
    /// `leaf_cache_size`: minted leaf certificates kept (LRU), >= 1.
    public var leafCacheSize: Int

    public static let defaultCertFileName = "ca.pem"
    public static let defaultKeyFileName = "ca-key.pem"
    public static let defaultLeafCacheSize = 1000

    public init(
        caCert: String = InterceptionConfig.path(InterceptionConfig.defaultCertFileName, in: GatewayConfig.defaultStateDir),
        caKey: String = InterceptionConfig.path(InterceptionConfig.defaultKeyFileName, in: GatewayConfig.defaultStateDir),
        leafCacheSize: Int = InterceptionConfig.defaultLeafCacheSize
    ) {
        self.caCert = caCert
        self.caKey = caKey
        self.leafCacheSize = leafCacheSize
    }

    /// Defaults, with the CA files under `stateDir`.
    public init(stateDir: String) {
        self.init(
            caCert: InterceptionConfig.path(InterceptionConfig.defaultCertFileName, in: stateDir),
            caKey: InterceptionConfig.path(InterceptionConfig.defaultKeyFileName, in: stateDir)
        )
    }

    /// `<directory>/<name>`.
    public static func path(_ name: String, in directory: String) -> String {
        directory.hasSuffix("/") ? directory + name : "\(directory)/\(name)"
    }
}
