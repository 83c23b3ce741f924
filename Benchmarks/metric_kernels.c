// SSIMULACRA 2's whole-image check in C alone, part by part: what Ssimulacra2.score(reference:
// distorted:) does with a reference made for one score (q_auto's check of its output on the whole
// image, AutoEncoder.verified), on one thread, from two 8-bit RGB images already decoded. Built
// against Sources/CMetricKernels by Benchmarks/metric_kernels.sh, which makes the images.
//
// Built with -DKERNELS_BEFORE_ROW_FIRST, it calls the kernels as they were before each row's
// column passes came first (main at 354434b: a scratch row set and a ring of 80 rows), so the
// script can measure that commit's kernels with the same harness.
//
// Usage: metric_kernels REFERENCE.rgb DISTORTED.rgb WIDTH HEIGHT [ROUNDS] [COPY]
// COPY: 0 the baseline kernels, 1 x86-64-v3 (AVX2, FMA), 2 x86-64-v4 (AVX-512); the best this
// CPU runs by default. Prints the fastest round's time by part, and the score.
#include "CMetricKernels.h"
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// libjxl's weights, read from Sources/DeriveLanguage/Pixels/Ssimulacra2.swift by
// metric_kernels.sh into weights.inc, so the harness and Derive have one list.
static const double weights[108] = {
#include "weights.inc"
};

enum { FIRST_SCALE, SMALLER_SCALES, SUMS_FULL_SIZE, SUMS_SMALLER, PARTS };
static const char *part_names[PARTS] = {"first scale, both images (linear light, XYB, halved)",
                                        "smaller scales' XYB and halving, both images", "blurs and sums, full-size scale",
                                        "blurs and sums, smaller scales"};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// Which terms of a channel at a scale have a weight that counts (Ssimulacra2.Terms, 0.01).
static int ssim_counts(int c, int s, int n) { const int i = (c * n + s) * 6; return weights[i] >= 0.01 || weights[i + 3] >= 0.01; }
static int edge_counts(int c, int s, int n) {
    const int i = (c * n + s) * 6;
    return weights[i + 1] >= 0.01 || weights[i + 2] >= 0.01 || weights[i + 4] >= 0.01 || weights[i + 5] >= 0.01;
}

static float lut[256], taps[6];
// Ssimulacra2.centres: what the blurs and sums subtract from each channel's planes.
static const float centres[3] = {0.42f, 0.43f, 0.55f};
typedef struct { long w, h; float *p[3]; } planes;

static float *plane(long n) { return malloc(sizeof(float) * (n + 16)); }

static void first_scale(const unsigned char *pixels, long w, long h, const int need[3], planes *xyb, planes *half) {
    const long hw = (w + 1) / 2, hh = (h + 1) / 2;
    *xyb = (planes){w, h, {0}};
    *half = (planes){hw, hh, {0}};
    for (int c = 0; c < 3; c++) xyb->p[c] = need[c] ? plane(w * h) : 0, half->p[c] = plane(hw * hh);
    float *scratch = plane(6 * w);
    dmetric_first_scale(pixels, w, h, 3, lut, 0, hh, xyb->p[0], xyb->p[1], xyb->p[2], half->p[0], half->p[1], half->p[2], scratch);
    free(scratch);
}

