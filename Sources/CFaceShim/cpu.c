// Compiled without the detector's instruction set, so it can run on any x86-64 and say whether
// the detector can (see Package.swift: the detector is built for x86-64-v3 when the building
// machine has it).
#include "CFaceShim.h"

int dface_cpu_supported(void) {
#if defined(DERIVE_FACE_X86_64_V3)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
#else
    return 1;
#endif
}

const char *dface_instruction_set(void) {
#if defined(DERIVE_FACE_X86_64_V3)
    return "x86-64-v3";
#else
    return "x86-64";
#endif
}
