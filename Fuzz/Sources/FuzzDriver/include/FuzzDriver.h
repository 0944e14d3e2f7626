#ifndef GATEWAY_FUZZ_DRIVER_H
#define GATEWAY_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer on `test_one_input` with the process's arguments and exits
/// with its status. SwiftPM makes an executable's top-level code its `main`,
/// so libFuzzer's own `main` is never linked: this is what it would do.
__attribute__((noreturn))
void gateway_fuzz_main(int argc, char **argv, int (*test_one_input)(const uint8_t *data, size_t size));

#endif
