#ifndef CMETRICKERNELS_H
#define CMETRICKERNELS_H

// The inner loops of SSIMULACRA 2 (DeriveLanguage's Pixels/Ssimulacra2.swift keeps the method: scales,
// which terms count, weights, the final mapping). No C library behind them: they are in C so
// the compiler can build each three times, for x86-64-v4 (AVX-512, sixteen floats a register:
// Intel servers since 2017, AMD since Zen 4), x86-64-v3 (AVX2 and FMA, every x86 server CPU
// since about 2015) and any x86-64, and each call runs the copy this CPU has. Swift compiles
// for the baseline only, and q_auto scores every candidate with these loops.
//
// Planes are rows of floats, `width` apart. `taps` is the Gaussian's centre tap then the taps
// 1 to 5 pixels away (σ 1.5, radius 5).

/// A plane less `shift` blurred into `mean` (and, with `squares`, its square into `square`): 11
/// taps, mirrored at the top and bottom, zero beyond each row's ends; the column pass first,
/// then the row pass. `scratch` holds two rows of `stride` floats (at least width + 10).
void dmetric_blurred(const float *a, float shift, int squares, long width, long height, const float taps[6], float *scratch,
                     long stride, float *mean, float *square);

/// The sums of one channel at one scale, in the order [ssim, ssim⁴, ringing, ringing⁴,
/// blurring, blurring⁴]: `p1` and `p2` the reference's and candidate's planes, `mu1` and
/// `s11` the reference's blurred plane and blurred square less the same `shift`, as
/// dmetric_blurred makes them (`s11` null: no SSIM terms). Both planes are read less `shift`,
/// a value near the middle of the channel's range, which changes no term but for rounding: the
/// variances come from small numbers instead of the difference of two large ones. The
/// candidate's blurred plane, square and product with the reference are made a row at a time
/// as they are read (as dmetric_blurred makes a blur: the row's column passes into `passes`,
/// five rows of `stride` floats, at least width + 10, then their row passes into `columns`, six
/// rows of `stride`). A register of pixels at a time in float, added into double every 1,024 of a row.
void dmetric_sums(const float *p1, const float *p2, float shift, const float *mu1, const float *s11, long width, long height,
                  const float taps[6], long stride, float *passes, float *columns, double sums[6]);

/// The sums of dmetric_sums for one score alone, with no prepared reference: the reference's
/// blurred plane (and with `ssim` its blurred square) are made row by row beside the
/// candidate's, in the same order, so the sums are those of dmetric_blurred and dmetric_sums
/// to the bit, without their two whole planes.
void dmetric_pair_sums(const float *p1, const float *p2, float shift, int ssim, long width, long height, const float taps[6],
                       long stride, float *passes, float *columns, double sums[6]);

/// libjxl's opsin transform shifted positive as SSIMULACRA 2 does, from linear RGB planes of
/// `count` floats: any of `x`, `y`, `b` may be null.
void dmetric_xyb(const float *r, const float *g, const float *bl, long count, float *x, float *y, float *b);

/// 8-bit sRGB (or grey) pixels to linear planes through `lut`: `g` and `b` are left alone for a
/// grey image (`bands` below 3), whose planes are all `r`.
void dmetric_linear(const unsigned char *pixels, long count, int bands, const float lut[256], float *r, float *g, float *b);

/// A plane's 2×2 box average into `dst` ((width + 1) / 2 by (height + 1) / 2); an odd last
/// column or row averages the pixels it has.
void dmetric_halved(const float *src, long width, long height, float *dst);

/// The first scale from 8-bit pixels, two rows at a time, without storing its linear planes:
/// the rows of halved rows `first_row` to `end_row` (exclusive) go to linear light in
/// `scratch` (six rows of `width`), to XYB in those of `x`, `y`, `b` given (as dmetric_xyb), and
/// halved into `hr`, `hg`, `hb` (as dmetric_halved; `hr` null: not halved; grey: `hr` only).
/// The values are dmetric_linear's, dmetric_xyb's and dmetric_halved's to the bit.
void dmetric_first_scale(const unsigned char *pixels, long width, long height, int bands, const float lut[256], long first_row,
                         long end_row, float *x, float *y, float *b, float *hr, float *hg, float *hb, float *scratch);

/// RGB pixels (3 or more bands, only the first three read and written) with nothing lost but
/// half their chroma resolution, as JPEG's 4:2:0 keeps it: BT.601 full-range YCbCr, Cb and Cr
/// averaged over 2×2 blocks and restored bilinearly between the blocks' centres, as decoders
/// do. `out` starts as a copy of `in` (its other bands are left as they are). -1 when out of
/// memory.
int dmetric_chroma_halved(const unsigned char *in, long width, long height, int bands, unsigned char *out);

/// For q_auto's choice of sample tiles (DeriveCore's SampleTiles): per `side`×`side` block of
/// 8-bit pixels (whole blocks only, `width / side` to a row, row by row), the mean luma
/// ((54 R + 183 G + 19 B) / 256, or the grey value) into `means` and the mean absolute
/// difference of neighbouring luma values inside the block, across and down, into `activity`.
/// -1 when out of memory.
int dmetric_block_statistics(const unsigned char *pixels, long width, long height, int bands, long side, double *means,
                             double *activity);

/// Which copies run: 2 the x86-64-v4 ones, 1 the x86-64-v3 ones, 0 the baseline's. `wanted` 0,
/// 1 or 2 asks for one (the best this CPU has at most), -1 only asks: for tests that compare
/// the copies, and for saying which one a benchmark measured.
int dmetric_fast_copy(int wanted);

#endif
