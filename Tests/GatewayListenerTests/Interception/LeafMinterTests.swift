import Foundation
import Testing

@testable import GatewayListener

/// Leaves the local CA mints, and when they are minted again.
@Suite struct LeafMinterTests {
    @Test func leavesAreCachedAndRenewedHalfWayThroughTheirValidity() throws {
        let minter = try LeafMinter(authority: try LocalCertificateAuthority.generate(), cacheSize: 4)
        let first = try minter.identity(for: "api.example.com")
        let again = try minter.identity(for: "api.example.com")
        #expect(minter.mintedCount == 1, "the second lookup is a cache hit")
        #expect(first.chain.count == 2 && again.chain.count == 2, "leaf and CA")
        let halfway = Date().addingTimeInterval(LocalCertificateAuthority.leafValidity / 2)
        #expect(abs(first.renewAfter.timeIntervalSince(halfway)) < 60, "renewed half way, long before the leaf expires")
        _ = try minter.identity(for: "127.0.0.1")
        #expect(minter.mintedCount == 2)
    }

    @Test func aLeafNeverOutlivesItsCA() throws {
        let now = Date()
        let authority = try LocalCertificateAuthority.generate(now: now.addingTimeInterval(-LocalCertificateAuthority.caValidity + 3600))
        let leaf = try authority.mintLeaf(for: "api.example.com", leafKey: authority.privateKey, now: now)
        #expect(leaf.notValidAfter <= authority.certificate.notValidAfter)
    }
}
