import X509

extension OnboardingSite.Authority {
    /// The onboarding site's view of the interception CA.
    package init(_ authority: LocalCertificateAuthority) throws {
        var name = "Gateway interception CA"
        for rdn in authority.certificate.subject {
            for attribute in rdn where attribute.type == .RDNAttributeType.commonName {
                name = "\(attribute.value)"
            }
        }
        self.init(der: try authority.certificateDER, pem: try authority.certificatePEM, fingerprint: try authority.fingerprint, name: name)
    }
}

extension OnboardingSite {
    /// The site of a config load: the interceptor's CA, if any upstream intercepts.
    package init(interceptor: TLSInterceptor?, proxyAuthRequired: Bool) {
        let authority = interceptor.flatMap { try? Authority($0.authority) }
        self.init(authority: authority, proxyAuthRequired: proxyAuthRequired)
    }
}
