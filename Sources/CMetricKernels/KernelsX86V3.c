// The kernels for x86-64-v3 (AVX2, FMA): eight floats to a register, a multiply-add in one step.
#if defined(__x86_64__)
#define NAME(function) function##_x86_64_v3
#pragma clang attribute push(__attribute__((target("arch=x86-64-v3"))), apply_to = function)
#include "Kernels.h"
#pragma clang attribute pop
#endif
