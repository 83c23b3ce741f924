// The kernels for any CPU the build targets.
#define NAME(function) function##_baseline
// Eight-float vectors passed between the inlined helpers of this copy, which never leave it.
#pragma clang diagnostic ignored "-Wpsabi"
#include "Kernels.h"
