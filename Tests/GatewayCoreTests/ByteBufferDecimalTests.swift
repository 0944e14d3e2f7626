import GatewayCore
import NIOCore
import Testing

/// Decimals written straight into a buffer (and appended to log text) read as `String(value)` does.
struct ByteBufferDecimalTests {
    @Test(arguments: [0, 1, 9, 10, 99, 100, 204, 1024, 65_535, 1_000_000_007, Int.max, -1, -305, Int.min])
    func aDecimalIsWrittenAsItsString(_ value: Int) {
        var buffer = ByteBuffer(string: "Content-Length: ")
        let written = buffer.writeDecimal(value)
        #expect(written == String(value).utf8.count)
        #expect(String(buffer: buffer) == "Content-Length: \(value)")
        var text = "n="
        LoggedText.appendDecimal(value, to: &text)
        #expect(text == "n=\(value)")
    }
}
