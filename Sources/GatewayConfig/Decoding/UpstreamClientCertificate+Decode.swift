import GatewayCore

/// `tls.client_certificate: {certificate_file, key_file}`: both paths relative
/// to the config file's directory; both files are read (the key only when
/// secrets are) and checked now, so a bad file is a config error at its key
/// path, and a reload reads them again.
extension UpstreamClientCertificate {
    /// Nil when a key is missing (recorded at the mapping by `required`).
    static func decode(_ node: ConfigNode) throws(ConfigError) -> UpstreamClientCertificate? {
        let map = try node.mapping(keys: ["certificate_file", "key_file"])
        let certificatePath = map.required("certificate_file", hint: "the PEM certificate chain, leaf first") {
            node.context.resolvePath(try $0.nonEmptyString())
        }
        let keyPath = map.required("key_file", hint: "the PEM private key, mode 0600") {
            node.context.resolvePath(try $0.nonEmptyString())
        }
        guard let certificatePath, let keyPath, let certificateNode = map["certificate_file"], let keyNode = map["key_file"] else {
            return nil
        }
        do {
            return try ClientCertificateLoader.load(
                certificateFile: certificatePath, keyFile: keyPath, readKey: node.context.secrets == .resolve)
        } catch {
            throw (error.file == .certificate ? certificateNode : keyNode).error(error.message)
        }
    }
}
