// The kernels' bodies, compiled three times: by KernelsX86V4.c for x86-64-v4 (LANES 16), by
// KernelsX86V3.c for x86-64-v3 and by KernelsBaseline.c for any CPU (LANES 8), each copy's
// entry points named by its NAME (CMetricKernels.c picks one per call). Each loop keeps the
// order of operations the Swift loops had; with FMA a product and a sum round once instead of
// twice, and sixteen lanes add a row's terms in another order than eight, which moves a score
// by a few thousandths at most (the tests compare the copies). Not a public header.

#include "CMetricKernels.h"
#include "KernelPrototypes.h"
#include <stdlib.h>
#include <string.h>

// Floats a register: v8f is LANES floats (the name kept from when it was always eight).
#ifndef LANES
#define LANES 8
#endif
typedef float v8f __attribute__((vector_size(4 * LANES)));
typedef unsigned int v8u __attribute__((vector_size(4 * LANES)));

static inline v8f load(const float *p) {
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store(v8f v, float *p) { memcpy(p, &v, sizeof v); }

static inline v8f splat(float x) { return (v8f){} + x; }

/// |x|: the sign bit cleared.
static inline v8f magnitude(v8f x) { return (v8f)((v8u)x & 0x7FFFFFFFu); }

/// x or 0, exactly: (x + |x|) / 2.
static inline v8f positive(v8f x) { return (x + magnitude(x)) * 0.5f; }

static inline float lanes_sum(v8f v) {
    float sum = 0;
    for (int i = 0; i < LANES; i++) sum += v[i];
    return sum;
}

static inline long mirrored(long y, long count) {
    if (y < 0) return -y - 1 < count - 1 ? -y - 1 : count - 1;
    if (y >= count) return 2 * count - y - 1 > 0 ? 2 * count - y - 1 : 0;
    return y;
}

/// 11 taps along a row placed between zero margins, pairing the taps at equal distance.
static inline void row_pass(const float *row, float *out, long width, const float k[6]) {
    const v8f k0 = splat(k[0]), k1 = splat(k[1]), k2 = splat(k[2]), k3 = splat(k[3]), k4 = splat(k[4]), k5 = splat(k[5]);
    long x = 0;
    for (; x + LANES <= width; x += LANES) {
        const float *p = row + x;
        v8f sum = k0 * load(p);
        sum += k1 * (load(p - 1) + load(p + 1));
        sum += k2 * (load(p - 2) + load(p + 2));
        sum += k3 * (load(p - 3) + load(p + 3));
        sum += k4 * (load(p - 4) + load(p + 4));
        sum += k5 * (load(p - 5) + load(p + 5));
        store(sum, out + x);
    }
    for (; x < width; x++) {
        const float *p = row + x;
        float sum = k[0] * p[0];
        sum += k[1] * (p[-1] + p[1]);
        sum += k[2] * (p[-2] + p[2]);
        sum += k[3] * (p[-3] + p[3]);
        sum += k[4] * (p[-4] + p[4]);
        sum += k[5] * (p[-5] + p[5]);
        out[x] = sum;
    }
}

/// The eleven rows around row `y` of a plane, mirrored at the top and bottom.
static inline void window(const float *plane, long y, long width, long height, const float *rows[11]) {
    for (long t = -5; t <= 5; t++) rows[t + 5] = plane + mirrored(y + t, height) * width;
}

/// The column pass of one row of a's and b's products, from their eleven rows, every value less
/// `shift` first (see sums_body): the blur of a into `ma`, of a² into `saa`, of a·b into `sab`,
/// of b into `mb` and of b² into `sbb`, each only where given. Each is the centre tap's product,
/// then the pairs of rows at equal distance, as `row_pass` sums along a row, so a blur's value
/// does not depend on which others are made.
static inline void column_products(const float *const a[11], const float *const b[11], long width, const float k[6], float shift,
                                   float *ma, float *saa, float *sab, float *mb, float *sbb) {
    const v8f kt[6] = {splat(k[0]), splat(k[1]), splat(k[2]), splat(k[3]), splat(k[4]), splat(k[5])};
    const v8f c = splat(shift);
    long x = 0;
    for (; x + LANES <= width; x += LANES) {
        const v8f ac = load(a[5] + x) - c, bc = b ? load(b[5] + x) - c : ac;
        v8f m_a = kt[0] * ac, s_aa = kt[0] * (ac * ac), s_ab = kt[0] * (ac * bc), m_b = kt[0] * bc, s_bb = kt[0] * (bc * bc);
        for (int t = 1; t <= 5; t++) {
            const v8f lo = load(a[5 - t] + x) - c, hi = load(a[5 + t] + x) - c;
            const v8f blo = b ? load(b[5 - t] + x) - c : lo, bhi = b ? load(b[5 + t] + x) - c : hi;
            if (ma) m_a += kt[t] * (lo + hi);
            if (saa) s_aa += kt[t] * (lo * lo + hi * hi);
            if (sab) s_ab += kt[t] * (lo * blo + hi * bhi);
            if (mb) m_b += kt[t] * (blo + bhi);
            if (sbb) s_bb += kt[t] * (blo * blo + bhi * bhi);
        }
        if (ma) store(m_a, ma + x);
        if (saa) store(s_aa, saa + x);
        if (sab) store(s_ab, sab + x);
        if (mb) store(m_b, mb + x);
        if (sbb) store(s_bb, sbb + x);
    }
    for (; x < width; x++) {
        const float ac = a[5][x] - shift, bc = b ? b[5][x] - shift : ac;
        float m_a = k[0] * ac, s_aa = k[0] * (ac * ac), s_ab = k[0] * (ac * bc), m_b = k[0] * bc, s_bb = k[0] * (bc * bc);
        for (int t = 1; t <= 5; t++) {
            const float lo = a[5 - t][x] - shift, hi = a[5 + t][x] - shift;
            const float blo = b ? b[5 - t][x] - shift : lo, bhi = b ? b[5 + t][x] - shift : hi;
            m_a += k[t] * (lo + hi);
            s_aa += k[t] * (lo * lo + hi * hi);
            s_ab += k[t] * (lo * blo + hi * bhi);
            m_b += k[t] * (blo + bhi);
            s_bb += k[t] * (blo * blo + bhi * bhi);
        }
        if (ma) ma[x] = m_a;
        if (saa) saa[x] = s_aa;
        if (sab) sab[x] = s_ab;
        if (mb) mb[x] = m_b;
        if (sbb) sbb[x] = s_bb;
    }
}

/// `count` rows of `stride` floats from `base`, each used from its sixth float: zero margins of
/// five floats on the left and from `width` to the end on the right, for row_pass.
static inline float *margined(float *base, long stride, long count, long width) {
    for (long i = 0; i < count; i++) {
        float *row = base + i * stride;
        for (long j = 0; j < 5; j++) row[j] = 0;
        for (long j = 5 + width; j < stride; j++) row[j] = 0;
    }
    return base + 5;
}

void NAME(dmetric_blurred)(const float *a, float shift, int squares, long width, long height, const float taps[6], float *scratch,
                           long stride, float *mean, float *square) {
    float *row0 = margined(scratch, stride, 2, width), *row1 = row0 + stride;
    const float *rows[11];
    for (long y = 0; y < height; y++) {
        window(a, y, width, height, rows);
        column_products(rows, 0, width, taps, shift, row0, squares ? row1 : 0, 0, 0, 0);
        row_pass(row0, mean + y * width, width, taps);
        if (squares) row_pass(row1, square + y * width, width, taps);
    }
}

/// The sums of dmetric_sums and dmetric_pair_sums, a row at a time: the row's column passes of
/// the candidate's products (and with `fused` the reference's plane and square, in the order
/// dmetric_blurred makes them, so the values and the sums are the same to the bit), then their
/// row passes, then the per-pixel terms.
///
/// Both planes are blurred less `shift` (c), a value near the middle of the channel's range, and
/// the terms are written for that: the variances and covariance then come from small numbers
/// instead of the difference of two large ones (a bright flat region's blurred square and its
/// squared mean agree to six digits, which is all a float has), and SSIMULACRA 2's terms are the
/// same with any c, but for the blur's zero beyond the left and right ends: there a column's
/// taps inside the image add up to P < 1, and with q = 1 - P (zero from 5 pixels in) the blurred
/// means are m' + cP, the variance gains 2cq·m' + c²q(1 - q), the covariance cq(m1' + m2') +
/// c²q(1 - q), and a pixel's distance from its mean cq. In double precision the two forms are
/// one; in float this one agrees with the reference implementation (which computes in double)
/// several times more closely.
static inline void sums_body(const float *p1, const float *p2, const float *mu1_plane, const float *s11_plane, int with_ssim,
                             int fused, float shift, long width, long height, const float taps[6], long stride, float *passes,
                             float *columns, double sums[6]) {
    const v8f one = splat(1), zero = splat(0), c2 = splat(0.0009f), c = splat(shift);
    float *mu2 = columns, *s22 = columns + stride, *s12 = columns + 2 * stride;
    float *mu1_row = columns + 3 * stride, *s11_row = columns + 4 * stride, *outside = columns + 5 * stride;
    // q for each column: the share of the taps that fall beyond the row's ends (the taps' own sum
    // counting as exactly one, as in double precision).
    double all = taps[0];
    for (int t = 1; t <= 5; t++) all += 2.0 * taps[t];
    for (long x = 0; x < width; x++) {
        double beyond = 0;
        for (int t = 1; t <= 5; t++) beyond += (x - t < 0 ? taps[t] : 0) + (x + t >= width ? taps[t] : 0);
        outside[x] = (float)(beyond / all);
    }
    // The row's column passes, between zero margins for the row passes.
    float *v0 = margined(passes, stride, 5, width), *v1 = v0 + stride, *v2 = v0 + 2 * stride, *v3 = v0 + 3 * stride, *v4 = v0 + 4 * stride;
    double total[6] = {0, 0, 0, 0, 0, 0};
    const float *rows2[11], *rows1[11];
    for (long y = 0; y < height; y++) {
        window(p2, y, width, height, rows2);
        window(p1, y, width, height, rows1);
        column_products(rows2, rows1, width, taps, shift, v0, with_ssim ? v1 : 0, with_ssim ? v2 : 0, fused ? v3 : 0,
                        fused && with_ssim ? v4 : 0);
        row_pass(v0, mu2, width, taps);
        if (with_ssim) {
            row_pass(v1, s22, width, taps);
            row_pass(v2, s12, width, taps);
        }
        const long row = y * width;
        if (fused) {
            row_pass(v3, mu1_row, width, taps);
            if (with_ssim) row_pass(v4, s11_row, width, taps);
        }
        const float *mu1 = fused ? mu1_row : mu1_plane + row, *s11 = fused || !with_ssim ? s11_row : s11_plane + row;
        long x = 0;
        while (x < width) {
            const long end = x + 1024 < width ? x + 1024 : width;
            v8f d1 = zero, d4 = zero, a1 = zero, a4 = zero, l1 = zero, l4 = zero;
            for (; x + LANES <= end; x += LANES) {
                const long i = row + x;
                const v8f m1 = load(mu1 + x), m2 = load(mu2 + x), q = load(outside + x);
                // Zero from 5 pixels in: the terms are then the plain ones.
                const v8f edge = c * q, edge2 = edge * (c * (one - q));
                if (with_ssim) {
                    const v8f num_m = one - (m1 - m2) * (m1 - m2);
                    const v8f num_s = 2 * ((load(s12 + x) - m1 * m2) + (edge * (m1 + m2) + edge2)) + c2;
                    const v8f den_s = (load(s11 + x) - m1 * m1) + (load(s22 + x) - m2 * m2) + 2 * (edge * (m1 + m2) + edge2) + c2;
                    const v8f d = positive(one - num_m * num_s / den_s);
                    d1 += d;
                    d4 += (d * d) * (d * d);
                }
                const v8f x2 = ((load(p2 + i) - c) - m2) + edge, x1 = ((load(p1 + i) - c) - m1) + edge;
                const v8f ratio = (one + magnitude(x2)) / (one + magnitude(x1)) - one;
                const v8f art = positive(ratio), lost = positive(-ratio);
                a1 += art;
                a4 += (art * art) * (art * art);
                l1 += lost;
                l4 += (lost * lost) * (lost * lost);
            }
            double tail[6] = {0, 0, 0, 0, 0, 0};
            for (; x < end; x++) {
                const long i = row + x;
                const float m1 = mu1[x], m2 = mu2[x], edge = shift * outside[x], edge2 = edge * (shift * (1 - outside[x]));
                if (with_ssim) {
                    const float num_m = 1 - (m1 - m2) * (m1 - m2);
                    const float num_s = 2 * ((s12[x] - m1 * m2) + (edge * (m1 + m2) + edge2)) + 0.0009f;
                    const float den_s = (s11[x] - m1 * m1) + (s22[x] - m2 * m2) + 2 * (edge * (m1 + m2) + edge2) + 0.0009f;
                    const float f = 1 - num_m * num_s / den_s;
                    const double d = f > 0 ? f : 0;
                    tail[0] += d;
                    tail[1] += (d * d) * (d * d);
                }
                const float a = ((p2[i] - shift) - m2) + edge, b = ((p1[i] - shift) - m1) + edge;
                const double ratio = (double)((1 + (a < 0 ? -a : a)) / (1 + (b < 0 ? -b : b)) - 1);
                const double art = ratio > 0 ? ratio : 0, lost = ratio < 0 ? -ratio : 0;
                tail[2] += art;
                tail[3] += (art * art) * (art * art);
                tail[4] += lost;
                tail[5] += (lost * lost) * (lost * lost);
            }
            total[0] += (double)lanes_sum(d1) + tail[0];
            total[1] += (double)lanes_sum(d4) + tail[1];
            total[2] += (double)lanes_sum(a1) + tail[2];
            total[3] += (double)lanes_sum(a4) + tail[3];
            total[4] += (double)lanes_sum(l1) + tail[4];
            total[5] += (double)lanes_sum(l4) + tail[5];
        }
    }
    for (int i = 0; i < 6; i++) sums[i] = total[i];
}

void NAME(dmetric_sums)(const float *p1, const float *p2, float shift, const float *mu1, const float *s11, long width, long height,
                        const float taps[6], long stride, float *passes, float *columns, double sums[6]) {
    sums_body(p1, p2, mu1, s11, s11 != 0, 0, shift, width, height, taps, stride, passes, columns, sums);
}

void NAME(dmetric_pair_sums)(const float *p1, const float *p2, float shift, int ssim, long width, long height, const float taps[6],
                             long stride, float *passes, float *columns, double sums[6]) {
    sums_body(p1, p2, 0, 0, ssim, 1, shift, width, height, taps, stride, passes, columns, sums);
}

/// Cube root of a value in the opsin mixes' range (0.0038 to 1.1): the inverse cube root from a
/// bit-level first guess (3.4% off at most) and three Newton steps, which need only
/// multiplications, times the value twice (relative error below 4e-7 over that range).
static inline v8f cube_root(v8f value) {
    const v8u bits = (v8u)value;
    v8f r = (v8f)(0x54a23300u - bits / 3u);
    const v8f four = splat(4), one_third = splat(1.0f / 3);
    r = r * (four - value * r * r * r) * one_third;
    r = r * (four - value * r * r * r) * one_third;
    r = r * (four - value * r * r * r) * one_third;
    return value * r * r;
}

/// XYB for LANES pixels from `r`, `g`, `bl` into the planes given.
static inline void xyb_eight(const float *r, const float *g, const float *bl, float *x, float *y, float *b) {
    const float m00 = 0.30f, m01 = 1 - 0.078f - 0.30f, m02 = 0.078f;
    const float m10 = 0.23f, m11 = 1 - 0.078f - 0.23f, m12 = 0.078f;
    const float m20 = 0.24342268924547819f, m21 = 0.20476744424496821f, m22 = 1 - 0.24342268924547819f - 0.20476744424496821f;
    const float bias = 0.0037930732552754493f;
    const v8f bias_root = cube_root(splat(bias));
    const v8f rv = load(r), gv = load(g), bv = load(bl);
    const v8f m0 = cube_root(m00 * rv + m01 * gv + m02 * bv + bias) - bias_root;
    const v8f m1 = cube_root(m10 * rv + m11 * gv + m12 * bv + bias) - bias_root;
    const v8f yv = 0.5f * (m0 + m1);
    if (x) store((0.5f * (m0 - m1)) * 14 + 0.42f, x);
    if (y) store(yv + 0.01f, y);
    if (b) {
        const v8f m2 = cube_root(m20 * rv + m21 * gv + m22 * bv + bias) - bias_root;
        store((m2 - yv) + 0.55f, b);
    }
}

void NAME(dmetric_xyb)(const float *r, const float *g, const float *bl, long count, float *x, float *y, float *b) {
    long i = 0;
    for (; i + LANES <= count; i += LANES) xyb_eight(r + i, g + i, bl + i, x ? x + i : 0, y ? y + i : 0, b ? b + i : 0);
    if (i == count) return;
    // The last pixels, through buffers of LANES pixels padded with zeros.
    float in[3][LANES] = {{0}}, out[3][LANES];
    const long n = count - i;
    memcpy(in[0], r + i, n * sizeof(float));
    memcpy(in[1], g + i, n * sizeof(float));
    memcpy(in[2], bl + i, n * sizeof(float));
    xyb_eight(in[0], in[1], in[2], out[0], out[1], out[2]);
    if (x) memcpy(x + i, out[0], n * sizeof(float));
    if (y) memcpy(y + i, out[1], n * sizeof(float));
    if (b) memcpy(b + i, out[2], n * sizeof(float));
}

void NAME(dmetric_linear)(const unsigned char *pixels, long count, int bands, const float lut[256], float *r, float *g, float *b) {
    if (bands >= 3) {
        for (long i = 0; i < count; i++) {
            const unsigned char *p = pixels + i * bands;
            r[i] = lut[p[0]];
            g[i] = lut[p[1]];
            b[i] = lut[p[2]];
        }
    } else {
        for (long i = 0; i < count; i++) r[i] = lut[pixels[i * bands]];
    }
}

void NAME(dmetric_halved)(const float *src, long width, long height, float *dst) {
    const long w = (width + 1) / 2, h = (height + 1) / 2;
    for (long oy = 0; oy < h; oy++) {
        const long y0 = oy * 2, y1 = oy * 2 + 1 < height ? oy * 2 + 1 : height - 1;
        const float *row0 = src + y0 * width, *row1 = src + y1 * width;
        float *out = dst + oy * w;
        long ox = 0;
        if (y1 != y0) {
            // Whole 2×2 blocks, summed in the same order as the edges below.
            for (; ox < width / 2; ox++) out[ox] = (((row0[2 * ox] + row0[2 * ox + 1]) + row1[2 * ox]) + row1[2 * ox + 1]) / 4;
        }
        for (; ox < w; ox++) {
            const long x0 = ox * 2, x1 = ox * 2 + 1 < width ? ox * 2 + 1 : width - 1;
            float sum = row0[x0], n = 1;
            if (x1 != x0) { sum += row0[x1]; n += 1; }
            if (y1 != y0) {
                sum += row1[x0]; n += 1;
                if (x1 != x0) { sum += row1[x1]; n += 1; }
            }
            out[ox] = sum / n;
        }
    }
}

void NAME(dmetric_first_scale)(const unsigned char *pixels, long width, long height, int bands, const float lut[256],
                               long first_row, long end_row, float *x, float *y, float *b, float *hr, float *hg, float *hb,
                               float *scratch) {
    const long half_width = (width + 1) / 2;
    const int colour = bands >= 3;
    for (long oy = first_row; oy < end_row; oy++) {
        const long y0 = 2 * oy, rows = y0 + 1 < height ? 2 : 1;
        float *r = scratch, *g = colour ? scratch + 2 * width : r, *bl = colour ? scratch + 4 * width : r;
        for (long k = 0; k < rows; k++) {
            const long at = (y0 + k) * width;
            NAME(dmetric_linear)(pixels + at * bands, width, bands, lut, r + k * width, g + k * width, bl + k * width);
            NAME(dmetric_xyb)(r + k * width, g + k * width, bl + k * width, width, x ? x + at : 0, y ? y + at : 0, b ? b + at : 0);
        }
        if (hr) {
            NAME(dmetric_halved)(r, width, rows, hr + oy * half_width);
            if (colour) {
                NAME(dmetric_halved)(g, width, rows, hg + oy * half_width);
                NAME(dmetric_halved)(bl, width, rows, hb + oy * half_width);
            }
        }
    }
}

static inline unsigned char byte(float value) {
    const float clamped = value < 0 ? 0 : (value > 255 ? 255 : value);
    return (unsigned char)(clamped + 0.5f);
}

/// Bilinear weights between block centres (half a pixel inside each 2×2 block): the first
/// block, the next and the weight of the next, for each of `extent` positions.
static void chroma_taps(long extent, long blocks, long *first, long *next, float *weight) {
    for (long x = 0; x < extent; x++) {
        float f = ((float)x - 0.5f) / 2;
        if (f > (float)(blocks - 1)) f = (float)(blocks - 1);
        if (f < 0) f = 0;
        first[x] = (long)f;
        next[x] = first[x] + 1 < blocks ? first[x] + 1 : blocks - 1;
        weight[x] = f - (float)first[x];
    }
}

int NAME(dmetric_chroma_halved)(const unsigned char *in, long w, long h, int bands, unsigned char *out) {
    const long cw = (w + 1) / 2, ch = (h + 1) / 2;
    float *luma = malloc(sizeof(float) * w * h), *cb = calloc(cw * ch, sizeof(float)), *cr = calloc(cw * ch, sizeof(float));
    long *columns = malloc(sizeof(long) * 2 * (w + h));
    float *weights = malloc(sizeof(float) * (w + h));
    if (!luma || !cb || !cr || !columns || !weights) {
        free(luma), free(cb), free(cr), free(columns), free(weights);
        return -1;
    }
    long *x0s = columns, *x1s = columns + w, *y0s = columns + 2 * w, *y1s = columns + 2 * w + h;
    float *axs = weights, *ays = weights + w;
    chroma_taps(w, cw, x0s, x1s, axs);
    chroma_taps(h, ch, y0s, y1s, ays);
    for (long y = 0; y < h; y++) {
        const unsigned char *line = in + y * w * bands;
        float *cbRow = cb + (y / 2) * cw, *crRow = cr + (y / 2) * cw;
        for (long x = 0; x < w; x++) {
            const float r = line[x * bands], g = line[x * bands + 1], b = line[x * bands + 2];
            luma[y * w + x] = 0.299f * r + 0.587f * g + 0.114f * b;
            cbRow[x / 2] += -0.168736f * r - 0.331264f * g + 0.5f * b;
            crRow[x / 2] += 0.5f * r - 0.418688f * g - 0.081312f * b;
        }
    }
    for (long by = 0; by < ch; by++) {
        const float rows = by * 2 + 1 < h ? 2 : 1;
        for (long bx = 0; bx < cw; bx++) {
            const float count = rows * (bx * 2 + 1 < w ? 2 : 1);
            cb[by * cw + bx] /= count;
            cr[by * cw + bx] /= count;
        }
    }
    for (long y = 0; y < h; y++) {
        const long top = y0s[y] * cw, bottom = y1s[y] * cw;
        const float ay = ays[y];
        for (long x = 0; x < w; x++) {
            const long x0 = x0s[x], x1 = x1s[x];
            const float ax = axs[x];
            const float u = (cb[top + x0] * (1 - ax) + cb[top + x1] * ax) * (1 - ay) + (cb[bottom + x0] * (1 - ax) + cb[bottom + x1] * ax) * ay;
            const float v = (cr[top + x0] * (1 - ax) + cr[top + x1] * ax) * (1 - ay) + (cr[bottom + x0] * (1 - ax) + cr[bottom + x1] * ax) * ay;
            const float l = luma[y * w + x];
            unsigned char *o = out + (y * w + x) * bands;
            o[0] = byte(l + 1.402f * v);
            o[1] = byte(l - 0.344136f * u - 0.714136f * v);
            o[2] = byte(l + 1.772f * u);
        }
    }
    free(luma), free(cb), free(cr), free(columns), free(weights);
    return 0;
}

int NAME(dmetric_block_statistics)(const unsigned char *pixels, long w, long h, int bands, long side, double *means,
                                   double *activity) {
    const long across = w / side, down = h / side, used = across * side;
    if (across < 1 || down < 1 || side < 2) return 0;
    // Two luma rows, then per column the block row's luma sum and its absolute differences with
    // the left neighbour and the row above: contiguous loops the compiler vectorises, summed
    // per block at the end of each block row (integers: the same sums in any order).
    int *rows = malloc(sizeof(int) * 5 * used);
    if (!rows) return -1;
    int *column_sums = rows + 2 * used, *across_diffs = rows + 3 * used, *down_diffs = rows + 4 * used;
    const double pairs = (double)(2 * side * (side - 1));
    for (long by = 0; by < down; by++) {
        memset(column_sums, 0, sizeof(int) * 3 * used);
        for (long y = by * side; y < (by + 1) * side; y++) {
            int *row = rows + (y & 1) * used;
            const int *previous = rows + ((y + 1) & 1) * used;
            const unsigned char *line = pixels + y * w * bands;
            // Luma as integers: (54 R + 183 G + 19 B) / 256, BT.709's weights.
            if (bands == 3) {
                for (long x = 0; x < used; x++) row[x] = (54 * line[3 * x] + 183 * line[3 * x + 1] + 19 * line[3 * x + 2]) >> 8;
            } else if (bands >= 3) {
                for (long x = 0; x < used; x++) {
                    row[x] = (54 * line[x * bands] + 183 * line[x * bands + 1] + 19 * line[x * bands + 2]) >> 8;
                }
            } else if (bands == 1) {
                for (long x = 0; x < used; x++) row[x] = line[x];
            } else {
                for (long x = 0; x < used; x++) row[x] = line[x * bands];
            }
            for (long x = 0; x < used; x++) column_sums[x] += row[x];
            for (long x = 1; x < used; x++) across_diffs[x] += abs(row[x] - row[x - 1]);
            if (y != by * side) {
                for (long x = 0; x < used; x++) down_diffs[x] += abs(row[x] - previous[x]);
            }
        }
        for (long bx = 0; bx < across; bx++) {
            const long x0 = bx * side;
            long sum = 0, diff = 0;
            for (long x = x0; x < x0 + side; x++) sum += column_sums[x], diff += down_diffs[x];
            // The difference across a block's left edge belongs to no block.
            for (long x = x0 + 1; x < x0 + side; x++) diff += across_diffs[x];
            means[by * across + bx] = (double)sum / (double)(side * side);
            activity[by * across + bx] = (double)diff / pairs;
        }
    }
    free(rows);
    return 0;
}
