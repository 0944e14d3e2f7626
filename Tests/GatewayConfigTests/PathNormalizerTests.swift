import Testing
@testable import GatewayConfig

@Suite(.timeLimit(.minutes(1)))
struct PathNormalizerTests {
    @Test(arguments: [
        ("/", "/"),
        ("", "/"),
        ("/users", "/users"),
        ("/users/", "/users/"),
        ("/users/42", "/users/{id}"),
        ("/users/42/orders/7", "/users/{id}/orders/{id}"),
        ("/users/42?expand=1&x=2", "/users/{id}"),
        ("/search?q=123", "/search"),
        ("/v1/users/42", "/v1/users/{id}"),
        ("/v2", "/v2"),
        ("/items/123e4567-e89b-12d3-a456-426614174000", "/items/{id}"),
        ("/items/123E4567-E89B-12D3-A456-426614174000/parts", "/items/{id}/parts"),
        ("/blobs/5f2b9c0e1a3d4e6f", "/blobs/{id}"),
        ("/blobs/5f2b9c0e1a3d4e6", "/blobs/5f2b9c0e1a3d4e6"),  // 15 hex: too short
        ("/commits/0123456789abcdef0123456789abcdef01234567", "/commits/{id}"),
        ("/tokens/dGhpcyBpcyBhIHRva2Vu0x", "/tokens/{id}"),
        ("/tokens/eyJhbGciOiJIUzI1NiJ9_abc-def", "/tokens/{id}"),
        ("/getUserPreferencesForAccount", "/getUserPreferencesForAccount"),  // a long word has no digit
        ("/user-preferences-and-settings", "/user-preferences-and-settings"),
        ("/files/" + String(repeating: "a", count: 65), "/files/{id}"),
        ("/a//b", "/a//b"),
        // Tokens with `:` or `.` are identifiers (secrets never become labels); short or
        // digit-free dotted names stay routes.
        ("/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe", "/{id}/getMe"),
        ("/keys/sk_live.4eC39HqLyjWDarjtT1zdp7dc", "/keys/{id}"),
        ("/v1.2/users", "/v1.2/users"),
        ("/com.example.settings.profile", "/com.example.settings.profile"),
        ("/repos/apple/swift/issues/1234/comments", "/repos/apple/swift/issues/{id}/comments"),
    ])
    func normalizes(_ input: String, _ expected: String) {
        #expect(PathNormalizer.normalize(input[...]) == expected, "\(input)")
    }

    @Test func unchangedPathsAreReturnedAsIs() {
        let path = "/api/things/list"
        #expect(PathNormalizer.normalize(path[...]) == path)
    }

    /// Found by the path-normalizer fuzz target: `.` and `..` segments
    /// stayed in the template, so `/x/../users/42` was an endpoint (a metrics
    /// series, a rate-limit bucket) apart from `/users/42`, which the origin serves.
    @Test(arguments: [
        ("/x/../users/42", "/users/{id}"),
        ("/users/./42", "/users/{id}"),
        ("/users/42/..", "/users/"),
        ("/users/42/.", "/users/{id}/"),
        ("/..", "/"),
        ("/../../a", "/a"),
        ("/a/b/../../../c?x=/..", "/c"),
        ("/a/.../b", "/a/.../b"),
        ("/a/..b/.c", "/a/..b/.c"),
        ("x/..", "/"),
    ])
    func dotSegmentsAreResolved(_ input: String, _ expected: String) {
        #expect(PathNormalizer.normalize(input[...]) == expected, "\(input)")
        #expect(PathNormalizer.normalize(expected[...]) == expected)
    }
}
