import FuzzDriver
import GatewayFuzzing

/// libFuzzer's callback (the binary is built with -sanitize=fuzzer,address by scripts/fuzz.sh).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.http2Frames.run(data, size)
    return 0
}

gateway_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv, fuzz)
