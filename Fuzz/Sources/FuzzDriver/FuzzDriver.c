#include "FuzzDriver.h"

#include <stdlib.h>

/// libFuzzer's entry point for programs with a main of their own.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*user_callback)(const uint8_t *data, size_t size));

void gateway_fuzz_main(int argc, char **argv, int (*test_one_input)(const uint8_t *data, size_t size)) {
    exit(LLVMFuzzerRunDriver(&argc, &argv, test_one_input));
}