static double score(const unsigned char *a, const unsigned char *b, long w, long h, double times[PARTS]) {
    int n = 0;
    for (long sw = w, sh = h; n < 6 && sw >= 8 && sh >= 8; n++) sw = (sw + 1) / 2, sh = (sh + 1) / 2;
    double t = now();
    int need[3];
    for (int c = 0; c < 3; c++) need[c] = ssim_counts(c, 0, n) || edge_counts(c, 0, n);
    planes ax, ah, bx, bh;
    first_scale(a, w, h, need, &ax, &ah);
    first_scale(b, w, h, need, &bx, &bh);
    times[FIRST_SCALE] += now() - t;
    const long stride = w + 2 * 5 + 8;
#ifdef KERNELS_BEFORE_ROW_FIRST
    float *scratch = plane(3 * stride), *passes = plane(80 * w), *columns = plane(5 * stride);
    memset(scratch, 0, sizeof(float) * 3 * stride);
#else
    float *passes = plane(5 * stride), *columns = plane(6 * stride);
#endif
    double sums[6][3][6];
    memset(sums, 0, sizeof sums);
    for (int s = 0; s < n; s++) {
        t = now();
        if (s > 0) {
            for (int c = 0; c < 3; c++) need[c] = ssim_counts(c, s, n) || edge_counts(c, s, n);
            planes *linear[2] = {&ah, &bh}, *xyb[2] = {&ax, &bx};
            for (int k = 0; k < 2; k++) {
                planes *l = linear[k];
                *xyb[k] = (planes){l->w, l->h, {0}};
                for (int c = 0; c < 3; c++) xyb[k]->p[c] = need[c] ? plane(l->w * l->h) : 0;
                if (need[0] || need[1] || need[2])
                    dmetric_xyb(l->p[0], l->p[1], l->p[2], l->w * l->h, xyb[k]->p[0], xyb[k]->p[1], xyb[k]->p[2]);
                if (s < n - 1) {
                    const long hw = (l->w + 1) / 2, hh = (l->h + 1) / 2;
                    for (int c = 0; c < 3; c++) {
                        float *halved = plane(hw * hh);
                        dmetric_halved(l->p[c], l->w, l->h, halved);
                        free(l->p[c]);
                        l->p[c] = halved;
                    }
                    l->w = hw, l->h = hh;
                }
            }
            times[SMALLER_SCALES] += now() - t;
            t = now();
        }
        for (int c = 0; c < 3; c++) {
            if (ssim_counts(c, s, n) || edge_counts(c, s, n))
#ifdef KERNELS_BEFORE_ROW_FIRST
                dmetric_pair_sums(ax.p[c], bx.p[c], ssim_counts(c, s, n), ax.w, ax.h, taps, scratch, stride, passes, columns,
                                  sums[s][c]);
#else
                dmetric_pair_sums(ax.p[c], bx.p[c], centres[c], ssim_counts(c, s, n), ax.w, ax.h, taps, stride, passes, columns,
                                  sums[s][c]);
#endif
            free(ax.p[c]), free(bx.p[c]);
        }
        times[s == 0 ? SUMS_FULL_SIZE : SUMS_SMALLER] += now() - t;
    }
    free(passes), free(columns);
#ifdef KERNELS_BEFORE_ROW_FIRST
    free(scratch);
#endif
    for (int c = 0; c < 3; c++) free(ah.p[c]), free(bh.p[c]);
    // Ssimulacra2.combined
    double sum = 0;
    int i = 0;
    for (int c = 0; c < 3; c++) {
        long sw = w, sh = h;
        for (int s = 0; s < n; s++, sw = (sw + 1) / 2, sh = (sh + 1) / 2) {
            const double count = (double)(sw * sh), *t6 = sums[s][c];
            const int with_ssim = ssim_counts(c, s, n);
            const double ssim[2] = {with_ssim ? t6[0] / count : 0, with_ssim ? pow(t6[1] / count, 0.25) : 0};
            const double edge[4] = {t6[2] / count, pow(t6[3] / count, 0.25), t6[4] / count, pow(t6[5] / count, 0.25)};
            for (int k = 0; k < 2; k++, i += 3)
                sum += weights[i] * fabs(ssim[k]) + weights[i + 1] * fabs(edge[k]) + weights[i + 2] * fabs(edge[k + 2]);
        }
    }
    sum *= 0.9562382616834844;
    sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-05 * sum * sum * sum;
    return sum > 0 ? 100 - 10 * pow(sum, 0.6276336467831387) : 100;
}

static unsigned char *read_file(const char *path, long size) {
    unsigned char *data = malloc(size);
    FILE *f = fopen(path, "rb");
    if (!f || fread(data, 1, size, f) != (size_t)size) {
        fprintf(stderr, "cannot read %ld bytes from %s\n", size, path);
        exit(1);
    }
    fclose(f);
    return data;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s REFERENCE.rgb DISTORTED.rgb WIDTH HEIGHT [ROUNDS] [COPY]\n", argv[0]);
        return 2;
    }
    const long w = atol(argv[3]), h = atol(argv[4]);
    const int rounds = argc > 5 ? atoi(argv[5]) : 30;
    if (argc > 6) dmetric_fast_copy(atoi(argv[6]));
    // Planes freed and made again each round come from the heap as in a long-running worker,
    // not from fresh pages.
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    for (int v = 0; v < 256; v++) {
        const double x = v / 255.0;
        lut[v] = (float)(x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4));
    }
    double raw[11], total = 0;
    for (int t = -5; t <= 5; t++) total += raw[t + 5] = exp(-0.5 * t * t / 2.25);
    for (int t = 0; t < 6; t++) taps[t] = (float)(raw[t + 5] / total);
    unsigned char *a = read_file(argv[1], w * h * 3), *b = read_file(argv[2], w * h * 3);
    double best = 1e9, best_parts[PARTS] = {0}, value = 0;
    for (int r = 0; r <= rounds; r++) {
        double parts[PARTS] = {0};
        const double t = now();
        value = score(a, b, w, h, parts);
        const double took = now() - t;
        if (r > 0 && took < best) best = took, memcpy(best_parts, parts, sizeof parts);
    }
    const char *copies[] = {"baseline", "x86-64-v3 (AVX2, FMA)", "x86-64-v4 (AVX-512)"};
#ifdef KERNELS_BEFORE_ROW_FIRST
    printf("before (row passes first): ");
#endif
    printf("%ldx%ld, kernels %s, fastest of %d rounds: %.2f ms (%.1f ns a pixel), score %.6f\n", w, h,
           copies[dmetric_fast_copy(-1)], rounds, best * 1e3, best * 1e9 / (double)(w * h), value);
    for (int k = 0; k < PARTS; k++) printf("  %-55s %6.2f ms\n", part_names[k], best_parts[k] * 1e3);
    return 0;
}
