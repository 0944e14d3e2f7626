@testable import GatewayListener
import Testing

/// Request ids are `prefix-n`: one prefix per generator, then the count in decimal.
struct RequestIDGeneratorTests {
    @Test func idsArePrefixDashCount() {
        let generator = RequestIDGenerator()
        let ids = (1...12).map { _ in generator.next() }
        let prefix = ids[0].split(separator: "-")[0]
        #expect(!prefix.isEmpty)
        #expect(ids == (1...12).map { "\(prefix)-\($0)" })
    }

    @Test(arguments: [0, 7, 10, 99, 100, 123_456_789, Int.max])
    func theCountIsWrittenInDecimal(_ n: Int) {
        #expect(RequestIDGenerator.id(prefix: "a1z-", n) == "a1z-\(n)")
        #expect(RequestIDGenerator.id(prefix: "", n) == String(n))
    }

    @Test func idsStayUniqueAcrossThreads() async {
        let generator = RequestIDGenerator()
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 { group.addTask { (0..<500).map { _ in generator.next() } } }
            var all: [String] = []
            for await part in group { all += part }
            return all
        }
        #expect(Set(ids).count == 2_000)
    }
}
