// libFuzzer's driver, for programs that have a main of their own (SwiftPM gives every
// executable one, so libFuzzer's own main is not linked in).
#ifndef C_LIB_FUZZER_H
#define C_LIB_FUZZER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// Runs libFuzzer with the program's arguments and `callback` as the target; returns its
/// exit status.
static inline int cfuzz_main(int argc, char **argv, int (*callback)(const uint8_t *data, size_t size)) {
    return LLVMFuzzerRunDriver(&argc, &argv, callback);
}

#endif
