import ArgumentParser
import Foundation
import GatewayConfig
import GatewayListener

/// `gateway ca init|export`: the local CA that intercepts HTTPS for upstreams
/// with `intercept: true` (files from the config's `interception` section).
struct CACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "The local CA for HTTPS interception: create it, export it and learn how to trust it.",
        subcommands: [Init.self, Export.self]
    )

    struct Location: ParsableArguments {
        @OptionGroup var options: ConfigOptions

        func load() throws -> (config: GatewayConfig, authority: LocalCertificateAuthority, created: Bool) {
            let environment = ProcessInfo.processInfo.environment
            let config: GatewayConfig
            do {
                config = try ConfigLoader.load(path: options.resolvedPath(environment: environment), environment: environment, secrets: .skip)
            } catch {
                FileHandle.standardError.write(Data("gateway: invalid config: \(error)\n".utf8))
                throw ExitCode(2)
            }
            do {
                let (authority, created) = try LocalCertificateAuthority.loadOrCreate(
                    certPath: config.interception.caCert, keyPath: config.interception.caKey)
                return (config, authority, created)
            } catch {
                FileHandle.standardError.write(Data("gateway: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the CA (P-256; key mode 0600) unless it exists; print where it is and its fingerprint."
        )
        @OptionGroup var location: Location

        func run() throws {
            let (config, authority, created) = try location.load()
            print(created ? "created the interception CA" : "the interception CA exists")
            print("  certificate: \(config.interception.caCert)")
            print("  private key: \(config.interception.caKey) (mode 0600; keep it private)")
            print("  SHA-256:     \(try authority.fingerprint)")
            print("next: `gateway ca export` prints it and how to trust it")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the CA certificate (PEM) on stdout, and how to trust it on stderr.",
            discussion: "gateway ca export > gateway-ca.pem   (the CA is created first if it does not exist)"
        )
        @OptionGroup var location: Location

        func run() throws {
            let (config, authority, created) = try location.load()
            if created {
                FileHandle.standardError.write(Data("gateway: created the interception CA (\(config.interception.caCert); key \(config.interception.caKey), mode 0600)\n".utf8))
            }
            print(try authority.certificatePEM, terminator: "")
            let proxy = config.listen.proxy
            let host = proxy.host == "0.0.0.0" || proxy.host == "::" ? "127.0.0.1" : proxy.host
            let instructions = CATrustInstructions.text(
                certificatePath: config.interception.caCert,
                fingerprint: try authority.fingerprint,
                proxyURL: "http://\(host.contains(":") ? "[\(host)]" : host):\(proxy.port)"
            )
            FileHandle.standardError.write(Data(instructions.utf8))
        }
    }
}

/// How to make each kind of client trust the CA.
enum CATrustInstructions {
    static func text(certificatePath: String, fingerprint: String, proxyURL: String) -> String {
        """

        The gateway's interception CA (SHA-256 \(fingerprint)),
        also at \(certificatePath). Save it, then trust it where your client looks:
            gateway ca export > gateway-ca.pem

          iOS simulator     xcrun simctl keychain booted add-root-cert gateway-ca.pem
          macOS keychain    sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain gateway-ca.pem
          Debian / Ubuntu   sudo cp gateway-ca.pem /usr/local/share/ca-certificates/gateway-ca.crt && sudo update-ca-certificates
          curl              curl --cacert gateway-ca.pem -x \(proxyURL) https://api.example.com/
          Python requests   export REQUESTS_CA_BUNDLE=$PWD/bundle.pem
          OpenSSL clients   export SSL_CERT_FILE=$PWD/bundle.pem

        REQUESTS_CA_BUNDLE and SSL_CERT_FILE replace the system roots: make bundle.pem hold both, so hosts
        the gateway does not intercept still verify:
            cat /etc/ssl/certs/ca-certificates.crt gateway-ca.pem > bundle.pem

        Only upstreams with `intercept: true` are intercepted; other HTTPS is tunnelled untouched.
        Keep the private key private: anyone with it can impersonate any site to clients that trust this CA.

        """
    }
}
