// The kernels for x86-64-v4 (AVX-512): sixteen floats to a register, a multiply-add in one step.
#if defined(__x86_64__)
#define NAME(function) function##_x86_64_v4
#define LANES 16
#pragma clang attribute push(__attribute__((target("arch=x86-64-v4"))), apply_to = function)
#include "Kernels.h"
#pragma clang attribute pop
#endif
