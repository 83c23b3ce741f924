// Each entry point runs the x86-64-v4 copy of its kernel where the CPU has AVX-512, the
// x86-64-v3 copy where it has AVX2 and FMA, and the baseline copy elsewhere (see Kernels.h).
#include "CMetricKernels.h"

#define NAME(function) function##_baseline
#include "KernelPrototypes.h"
#undef NAME

#if defined(__x86_64__)
#define NAME(function) function##_x86_64_v3
#include "KernelPrototypes.h"
#undef NAME
#define NAME(function) function##_x86_64_v4
#include "KernelPrototypes.h"
#undef NAME

/// 2 while the x86-64-v4 copies run, 1 the x86-64-v3 ones, 0 the baseline's; -1 until first asked.
static int copy_in_use = -1;

/// The best copy this CPU runs. A copy built for x86-64-v3 may use any of that level's
/// instructions, not only the vector ones (the compiler picks BMI for bit work), and v4 includes
/// v3: so each level asks for its vector features and the scalar ones a VM could leave out.
static int cpu_best_copy(void) {
    const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                   __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    if (v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
        return 2;
    return v3 ? 1 : 0;
}

static int copy(void) {
    int known = __atomic_load_n(&copy_in_use, __ATOMIC_RELAXED);
    if (known < 0) {
        known = cpu_best_copy();
        __atomic_store_n(&copy_in_use, known, __ATOMIC_RELAXED);
    }
    return known;
}

int dmetric_fast_copy(int wanted) {
    if (wanted >= 0) {
        const int best = cpu_best_copy();
        __atomic_store_n(&copy_in_use, wanted < best ? wanted : best, __ATOMIC_RELAXED);
    }
    return copy();
}
#define PICK(function, ...)                                                                                                    \
    (copy() == 2 ? function##_x86_64_v4(__VA_ARGS__)                                                                           \
                 : copy() == 1 ? function##_x86_64_v3(__VA_ARGS__) : function##_baseline(__VA_ARGS__))
#else
#define PICK(function, ...) function##_baseline(__VA_ARGS__)

int dmetric_fast_copy(int wanted) {
    (void)wanted;
    return 0;
}
#endif

void dmetric_blurred(const float *a, float shift, int squares, long width, long height, const float taps[6], float *scratch,
                     long stride, float *mean, float *square) {
    PICK(dmetric_blurred, a, shift, squares, width, height, taps, scratch, stride, mean, square);
}

void dmetric_sums(const float *p1, const float *p2, float shift, const float *mu1, const float *s11, long width, long height,
                  const float taps[6], long stride, float *passes, float *columns, double sums[6]) {
    PICK(dmetric_sums, p1, p2, shift, mu1, s11, width, height, taps, stride, passes, columns, sums);
}

void dmetric_pair_sums(const float *p1, const float *p2, float shift, int ssim, long width, long height, const float taps[6],
                       long stride, float *passes, float *columns, double sums[6]) {
    PICK(dmetric_pair_sums, p1, p2, shift, ssim, width, height, taps, stride, passes, columns, sums);
}

void dmetric_xyb(const float *r, const float *g, const float *bl, long count, float *x, float *y, float *b) {
    PICK(dmetric_xyb, r, g, bl, count, x, y, b);
}

void dmetric_linear(const unsigned char *pixels, long count, int bands, const float lut[256], float *r, float *g, float *b) {
    PICK(dmetric_linear, pixels, count, bands, lut, r, g, b);
}

void dmetric_first_scale(const unsigned char *pixels, long width, long height, int bands, const float lut[256], long first_row,
                         long end_row, float *x, float *y, float *b, float *hr, float *hg, float *hb, float *scratch) {
    PICK(dmetric_first_scale, pixels, width, height, bands, lut, first_row, end_row, x, y, b, hr, hg, hb, scratch);
}

void dmetric_halved(const float *src, long width, long height, float *dst) {
    PICK(dmetric_halved, src, width, height, dst);
}

int dmetric_chroma_halved(const unsigned char *in, long width, long height, int bands, unsigned char *out) {
    return PICK(dmetric_chroma_halved, in, width, height, bands, out);
}

int dmetric_block_statistics(const unsigned char *pixels, long width, long height, int bands, long side, double *means,
                             double *activity) {
    return PICK(dmetric_block_statistics, pixels, width, height, bands, side, means, activity);
}
