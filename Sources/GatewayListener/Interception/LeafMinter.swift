import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOSSL
import SwiftASN1
import X509

/// Mints leaf identities (leaf + CA certificate) and keeps them (LRU).
final class LeafMinter: Sendable {
    struct Identity: Sendable {
        let chain: [NIOSSLCertificate]
        /// Half way through the leaf's validity: minted again after that.
        let renewAfter: Date
    }

    let authority: LocalCertificateAuthority
    let leafKey: Certificate.PrivateKey
    let nioLeafKey: NIOSSLPrivateKey
    private let nioCA: NIOSSLCertificate
    private let identities: LRUCache<String, Identity>
    private let minted = NIOLockedValueBox(0)

    init(authority: LocalCertificateAuthority, cacheSize: Int) throws {
        self.authority = authority
        let leafKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        self.leafKey = leafKey
        self.nioLeafKey = try NIOSSLPrivateKey(bytes: Array(leafKey.serializeAsPEM().pemString.utf8), format: .pem)
        self.nioCA = try NIOSSLCertificate(bytes: authority.certificateDER, format: .der)
        self.identities = LRUCache(capacity: cacheSize)
    }

    var mintedCount: Int { minted.withLockedValue { $0 } }

    func identity(for serverName: String) throws -> Identity {
        let now = Date()
        if let identity = identities.value(for: serverName), identity.renewAfter > now { return identity }
        let leaf = try authority.mintLeaf(for: serverName, leafKey: leafKey, now: now)
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        let halfway = now.addingTimeInterval(leaf.notValidAfter.timeIntervalSince(now) / 2)
        let identity = Identity(
            chain: [try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der), nioCA],
            renewAfter: halfway
        )
        identities.insert(identity, for: serverName)
        minted.withLockedValue { $0 += 1 }
        return identity
    }
}
