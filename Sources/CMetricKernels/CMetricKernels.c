// Each entry point runs the x86-64-v3 copy of its kernel where the CPU has AVX2 and FMA, and
// the baseline copy elsewhere (see Kernels.h).
#include "CMetricKernels.h"

#define NAME(function) function##_baseline
#include "KernelPrototypes.h"
#undef NAME

#if defined(__x86_64__)
#define NAME(function) function##_x86_64_v3
#include "KernelPrototypes.h"
#undef NAME

/// 1 while the x86-64-v3 copies run, 0 while the baseline's do, -1 until first asked.
static int v3_in_use = -1;

static int cpu_runs_v3(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

static int use_v3(void) {
    int known = __atomic_load_n(&v3_in_use, __ATOMIC_RELAXED);
    if (known < 0) {
        known = cpu_runs_v3();
        __atomic_store_n(&v3_in_use, known, __ATOMIC_RELAXED);
    }
    return known;
}

int dmetric_fast_copy(int wanted) {
    if (wanted >= 0) __atomic_store_n(&v3_in_use, wanted && cpu_runs_v3(), __ATOMIC_RELAXED);
    return use_v3();
}
#define PICK(function, ...) (use_v3() ? function##_x86_64_v3(__VA_ARGS__) : function##_baseline(__VA_ARGS__))
#else
#define PICK(function, ...) function##_baseline(__VA_ARGS__)

int dmetric_fast_copy(int wanted) {
    (void)wanted;
    return 0;
}
#endif

void dmetric_row_passes(const float *a, int squares, long width, long height, float *scratch, long stride, const float taps[6],
                        float *out0, float *out1) {
    PICK(dmetric_row_passes, a, squares, width, height, scratch, stride, taps, out0, out1);
}

void dmetric_column_pass(const float *plane, long width, long height, const float taps[6], float *out) {
    PICK(dmetric_column_pass, plane, width, height, taps, out);
}

void dmetric_sums(const float *p1, const float *p2, const float *mu1, const float *s11, long width, long height,
                  const float taps[6], float *scratch, long stride, float *ring, float *columns, double sums[6]) {
    PICK(dmetric_sums, p1, p2, mu1, s11, width, height, taps, scratch, stride, ring, columns, sums);
}

void dmetric_pair_sums(const float *p1, const float *p2, int ssim, long width, long height, const float taps[6], float *scratch,
                       long stride, float *ring, float *columns, double sums[6]) {
    PICK(dmetric_pair_sums, p1, p2, ssim, width, height, taps, scratch, stride, ring, columns, sums);
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
