import Foundation
import GatewayTesting

/// The files of a mutual-TLS test, in a temporary directory: a server PKI
/// (leaf for localhost and 127.0.0.1; the gateway trusts its root as
/// `ca_file`), and a client certificate of another PKI whose root the server
/// trusts (`clientCA`).
struct MutualTLSFiles {
    var dir: String
    var server: TestCertificates.Paths
    var clientPKI: TestCertificates
    var clientFiles: TestCertificates.ClientPaths
    var clientCA: String

    init(prefix: String, clientName: String = "gateway-test-client") throws {
        dir = try TestCertificates.makeTemporaryDirectory(prefix: prefix)
        server = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"]).write(to: "\(dir)/server")
        clientPKI = try TestCertificates()
        clientFiles = try clientPKI.writeClientCertificate(try clientPKI.makeClientCertificate(commonName: clientName), to: "\(dir)/client")
        clientCA = "\(dir)/client-ca.pem"
        try clientPKI.rootPEM.write(toFile: clientCA, atomically: true, encoding: .utf8)
    }

    /// A collector (``OTLPReceiver``, ``OTLPGRPCReceiver``) serving the server PKI and requiring the client certificate.
    var collectorTLS: OTLPGRPCReceiver.TLS { .init(cert: server.serverChain, key: server.leafKey, clientCA: clientCA) }
}
