import Foundation
import GatewayTesting

/// nginx as a TLS origin that requires a client certificate
/// (`ssl_verify_client on`): its own config, pid file, temp paths and log in
/// the test's directory, in the foreground (`daemon off`) as one process
/// (`master_process off`: no workers, so no `user` to switch to, whether the
/// test runs as root or not). nginx completes the handshake without a
/// certificate, or with one it does not trust, and answers 400 itself
/// ("No required SSL certificate was sent", "The SSL certificate error").
/// Every location answers 200 with the client certificate's subject.
extension ExternalTLSOrigin {
    static func nginxRequiringClientCertificate(
        _ pki: TestCertificates.Paths, clientCA: String, in dir: String, http2: Bool = false
    ) async throws -> ExternalTLSOrigin {
        guard let nginx = which("nginx") ?? which("/usr/sbin/nginx") else {
            throw OriginError(description: "nginx is not installed (.ci/run installs it)")
        }
        let root = "\(dir)/nginx"
        try FileManager.default.createDirectory(atPath: "\(root)/temp", withIntermediateDirectories: true)
        let port = try freeLoopbackPort()
        let config = """
            daemon off;
            master_process off;
            pid \(root)/nginx.pid;
            error_log stderr info;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(root)/temp/body;
                proxy_temp_path \(root)/temp/proxy;
                fastcgi_temp_path \(root)/temp/fastcgi;
                uwsgi_temp_path \(root)/temp/uwsgi;
                scgi_temp_path \(root)/temp/scgi;
                server {
                    listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "");
                    ssl_certificate \(pki.serverChain);
                    ssl_certificate_key \(pki.leafKey);
                    ssl_client_certificate \(clientCA);
                    ssl_verify_client on;
                    ssl_verify_depth 3;
                    default_type text/plain;
                    location / { return 200 "served $server_protocol to $ssl_client_s_dn\\n"; }
                }
            }
            """
        try config.write(toFile: "\(root)/nginx.conf", atomically: true, encoding: .utf8)
        let origin = try launch(nginx, ["-p", root, "-c", "\(root)/nginx.conf", "-e", "stderr"], log: "\(root)/nginx.log", port: port)
        return try await origin.accepting(name: "nginx")
    }
}
