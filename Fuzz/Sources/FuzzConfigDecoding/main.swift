import GatewayFuzzing

/// libFuzzer's entry point (built with -sanitize=fuzzer,address by scripts/fuzz.sh).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.configDecoding.run(data, size)
    return 0
}
